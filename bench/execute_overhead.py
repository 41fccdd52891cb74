"""Execute overhead: time from the Execute message to the write reaching the lab, minus the
lab's read latencies, measured in one run against a real executor process.

Run: ``.venv/bin/python bench/execute_overhead.py [--runs N] [--read-latency-ms MS] [--json]``
from a checkout (the editable install imports that checkout; ``tests`` comes from the folder).
With ``--json`` it prints one JSON object of the samples (seconds) instead of the table:
`bench/binding_cost.py` runs it in two checkouts side by side.

Each run proposes and approves ``batch_recording start`` on a sandbox channel (through the
real socket and the store), then times one Execute: from just before the request is sent to
the write-log timestamp of the write in the lab (the lab's clock is the wall clock). A
``latency`` fault of MS milliseconds sits on each read the executor makes before the write:
the device list, then the recorder status and the events in parallel, so two rounds (2 × MS)
are on the critical path and are subtracted. The same is measured with no injected latency;
the two overheads should agree. What remains is the executor's own work: the socket, the
store (seal check, claim, kill switch), the policy check, opening the MCP session with the
sandbox sign-in, the lab's own (unfaulted) service time, and the checks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from services.lab.server import LabHandle, run_lab
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN, EpiphanReadClient
from tests.executor.harness import IDLE, Harness

READS_BEFORE_THE_WRITE = (
    "get_devices_in_my_team",
    "get_recorder_status_for_devices",
    "get_current_or_next_cms_events_for_devices",
)
CRITICAL_ROUNDS = 2
"""Sequential read rounds before the write: the device list, then recorder + events together."""


async def one_run(harness: Harness, latency_ms: float) -> float:
    """Seconds from sending Execute to the write in the lab's log, for one fresh approval."""
    harness.lab.reset()
    _, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}
    )
    if latency_ms:
        for tool in READS_BEFORE_THE_WRITE:
            harness.lab.set_fault(tool, "latency", seconds=latency_ms / 1000)
    sent = time.time()
    report = await harness.execute(approval_id)
    if report.outcome != "ok":
        raise SystemExit(f"unexpected outcome: {report}")
    (write,) = harness.lab.writes()
    return datetime.fromisoformat(write["at"].replace("Z", "+00:00")).timestamp() - sent


async def session_open(lab: LabHandle, runs: int) -> list[float]:
    """Seconds to open an MCP session with the sandbox sign-in (the first call minus a second
    identical call on the open session), measured in this process."""
    samples = []
    for _ in range(runs):
        async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token) as connection:
            client = EpiphanReadClient(connection, READ_TOOLS_OF_EPIPHAN)
            start = time.perf_counter()
            await client.call("get_devices_in_my_team")
            first = time.perf_counter()
            await client.call("get_devices_in_my_team")
            samples.append((first - start) - (time.perf_counter() - first))
    return samples


def summary(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return f"median {statistics.median(ms):7.1f}  p90 {p90:7.1f}  min {ms[0]:7.1f}  max {ms[-1]:7.1f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--read-latency-ms", type=float, default=50.0)
    parser.add_argument("--json", action="store_true", help="print the samples as one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        async with run_lab("campus") as lab:
            harness = await Harness.start(lab, Path(home) / "home")
            try:
                await one_run(harness, 0)  # warm the policy cache and the imports
                plain = [await one_run(harness, 0) for _ in range(args.runs)]
                faulted = [await one_run(harness, args.read_latency_ms) for _ in range(args.runs)]
                lab.reset()
                opening = await session_open(lab, args.runs)
            finally:
                await harness.close()
    injected = CRITICAL_ROUNDS * args.read_latency_ms / 1000
    if args.json:
        print(json.dumps({"plain": plain, "faulted": faulted, "injected": injected, "opening": opening}))
        return
    print(f"Execute -> write reaches the lab, {args.runs} runs each, in ms")
    print(f"  no injected latency           {summary(plain)}")
    print(f"  {args.read_latency_ms:.0f} ms on each read (total) {summary(faulted)}")
    print(f"  minus {injected * 1000:.0f} ms of read latency   {summary([s - injected for s in faulted])}")
    print(f"  of which opening the MCP session {summary(opening)}")
    print("  (the 'minus' line is the Execute overhead; the first line should be close to it)")


if __name__ == "__main__":
    asyncio.run(main())
