"""The card (`bench/compass.py`): ``GET /`` on the real approval page with one proposal
pending (approval_web and the executor as processes, the campus lab in this process), every
fact read afresh (the page's Inspect), with `latency_s` on every lab call; beside it the lab's
own time for the reads a card needs (`card_reads`: the device list, then the tool list, recorder
status and events together) made directly over an open MCP session."""

from __future__ import annotations

import time
from pathlib import Path

from bench.compass_common import IDLE, Row, card_reads, interleaved, median
from shared.epiphan.mcp_session import McpConnection
from tests.e2e.stack import running_stack, signed_in


async def measure(home: Path, *, runs: int, latency_s: float) -> Row:
    async with running_stack(home) as stack, signed_in(stack.url, stack.secret) as (browser, _):
        await stack.propose("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})

        async def card() -> float:
            stack.lab.set_fault("*", "latency", seconds=latency_s)
            started = time.perf_counter()
            async with browser.get("/") as response:
                html = await response.text()
            seconds = time.perf_counter() - started
            stack.lab.clear_faults()
            if response.status != 200 or 'class="approve"' not in html:
                raise SystemExit(f"GET / did not show an approvable card ({response.status})")
            return seconds

        async with McpConnection(stack.lab.mcp_url, stack.lab.teams["sandbox"].token) as connection:
            await card()  # warm-up: the executor's session, the page's templates
            await card_reads(stack.lab, connection, 0)  # open the session
            ours, ref = await interleaved(runs, card, lambda: card_reads(stack.lab, connection, latency_s))
    return Row("card (GET /), lab 50 ms/call", median(ours) * 1e3, median(ref) * 1e3, "ms", "<= 1.1x")
