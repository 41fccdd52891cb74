"""Click -> write (`bench/compass.py`): Approve pressed in Chromium on the real approval page
(approval_web and the executor as processes, the campus lab in this process) until the write is
in the lab's log, with `latency_s` on every lab call; beside it the lab's own time for the calls
on that path (device list, then recorder status and events together, then the write) made
directly over an open MCP session."""

from __future__ import annotations

import time
from pathlib import Path

from playwright.async_api import async_playwright

from shared.epiphan.mcp_session import McpConnection


async def measure(home: Path, *, runs: int, latency_s: float):
    from bench.compass_common import IDLE, Row, direct_path, median, written_at
    from tests.e2e.browser import ARGS, CHROMIUM
    from tests.e2e.stack import running_stack

    clicks: list[float] = []
    direct: list[float] = []
    async with running_stack(home) as stack, async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        try:
            context = await browser.new_context(locale="en-US")
            context.set_default_timeout(30_000)
            page = await context.new_page()
            await page.goto(stack.url)
            await page.fill("#secret", stack.secret)
            await page.press("#secret", "Enter")
            async with McpConnection(stack.lab.mcp_url, stack.lab.teams["sandbox"].token) as connection:
                await direct_path(stack.lab, connection, 0)  # open the session
                for _ in range(runs):
                    stack.lab.reset()
                    await stack.propose("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
                    await page.goto(stack.url)
                    await page.wait_for_selector("button.approve")
                    stack.lab.set_fault("*", "latency", seconds=latency_s)
                    clicked = time.time()
                    await page.click("button.approve")
                    await page.wait_for_selector("section.outcome")
                    clicks.append(written_at(stack.lab) - clicked)
                    direct.append(await direct_path(stack.lab, connection, latency_s))
        finally:
            await browser.close()
    return Row("click -> write, lab 50 ms/call", median(clicks) * 1000, median(direct) * 1000, "ms", "ratio")
