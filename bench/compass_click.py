"""Click -> write (`bench/compass.py`): Approve pressed in Chromium on the real approval page
(approval_web and the executor as processes, the campus lab in this process) until the write is
in the lab's log, with `latency_s` on every lab call; beside it the lab's own time for the calls
on that path (`bench.compass_common.direct_path`) made directly over an open MCP session.

The click is timed from the moment it lands in the page (a ``click`` listener on the document,
capture phase, ``Date.now()``: the same clock as the lab's log), which is when a person's click
starts their wait; a second row times it from Playwright's ``page.click`` call, which first
scrolls, waits for the button to be stable and moves the mouse (the driver's work, 17-60 ms on
a loaded machine, no part of Fleetwatch or of a person's wait)."""

from __future__ import annotations

import time
from pathlib import Path

from playwright.async_api import async_playwright

from bench.compass_common import IDLE, Row, direct_path, median, written_at
from shared.epiphan.mcp_session import McpConnection

_MARK_THE_CLICK = """() => { sessionStorage.removeItem('clicked'); document.addEventListener('click',
    () => sessionStorage.setItem('clicked', String(Date.now())), {capture: true, once: true}); }"""
"""Records when a click lands in the page (epoch ms), kept across the form's navigation."""


async def measure(home: Path, *, runs: int, latency_s: float) -> tuple[Row, Row]:
    """(from the click in the page, from the driver's ``page.click``) -> the write."""
    from tests.e2e.browser import ARGS, CHROMIUM
    from tests.e2e.stack import running_stack

    clicks: list[float] = []
    driven: list[float] = []
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
                    await page.evaluate(_MARK_THE_CLICK)
                    driver = time.time()
                    await page.click("button.approve")
                    await page.wait_for_selector("section.outcome")
                    landed = float(await page.evaluate("() => sessionStorage.getItem('clicked')")) / 1000
                    clicks.append(written_at(stack.lab) - landed)
                    driven.append(written_at(stack.lab) - driver)
                    direct.append(await direct_path(stack.lab, connection, latency_s))
        finally:
            await browser.close()
    reference = median(direct) * 1000
    return (
        Row("click -> write, lab 50 ms/call", median(clicks) * 1000, reference, "ms", "<= 1.15x"),
        Row("  (from the driver's page.click)", median(driven) * 1000, reference, "ms", "-"),
    )
