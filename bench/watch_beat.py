"""The watch's heartbeat at 30, 500 and 2,000 devices: its time and memory, side by side with
the raw MCP reads it makes.

Run: ``.venv/bin/python bench/watch_beat.py [--sizes 30,500,2000] [--rounds 5] [--json]``.

For each size the lab runs as its own process (``python -m services.lab --devices N``: a
generated fleet, the same generator for every size), so its work is not counted here. Three
fresh processes then measure against that lab:

- **time**: the three below, round after round in turn (so a busy machine slows each alike),
  medians of ``--rounds``:
  - *raw*: the reads a beat makes, through the MCP SDK's own client session with nothing of
    Fleetwatch around it (no guard, no redaction, no parsing): the device list, then the
    recorder status, the system status and the current/next events in chunks of 100 IDs, four
    in flight, like the guarded read client;
  - *read*: the guarded read client's snapshot (the same calls, guarded, redacted, parsed);
  - *beat*: `services.assistant.watch.heartbeat.Watch.beat`: that read, the attention rules,
    the diff against a real watch store, readiness, the digest (queued to a destination that
    discards it). The first beat (every room and finding new: the most store writes) is
    timed apart.
- **memory**, raw and beat each in a process of its own: the peak resident set (``VmHWM``,
  imports included) and its growth over the resident set once everything is imported.

Ratios are what to compare between machines; absolute numbers are noisy on a shared box.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

CHUNK = 100
PARALLEL = 4
INTERVAL_SECONDS = 180
PER_DEVICE = (
    "get_recorder_status_for_devices",
    "get_system_status_for_devices",
    "get_current_or_next_cms_events_for_devices",
)


def memory_mb() -> dict[str, float]:
    """This process's resident set now and at its peak, in MB (``/proc/self/status``)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss_mb": fields["VmRSS"], "peak_mb": fields["VmHWM"]}


async def timed(step: Any) -> float:
    start = time.perf_counter()
    await step()
    return (time.perf_counter() - start) * 1000


@contextlib.asynccontextmanager
async def raw_reads(mcp_url: str, token: str) -> AsyncIterator[Any]:
    """A coroutine function making one round of the beat's reads through the MCP SDK alone."""
    import httpx2
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        result = await session.send_request(request, types.CallToolResult)
        return json.loads(result.content[0].text)

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(mcp_url, http_client=http, max_sse_event_size=64 * 1024 * 1024) as (
            read,
            write,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await call(session, "get_devices_in_my_team", {})
        limit = asyncio.Semaphore(PARALLEL)

        async def one(name: str, chunk: list[str], until: str) -> Any:
            arguments: dict[str, Any] = {"device_ids": chunk}
            if name.endswith("events_for_devices"):
                arguments["until"] = until
            async with limit:
                return await call(session, name, arguments)

        async def round_of_reads() -> int:
            devices = await call(session, "get_devices_in_my_team", {})
            ids = [d["Id"] for d in devices["devices"]]
            until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
            chunks = [(name, ids[i : i + CHUNK]) for name in PER_DEVICE for i in range(0, len(ids), CHUNK)]
            await asyncio.gather(*(one(name, chunk, until) for name, chunk in chunks))
            return 1 + len(chunks)

        yield round_of_reads


class Discard:
    """A destination that throws every post away (posting is not what is measured)."""

    name = "console"
    to = ""
    """Where in it (`services.assistant.watch.destinations.Destination.to`): nowhere."""

    async def send(self, post: Any) -> None:
        return None


@contextlib.asynccontextmanager
async def watch_on(mcp_url: str, token: str) -> AsyncIterator[Any]:
    """A `Watch` on the lab with a real watch store in a temporary folder."""
    from services.assistant.watch.destinations import Outbox
    from services.assistant.watch.heartbeat import Watch, WatchOptions
    from services.assistant.watch.store import WatchStore
    from shared.config import REPO_POLICY_DIR
    from shared.epiphan.mcp_session import McpConnection
    from shared.epiphan.read_client import EpiphanReadClient
    from shared.policy.loader import load_policies

    policy, tools = load_policies(REPO_POLICY_DIR)
    with tempfile.TemporaryDirectory() as folder:
        store = await WatchStore.connect(Path(folder) / "watch.db")
        client = EpiphanReadClient(McpConnection(mcp_url, token), tools.model_read_tools)
        try:
            async with client, Outbox([Discard()]) as outbox:
                await client.call("get_devices_in_my_team")  # open the session outside the timing
                watch = Watch(
                    reader=client,
                    store=store,
                    outbox=outbox,
                    proposals=None,
                    policy=policy,
                    options=WatchOptions(),
                )
                await watch.load()
                yield watch
        finally:
            await store.close()


async def measure_time(mcp_url: str, token: str, rounds: int) -> dict[str, Any]:
    async with raw_reads(mcp_url, token) as raw, watch_on(mcp_url, token) as watch:
        calls = await raw()
        first_ms = await timed(watch.beat)
        samples: dict[str, list[float]] = {"raw_ms": [], "read_ms": [], "beat_ms": []}
        for _ in range(rounds):
            samples["raw_ms"].append(await timed(raw))
            samples["read_ms"].append(await timed(watch.reader.snapshot))
            samples["beat_ms"].append(await timed(watch.beat))
        findings = len(watch.last.findings) if watch.last else 0
    return {"calls": calls, "first_ms": first_ms, "findings": findings} | {
        k: statistics.median(v) for k, v in samples.items()
    }


def imports(mode: str) -> None:
    """Load what `mode` uses, so the growth measured is the work's, not the imports'."""
    names = ["httpx2", "mcp_types", "mcp.client.session", "mcp.client.streamable_http"]
    if mode == "beat":
        names += ["services.assistant.watch.heartbeat", "services.assistant.watch.store", "shared.epiphan"]
    for name in names:
        importlib.import_module(name)


async def measure_memory(mode: str, mcp_url: str, token: str, rounds: int) -> dict[str, Any]:
    imports(mode)
    before = memory_mb()["rss_mb"]
    if mode == "raw":
        async with raw_reads(mcp_url, token) as raw:
            for _ in range(rounds):
                await raw()
    else:
        async with watch_on(mcp_url, token) as watch:
            for _ in range(rounds):
                await watch.beat()
    peak = memory_mb()["peak_mb"]
    return {f"{mode}_peak_mb": peak, f"{mode}_growth_mb": peak - before}


async def child(mode: str, mcp_url: str, token: str, rounds: int) -> None:
    if mode == "time":
        result = await measure_time(mcp_url, token, rounds)
    else:
        result = await measure_memory(mode, mcp_url, token, rounds)
    print(json.dumps(result))


async def run_child(mode: str, mcp_url: str, token: str, rounds: int) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, __file__, "--child", mode, mcp_url, token, "--rounds", str(rounds)),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"the {mode} measurement failed")
    return json.loads(out.decode().strip().splitlines()[-1])


async def one_size(devices: int, rounds: int) -> dict[str, Any]:
    import httpx2

    lab = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "services.lab", "--devices", str(devices), "--port", "0"),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert lab.stdout is not None
        async with asyncio.timeout(120):
            line = (await lab.stdout.readline()).decode()  # "Lab (...) listening on URL  MCP: URL/mcp"
        url = line.split(" listening on ", 1)[1].split()[0]
        async with httpx2.AsyncClient() as http:
            state = (await http.get(f"{url}/_lab/state")).json()
        token = next(t["token"] for t in state["teams"] if t["name"] == "normal")
        row: dict[str, Any] = {"devices": devices}
        for mode in ("time", "raw", "beat"):
            row |= await run_child(mode, f"{url}/mcp", token, rounds)
    finally:
        lab.terminate()
        await lab.wait()
    return row


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'devices':>8}{'calls':>7}{'raw ms':>8}{'read ms':>9}{'beat ms':>9}{'first ms':>10}"
        f"{'read/raw':>9}{'beat/raw':>9}{'of 180 s':>9}{'raw MB':>8}{'beat MB':>9}{'+raw MB':>9}{'+beat MB':>10}"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['devices']:>8}{r['calls']:>7}{r['raw_ms']:>8.0f}{r['read_ms']:>9.0f}{r['beat_ms']:>9.0f}"
            f"{r['first_ms']:>10.0f}{r['read_ms'] / r['raw_ms']:>9.2f}{r['beat_ms'] / r['raw_ms']:>9.2f}"
            f"{100 * r['beat_ms'] / (INTERVAL_SECONDS * 1000):>8.2f}%{r['raw_peak_mb']:>8.0f}{r['beat_peak_mb']:>9.0f}"
            f"{r['raw_growth_mb']:>9.1f}{r['beat_growth_mb']:>10.1f}"
        )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,500,2000", help="fleet sizes (default: 30,500,2000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per measurement and size (default: 5)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "MCP_URL", "TOKEN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        await child(args.child[0], args.child[1], args.child[2], args.rounds)
        return
    rows = [await one_size(int(size), args.rounds) for size in args.sizes.split(",")]
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    asyncio.run(main())
