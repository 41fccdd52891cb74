"""Chromium, driven by Playwright, on the real page, in English and Spanish, with the operator in
a time zone across the date line from UTC (``FLEETWATCH_TIMEZONE=Pacific/Kiritimati``, UTC+14):

- a deny-only card says why and until when, and a Deny names what was denied;
- the card's title names the change and the room; Deny has the focus;
- Approve lands on the change's own outcome URL naming the room, the change and the outcome,
  and reloading it shows the same (a GET runs nothing); exactly one write in the lab's log; a
  second Approve of the same card runs nothing;
- a disruptive change asks to confirm the room first;
- "Recent decisions" lists each decision with its room, who, when (the operator's time) and
  outcome.

Screenshots of the card, the confirm, the outcome and the recent list in both languages go to
``test-artifacts/`` (gitignored), with the click-to-write latency.

Needs Debian's ``chromium`` (``deploy/debian-packages.txt``; ``scripts/setup --system``
installs it). Playwright's own browser download is never used.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.async_api import Browser, BrowserContext, Page

from shared.epiphan.mcp_session import McpConnection
from shared.store.approvals import get_proposal
from shared.store.db import open_store
from shared.text.display import account_name
from tests.ctl.cli import fleetwatch_async
from tests.e2e.browser import ARTIFACTS, browser, needs_chromium
from tests.e2e.stack import CLASSROOM, IDLE, RECORDING, Stack, running_stack

__all__ = ["browser"]  # the fixture

pytestmark = needs_chromium

ZONE = "Pacific/Kiritimati"
ME = account_name(os.getuid())
"""Who this test's browser and command are (the page names a person by their account)."""


KIRITIMATI = ZoneInfo(ZONE)


async def signed_in(browser: Browser, stack: Stack, locale: str) -> tuple[BrowserContext, Page]:
    context = await browser.new_context(locale=locale, viewport={"width": 1100, "height": 1000})
    context.set_default_timeout(20_000)
    page = await context.new_page()
    await page.goto(stack.url)
    assert await page.evaluate("document.activeElement.id") == "secret"
    await page.fill("#secret", stack.secret.lower())
    await page.press("#secret", "Enter")
    await page.wait_for_selector("main h1")
    return context, page


async def shot(page: Page, name: str, selector: str | None = None) -> None:
    path = str(ARTIFACTS / f"{name}.png")
    if selector is None:
        await page.screenshot(path=path, full_page=True)
    else:
        await page.locator(selector).screenshot(path=path)


async def decided_at(stack: Stack, proposal_id: str) -> datetime:
    conn = await open_store(stack.settings.db)
    try:
        row = await get_proposal(conn, proposal_id)
    finally:
        await conn.close()
    assert row is not None and row.decided_at is not None
    return datetime.fromisoformat(row.decided_at.replace("Z", "+00:00"))


async def test_a_person_decides_in_english_and_spanish_and_reads_room_change_outcome_and_time(
    browser: Browser, tmp_path: Path
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    writable = f"{IDLE},{RECORDING},{CLASSROOM}"
    async with running_stack(tmp_path / "home", writable=writable, FLEETWATCH_TIMEZONE=ZONE) as stack:
        # 1. A restart of a room whose class starts in 25 minutes: Deny only, why and until when.
        await stack.propose("batch_reboot", {"device_ids": [CLASSROOM]}, reason="It looks stuck.")
        english, en = await signed_in(browser, stack, "en-US")
        spanish, es = await signed_in(browser, stack, "es-419")
        assert await en.inner_text("h1") == "Restart a device: “Sandbox Classroom”"
        blocked = await en.inner_text("section.blockers")
        assert "The room is busy: Sandbox practice lecture starts" in blocked
        assert "in 25 minutes" in blocked or "in 24 minutes" in blocked
        assert "This change is allowed again after" in blocked
        assert await en.locator("form[action='/approve']").count() == 0
        assert "Times in Pacific/Kiritimati" in await en.inner_text("header")
        await shot(en, "deny-only-card-en")
        assert await es.inner_text("h1") == "Reiniciar un dispositivo: «Sandbox Classroom»"
        assert "La sala está ocupada: Sandbox practice lecture empieza" in await es.inner_text(
            "section.blockers"
        )
        await shot(es, "deny-only-card-es")
        await en.keyboard.press("Enter")  # a stray Enter: Deny has the focus
        await en.wait_for_selector("p.notice")
        assert await en.inner_text("p.notice") == (
            "Denied: Restart a device: “Sandbox Classroom”. Nothing ran. Details"
        )

        # 2. Start recording in that room: the title names it; Approve leads to its outcome URL.
        proposal_id = await stack.propose(
            "batch_recording",
            {"action": "start", "device_ids": [f"{CLASSROOM}-1"]},
            reason="The practice lecture starts in 25 minutes and the room is not recording.",
        )
        await en.goto(stack.url)
        title = "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
        assert await en.inner_text("h1") == title
        card = await en.text_content("article.card") or ""
        assert "“Sandbox Classroom”, channel 1 (“Lecture”) starts recording now, into a new file." in card
        assert "Low risk:" in card
        assert await en.text_content("#reason-title") == "Written by the operator who drafted it, not checked"
        assert "Details for an audit" in card and f"{CLASSROOM}-1" in card
        event_start = await en.inner_text("dl.thing dd:nth-of-type(2)")
        assert re.fullmatch(
            r"\d\d:\d\d, in 2[45] minutes|\w{3} \d{1,2} \w{3}, \d\d:\d\d, in 2[45] minutes", event_start
        )
        focused = await en.evaluate("[document.activeElement.className, document.activeElement.textContent]")
        assert focused == ["deny", "Deny"]
        await shot(en, "card-en")
        await es.goto(stack.url)
        assert await es.inner_text("h1") == "Iniciar grabación: «Sandbox Classroom», canal 1 («Lecture»)"
        assert await es.evaluate("document.activeElement.textContent") == "Rechazar"
        assert await es.evaluate("document.documentElement.lang") == "es-419"
        await shot(es, "card-es")

        assert stack.writes() == []
        clicked = time.time()
        await en.click("button.approve")
        await en.wait_for_url(f"**/outcome/{proposal_id}")
        shown = time.time()
        outcome = await en.inner_text("section.outcome")
        assert await en.inner_text("section.outcome h1") == title
        assert "Done: Epiphan accepted the change." in outcome
        assert "Checked afterwards (" in outcome and "Epiphan shows the change." in outcome
        assert (
            f"Approved on the approval page by you ({ME}), in this browser" in outcome and "Next:" in outcome
        )
        # The operator's time: the decision in Kiritimati (UTC+14), never the UTC clock.
        local = (await decided_at(stack, proposal_id)).astimezone(KIRITIMATI)
        assert f"Approved on the approval page by you ({ME}), in this browser, {local:%H:%M}" in outcome
        assert "1 change approved in this browser session" in await en.inner_text("header")
        await shot(en, "outcome-en")
        await en.reload()
        assert await en.inner_text("section.outcome") == outcome  # a reload shows the same
        writes = stack.writes()
        assert [(w["tool"], w["arguments"]) for w in writes] == [
            ("batch_recording", {"action": "start", "device_ids": [f"{CLASSROOM}-1"]})
        ]

        # The Spanish tab still shows the card: its Approve runs nothing (409), then the outcome
        # page in Spanish, reached through the link on that answer.
        await es.click("button.approve")
        await es.wait_for_selector("section.outcome")
        assert (await es.inner_text("section.outcome p.status")).startswith("No se ejecutó nada")
        await es.click('section.outcome a:has-text("Qué pasó con este cambio")')
        await es.wait_for_url(f"**/outcome/{proposal_id}")
        resultado = await es.inner_text("section.outcome")
        assert "Iniciar grabación: «Sandbox Classroom», canal 1 («Lecture»)" in resultado
        assert "Hecho: Epiphan aceptó el cambio." in resultado
        assert f"Aprobado en la página de aprobación por {ME}, {local:%H:%M}" in resultado
        await shot(es, "outcome-es")
        assert len(stack.writes()) == 1

        # 3. Stop the recording in another room: disruptive, so the room is confirmed first.
        await stack.propose("batch_recording", {"action": "stop", "device_ids": [f"{RECORDING}-1"]})
        await en.goto(stack.url)
        assert await en.inner_text("h1") == "Stop recording: “Sandbox Pearl Mini”, channel 1 (“Program”)"
        assert (await en.inner_text("p.risk")).startswith("High risk:")
        await en.click("button.approve")
        await en.wait_for_selector("form[action='/confirm']")
        assert (await en.inner_text("h1")).startswith(
            "Confirm the room: Stop recording: “Sandbox Pearl Mini”"
        )
        await shot(en, "confirm-en")
        await es.goto(stack.url)
        await es.click("button.approve")
        await es.wait_for_selector("form[action='/confirm']")
        await shot(es, "confirm-es")
        await en.check("input[name=confirm_room]")
        await en.click("form[action='/confirm'] button.approve")
        await en.wait_for_url("**/outcome/*")
        assert "Done: Epiphan accepted the change." in await en.inner_text("section.outcome")
        assert len(stack.writes()) == 2

        # 4. Recent decisions: change and room, who, when, outcome; newest first.
        await en.goto(stack.url)
        rows = await en.locator("table.recent-list tbody tr").all_inner_texts()
        assert len(rows) == 3
        assert rows[0].startswith(
            f"Stop recording: “Sandbox Pearl Mini”, channel 1 (“Program”)\tyou ({ME}), in this browser"
        )
        assert rows[0].endswith("Done")
        assert rows[1].startswith(f"{title}\tyou ({ME}), in this browser\t{local:%H:%M}") and rows[
            1
        ].endswith("Done")
        assert rows[2].startswith(f"Restart a device: “Sandbox Classroom”\tyou ({ME}), in this browser")
        assert rows[2].endswith("Denied")
        await shot(en, "recent-en", "section.recent")
        await es.goto(stack.url)
        filas = await es.locator("table.recent-list tbody tr").all_inner_texts()
        assert filas[1].startswith(
            f"Iniciar grabación: «Sandbox Classroom», canal 1 («Lecture»)\t{ME}, en la página de aprobación"
        )
        assert filas[2].endswith("Rechazado")
        await shot(es, "recent-es", "section.recent")
        # 5. A change denied with the fleetwatch command: its outcome still names the room and
        # channel (the names recorded with the proposal) and who denied it, in words (issue 28).
        denied_id = await stack.propose("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
        code, _, err = await fleetwatch_async(stack.env, "deny", denied_id)
        assert code == 0, err
        for tab, title, who, name in (
            (
                en,
                "Start recording: “Sandbox Pearl-2”, channel 1 (“Program”)",
                f"Denied from the command line by {ME}",
                "outcome-cli-denied-en",
            ),
            (
                es,
                "Iniciar grabación: «Sandbox Pearl-2», canal 1 («Program»)",
                f"Rechazado desde la línea de comandos por {ME}",
                "outcome-cli-denied-es",
            ),
        ):
            await tab.goto(f"{stack.url}outcome/{denied_id}")
            said = await tab.inner_text("section.outcome")
            assert await tab.inner_text("section.outcome h1") == title
            assert who in said and "uid" not in said
            await shot(tab, name)
        await en.goto(stack.url)
        # The language switch: the English tab's "Español" link.
        await en.click("nav.language >> text=Español")
        assert await en.text_content("#recent-title") == "Decisiones recientes"
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
    written = datetime.fromisoformat(writes[0]["at"].replace("Z", "+00:00")).astimezone(UTC).timestamp()
    latency = {
        "click_to_write_ms": round((written - clicked) * 1000),
        "click_to_outcome_ms": round((shown - clicked) * 1000),
        "lab_read_median_ms": round(statistics.median(reads_ms), 1),
        "note": "between the click and the write the executor opens an MCP session and makes "
        "three reads (device list, recorder status, events)",
    }
    (ARTIFACTS / "approve-latency.json").write_text(json.dumps(latency, indent=2) + "\n")
