"""Asks from Slack: from the envelope sent on the Socket Mode websocket to the answer posted in
its thread, with a zero-latency scripted model (and with the keyword answer), on the lab.

Run: ``/work/venv/bin/python bench/slack_ask.py [--runs N]``.

Everything is real but Slack and Epiphan, which the lab plays in this process: the Slack SDK's
Socket Mode client (aiohttp) and Web API client, `SlackAsks` with a real watch store (the
dedupe), the read-only `Assistant` on the real Anthropic SDK against the lab's Messages-API
stand-in (it answers at once), the guarded read client over MCP. What is timed (median of N
asks, after one warm-up), each from just before ``POST /_lab/slack/ask``:

- ``ack``: until the lab got the envelope's ack (as ``/_lab/slack/ask`` reports it);
- ``answer``: until the answer is in the lab's notices (after "Looking…", ``users.info`` for the
  locale, the ask, the audit row, ``chat.postMessage``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from assistant_turn import Records, on_the_lab  # beside this file: run it as a file, as the README says
from slack_sdk.web.async_client import AsyncWebClient

from services.assistant.budget import Budget
from services.assistant.service import Assistant
from services.assistant.slack import SlackApi, SlackAsks, SlackOptions, SocketModeListener
from services.assistant.slack_rules import RateLimit
from services.assistant.watch.store import WatchStore
from services.lab.model_standin import ModelRequest, Reply, ToolUse, say
from services.lab.notices import LAB_SLACK_BOT, slack_base_url
from services.lab.server import LabHandle
from services.lab.slack_board import LAB_ASK_CHANNEL, LAB_SLACK_APP, LAB_SLACK_TEAM
from shared.config import Secret

START = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)


def script(request: ModelRequest) -> Reply:
    """One read of the team's devices, then a short answer: a zero-latency model."""
    if not request.tool_results():
        return Reply((ToolUse("get_devices_in_my_team", {}),))
    return say("ENG 210 and LIB Room 2 are offline.")


async def one_ask(lab: LabHandle, session: aiohttp.ClientSession, n: int) -> tuple[float, float]:
    def answers(notices: list[dict[str, Any]]) -> int:
        return sum(1 for x in notices if x.get("thread") and x["text"] not in ("Looking…",))

    before = answers(lab.lab.notices.notices)
    started = time.perf_counter()
    body = {"user": "U0LABOPS", "channel": LAB_ASK_CHANNEL, "text": f"what is offline? ({n})"}
    async with session.post(f"{lab.url}/_lab/slack/ask", json=body) as response:
        sent = await response.json()
    assert sent["acked"], sent
    ack = time.perf_counter() - started
    await lab.notices_until(lambda notices: answers(notices) > before, 30)
    return ack, time.perf_counter() - started


async def measure(lab: LabHandle, assistant: Assistant, runs: int, store: WatchStore) -> tuple[float, float]:
    client = AsyncWebClient(token=LAB_SLACK_BOT, base_url=slack_base_url(lab.url), retry_handlers=[])
    asks = SlackAsks(
        assistant=assistant,
        api=SlackApi(client),
        seen=store,
        sink=Records(),  # only `record` is called: nothing is proposed
        options=SlackOptions(
            team_id=LAB_SLACK_TEAM,
            allowed_users=("U0LABOPS",),
            ask_channels=(LAB_ASK_CHANNEL,),
            api_url=slack_base_url(lab.url),
        ),
        rate=RateLimit(per_window=10_000),
    )
    listener = SocketModeListener(
        app_token=Secret(LAB_SLACK_APP), web_client=client, asks=asks, watchdog_seconds=30
    )
    task = asyncio.create_task(listener.run())
    try:
        await lab.slack_until(lambda board: board.live() is not None, 10)
        async with aiohttp.ClientSession() as session:
            await one_ask(lab, session, 0)  # warm-up
            samples = [await one_ask(lab, session, n) for n in range(1, runs + 1)]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return statistics.median(a for a, _ in samples), statistics.median(t for _, t in samples)


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with on_the_lab(script) as (lab, client, reader, policy, tool_policy):
            store = await WatchStore.connect(Path(folder) / "watch.db")
            results = {}
            try:
                for label, model in (("zero-latency model", client), ("keyword answer", None)):
                    assistant = Assistant(
                        reader=reader,
                        sink=Records(),
                        policy=policy,
                        tool_policy=tool_policy,
                        model_client=model,
                        model="standin-model",
                        fence_configured=False,  # read-only, as asks from Slack are
                        budget=Budget(),
                        now=lambda: lab.now,
                    )
                    results[label] = await measure(lab, assistant, runs, store)
            finally:
                await store.close()
    print(
        f"median of {runs} asks from Slack, milliseconds, from the envelope sent (lab's Socket Mode stand-in)"
    )
    print(f"{'':24}{'ack':>10}{'answer':>10}")
    for label, (ack, answer) in results.items():
        print(f"{label:24}{ack * 1000:10.1f}{answer * 1000:10.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
