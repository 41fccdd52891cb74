"""Assistant turn overhead: a question answered with a zero-latency scripted model, on a lab
with no injected latency and with MS (default 50) ms per read, measured in one run.

Run: ``/work/venv/bin/python bench/assistant_turn.py [--runs N] [--latency-ms MS]``.

What is timed (median of N runs each, after one warm-up):

- ``one read``: one guarded read (``get_device_info``) through `EpiphanReadClient`, direct;
- ``turn, no tools``: `Assistant.ask` where the scripted model answers at once (one model call
  through the real SDK and the stand-in over loopback HTTP, streamed);
- ``turn, 8 reads``: the model asks for 8 reads in one batch, then answers (two model calls);
  the pipeline runs at most four reads at once, so the lab's latency is paid in two rounds.

- ``8 reads (direct)``: the same 8 reads without the assistant, four at a time: what the lab
  itself costs (it runs in this process, so its serving time is on the clock).

``overhead`` is the 8-read turn minus the 8 direct reads: two model calls through the SDK and
the stand-in, the pipeline (pre-check, data blocks, state machine) and the answer. With the
lab's latency on, the 8-read turn should grow by about 2 × MS, not 8 × MS (nor 1 × MS).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import anthropic

from services.assistant.budget import Budget
from services.assistant.service import Assistant
from services.lab.model_standin import ModelRequest, Reply, ToolUse, run_model_standin, say
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.policy.loader import Policy, ToolPolicy, load_policies
from shared.wire.approval import Count, RecordAsk, RecordRefusal

START = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)
DEVICES = [f"1901234010{n}" for n in range(1, 8)] + ["19012340201"]
EIGHT_READS = Reply(tuple(ToolUse("get_device_info", {"device_id": d}) for d in DEVICES))


class Records:
    """approval.sock for a benchmark that proposes nothing: the ``ask`` and refusal rows the
    assistant records are kept in memory, answered as approval.sock answers them."""

    def __init__(self) -> None:
        self.rows: list[RecordAsk | RecordRefusal] = []

    async def call(
        self, request: RecordAsk | RecordRefusal, *, timeout_seconds: float | None = None
    ) -> Count:
        self.rows.append(request)
        return Count(count=1)


def script(request: ModelRequest) -> Reply:
    """Eight reads when the question says so, then (or at once) a short answer."""
    if "eight" in request.question() and not request.tool_results():
        return EIGHT_READS
    return say("done")


async def median_seconds(runs: int, action: Callable[[], Awaitable[object]]) -> float:
    await action()  # warm-up: sessions opened, caches filled
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def eight_direct(reader: EpiphanReadClient) -> None:
    """The same 8 reads without the assistant, at most four at once (as the pipeline does)."""
    gate = asyncio.Semaphore(4)

    async def one(device_id: str) -> object:
        async with gate:
            return await reader.call("get_device_info", {"device_id": device_id})

    await asyncio.gather(*(one(d) for d in DEVICES))


async def measure(assistant: Assistant, reader: EpiphanReadClient, runs: int) -> dict[str, float]:
    one = await median_seconds(runs, lambda: reader.call("get_device_info", {"device_id": DEVICES[0]}))
    direct = await median_seconds(runs, lambda: eight_direct(reader))
    bare = await median_seconds(runs, lambda: assistant.ask("hello"))
    eight = await median_seconds(runs, lambda: assistant.ask("eight reads please"))
    return {"one": one, "direct": direct, "bare": bare, "eight": eight, "overhead": eight - direct}


@contextlib.asynccontextmanager
async def on_the_lab(
    answer: Callable[[ModelRequest], Reply],
) -> AsyncIterator[tuple[LabHandle, anthropic.AsyncAnthropic, EpiphanReadClient, Policy, ToolPolicy]]:
    """The campus lab on a frozen clock, the real SDK on a stand-in model answering with
    `answer` at once, a guarded read client on the normal team, and the shipped policies."""
    policy, tool_policy = load_policies(REPO_POLICY_DIR)
    async with (
        run_lab("campus", clock=LabClock(START, frozen=True)) as lab,
        run_model_standin(answer) as standin,
        anthropic.AsyncAnthropic(api_key=standin.key, base_url=standin.base_url, max_retries=0) as client,
        EpiphanReadClient(
            McpConnection(lab.mcp_url, lab.teams["normal"].token), tool_policy.model_read_tools
        ) as reader,
    ):
        yield lab, client, reader, policy, tool_policy


async def main(runs: int, latency_ms: float) -> None:
    async with on_the_lab(script) as (lab, client, reader, policy, tool_policy):
        assistant = Assistant(
            reader=reader,
            sink=Records(),
            policy=policy,
            tool_policy=tool_policy,
            model_client=client,
            model="standin-model",
            fence_configured=True,
            budget=Budget(),
            now=lambda: lab.now,
        )
        results = {}
        for label, seconds in (("lab 0 ms", 0.0), (f"lab {latency_ms:g} ms", latency_ms / 1000)):
            lab.clear_faults()
            if seconds:
                lab.set_fault("*", "latency", seconds=seconds)
            results[label] = await measure(assistant, reader, runs)
    rows = [
        ("one read (direct)", "one"),
        ("8 reads (direct, 4 at a time)", "direct"),
        ("turn, no tools (1 model call)", "bare"),
        ("turn, 8 reads (2 model calls)", "eight"),
        ("overhead: 8-read turn - 8 direct reads", "overhead"),
    ]
    labels = list(results)
    print(f"median of {runs} runs, milliseconds; zero-latency scripted model over the real SDK")
    print(f"{'':40}" + "".join(f"{label:>14}" for label in labels))
    for title, key in rows:
        print(f"{title:40}" + "".join(f"{results[label][key] * 1000:14.1f}" for label in labels))
    grown = (results[labels[1]]["eight"] - results[labels[0]]["eight"]) * 1000
    print(
        f"\n8-read turn grew by {grown:.1f} ms with {latency_ms:g} ms per read "
        f"(two rounds of four = {2 * latency_ms:g} ms; eight in a row would be {8 * latency_ms:g} ms)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.latency_ms))
