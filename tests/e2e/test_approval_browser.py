"""Chromium, driven by Playwright, on the real page: the secret, the card, Deny focused,
Approve, the outcome; exactly one write in the lab's log; a second Approve of the same card
refused. Screenshots of the card in English and Spanish go to ``test-artifacts/``.

Needs Debian's ``chromium`` (``deploy/debian-packages.txt``; ``scripts/setup --system``
installs it). Playwright's own browser download is never used.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from shared.epiphan.mcp_session import McpConnection
from tests.e2e.browser import ARGS, ARTIFACTS, CHROMIUM, needs_chromium
from tests.e2e.stack import IDLE, Stack, running_stack

pytestmark = needs_chromium


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        try:
            yield chromium
        finally:
            await chromium.close()


async def signed_in(browser: Browser, stack: Stack, locale: str) -> tuple[BrowserContext, Page]:
    context = await browser.new_context(locale=locale, viewport={"width": 1100, "height": 1000})
    context.set_default_timeout(20_000)
    page = await context.new_page()
    await page.goto(stack.url)
    assert await page.evaluate("document.activeElement.id") == "secret"
    await page.fill("#secret", stack.secret.lower())
    await page.press("#secret", "Enter")
    await page.wait_for_selector("article.card")
    return context, page


async def test_a_person_approves_one_card_in_chromium_and_it_writes_once(
    browser: Browser, tmp_path: Path
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    async with running_stack(tmp_path / "home") as stack:
        proposal_id = await stack.propose(
            "batch_recording",
            {"action": "start", "device_ids": [f"{IDLE}-1"]},
            reason="Lecture in Sandbox Lab starts in 10 minutes and channel 1 is not recording.",
        )
        english, card = await signed_in(browser, stack, "en-US")
        assert await card.inner_text("h1") == "Start recording"
        body = await card.text_content("main") or ""
        for fact in (
            "Sandbox Pearl-2",
            "Pearl-2",
            f"{IDLE}-1",
            "Program",
            "Written by the assistant, not checked",
        ):
            assert fact in body
        focused = await card.evaluate(
            "[document.activeElement.className, document.activeElement.textContent]"
        )
        assert focused == ["deny", "Deny"]
        await card.screenshot(path=str(ARTIFACTS / "approval-card-en.png"), full_page=True)

        spanish, tarjeta = await signed_in(browser, stack, "es-419")
        assert await tarjeta.inner_text("h1") == "Iniciar grabación"
        assert await tarjeta.evaluate("document.activeElement.textContent") == "Rechazar"
        assert await tarjeta.evaluate("document.documentElement.lang") == "es-419"
        await tarjeta.screenshot(path=str(ARTIFACTS / "approval-card-es.png"), full_page=True)

        form = {
            name: await card.get_attribute(f"form[action='/approve'] input[name={name}]", "value") or ""
            for name in ("proposal_id", "card_hash", "facts_hash", "shown_at", "token")
        }
        assert form["proposal_id"] == proposal_id
        assert stack.writes() == []
        clicked = time.time()
        await card.click("button.approve")
        await card.wait_for_selector("section.outcome")
        shown = time.time()
        assert await card.inner_text("section.outcome h1") == "Done"
        assert "Epiphan shows the change" in await card.inner_text("section.outcome")
        assert "1 change approved in this browser session" in await card.inner_text("header")
        await card.screenshot(path=str(ARTIFACTS / "approval-outcome-en.png"), full_page=True)
        writes = stack.writes()
        assert [(w["tool"], w["arguments"]) for w in writes] == [
            ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
        ]

        # The same card again: the Spanish tab still shows it (its own approval), and the
        # English tab's form is posted once more. Both are refused; nothing else is written.
        await tarjeta.click("button.approve")
        await tarjeta.wait_for_selector("section.outcome")
        assert (await tarjeta.inner_text("section.outcome h1")).startswith("No se ejecutó nada")
        replay = await english.request.post(
            stack.url + "approve", form=form, headers={"Origin": stack.url.rstrip("/")}, max_redirects=0
        )
        assert replay.status == 409 and "Nothing ran" in await replay.text()
        assert len(stack.writes()) == 1
        await english.close()
        await spanish.close()
        # The lab's own read latency in this same run, through the same kind of client the
        # executor uses (the sandbox sign-in over MCP), to set the click-to-write time against.
        reads_ms = []
        async with McpConnection(stack.lab.mcp_url, stack.lab.teams["sandbox"].token) as connection:
            await connection.call("get_devices_in_my_team")
            for _ in range(10):
                started = time.perf_counter()
                await connection.call("get_devices_in_my_team")
                reads_ms.append((time.perf_counter() - started) * 1000)
    written = datetime.fromisoformat(writes[0]["at"].replace("Z", "+00:00")).timestamp()
    latency = {
        "click_to_write_ms": round((written - clicked) * 1000),
        "click_to_outcome_ms": round((shown - clicked) * 1000),
        "lab_read_median_ms": round(statistics.median(reads_ms), 1),
        "note": "between the click and the write the executor opens an MCP session and makes "
        "three reads (device list, recorder status, events)",
    }
    (ARTIFACTS / "approve-latency.json").write_text(json.dumps(latency, indent=2) + "\n")
