"""Execute -> write (`bench/compass.py`): a real executor process (`tests.executor.harness`),
the campus lab in this process; from sending Execute to the write's time in the lab's log, with
no injected latency and with `LATENCY_S` on every lab call, each beside the lab's own time for
the calls on that path (`direct_path`); and opening an MCP session with the sandbox sign-in
(part of every Execute), beside a call on the open session."""

from __future__ import annotations

import time
from pathlib import Path

from bench.compass_common import IDLE, LATENCY_S, Row, direct_path, interleaved, median, written_at
from services.lab.server import LabHandle, run_lab
from shared.epiphan.mcp_session import McpConnection
from tests.executor.harness import Harness


async def executed(harness: Harness, latency_s: float) -> float:
    """Seconds from sending Execute to the write in the lab's log, for one fresh approval."""
    harness.lab.reset()
    _, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}
    )
    if latency_s:
        harness.lab.set_fault("*", "latency", seconds=latency_s)
    sent = time.time()
    report = await harness.execute(approval_id)
    if report.outcome != "ok":
        raise SystemExit(f"unexpected outcome: {report}")
    harness.lab.clear_faults()
    return written_at(harness.lab) - sent


async def session_open(lab: LabHandle) -> tuple[float, float]:
    """Seconds of the first call of a fresh session with the sandbox sign-in (opening it
    included) and of the same call again on that open session (the reference)."""
    async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token) as connection:
        start = time.perf_counter()
        await connection.call("get_devices_in_my_team")
        first = time.perf_counter()
        await connection.call("get_devices_in_my_team")
        return first - start, time.perf_counter() - first


async def measure(home: Path, *, runs: int) -> list[Row]:
    async with run_lab("campus") as lab:
        harness = await Harness.start(lab, home)
        try:
            async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token) as connection:
                await executed(harness, 0)  # warm-up: policy cache, imports, sessions
                await direct_path(lab, connection, 0)
                plain, plain_ref = await interleaved(
                    runs, lambda: executed(harness, 0), lambda: direct_path(lab, connection, 0)
                )
                slow, slow_ref = await interleaved(
                    runs,
                    lambda: executed(harness, LATENCY_S),
                    lambda: direct_path(lab, connection, LATENCY_S),
                )
        finally:
            await harness.close()
        lab.reset()
        opened = [await session_open(lab) for _ in range(runs)]
    return [
        Row("Execute -> write, lab 0 ms", median(plain) * 1e3, median(plain_ref) * 1e3, "ms", "+<= 10 ms"),
        Row("Execute -> write, lab 50 ms/call", median(slow) * 1e3, median(slow_ref) * 1e3, "ms", "<= 1.1x"),
        Row(
            "MCP session open + call (sandbox)",
            median([a for a, _ in opened]) * 1e3,
            median([b for _, b in opened]) * 1e3,
            "ms",
            "-",
        ),
    ]
