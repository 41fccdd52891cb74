"""The main job as a newcomer runs it: ``fleetwatch demo`` starts everything under real
supervisord (the lab, the scripted model behind the real Anthropic SDK, the executor,
approval_web, the assistant), the assistant leaves a proposal, a person approves it in Chromium,
the lab records exactly one write, a replayed Approve is refused, ``fleetwatch pending show``
tells the outcome and verification, and ``fleetwatch down`` waits until supervisord is gone.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
from playwright.async_api import async_playwright

from tests.e2e.browser import ARGS, ARTIFACTS, CHROMIUM, needs_chromium
from tests.e2e.demo import demo_env, fleetwatch

pytestmark = needs_chromium
__all__ = ["demo_env"]  # the fixture


async def test_the_main_job_runs_under_supervisord_and_a_person_approves_it_in_chromium(demo_env):
    home = Path(demo_env["FLEETWATCH_HOME"])
    started = fleetwatch(demo_env, "demo")
    assert started.returncode == 0, started.stdout + started.stderr
    assert "waiting for approval" in started.stdout, started.stdout

    status = fleetwatch(demo_env, "status").stdout
    assert "Processes (supervisord):" in status
    for program in ("lab", "model", "executor", "approval_web", "assistant"):
        assert any(line.split()[:3] == [program, "running", "since"] for line in status.splitlines()), status
    assert "Fence:        configured" in status

    pending = json.loads(fleetwatch(demo_env, "pending", "list", "--json").stdout)
    (item,) = pending["items"]
    assert item["tool"] == "batch_recording" and item["proposed_by"] == "assistant"

    lab_url = json.loads((home / "run" / "lab.ready").read_text())["url"]
    page_url = f"http://127.0.0.1:{demo_env['FLEETWATCH_APPROVE_PORT']}/"
    secret = (home / "state" / "approve-secret").read_text().strip()
    assert (home / "state" / "approve-secret").stat().st_mode & 0o777 == 0o600

    def writes() -> list[dict]:
        return httpx2.get(f"{lab_url}/_lab/writes", timeout=10).json()["writes"]

    assert writes() == []
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        try:
            pages = {}
            for locale in ("es-419", "en-US"):
                context = await browser.new_context(locale=locale, viewport={"width": 1100, "height": 1000})
                context.set_default_timeout(20_000)
                page = await context.new_page()
                await page.goto(page_url)
                await page.fill("#secret", secret)
                await page.press("#secret", "Enter")
                await page.wait_for_selector("article.card")
                assert await page.evaluate("document.activeElement.className") == "deny"
                await page.screenshot(path=str(ARTIFACTS / f"main-job-card-{locale[:2]}.png"), full_page=True)
                pages[locale] = (context, page)
            context, page = pages["en-US"]
            assert (
                await page.inner_text("h1") == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
            )
            form = {
                name: await page.get_attribute(f"form[action='/approve'] input[name={name}]", "value") or ""
                for name in ("proposal_id", "card_hash", "facts_hash", "shown_at", "token")
            }
            assert form["proposal_id"] == item["proposal_id"]
            await page.click("button.approve")
            await page.wait_for_url(f"**/outcome/{item['proposal_id']}")
            assert await page.inner_text("section.outcome h1") == (
                "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
            )
            assert await page.inner_text("section.outcome p.status") == "Done: Epiphan accepted the change."
            assert len(writes()) == 1

            replay = await context.request.post(
                page_url + "approve", form=form, headers={"Origin": page_url.rstrip("/")}, max_redirects=0
            )
            assert replay.status == 409
            spanish_context, tarjeta = pages["es-419"]
            await tarjeta.click("button.approve")
            await tarjeta.wait_for_selector("section.outcome")
            assert (await tarjeta.inner_text("section.outcome p.status")).startswith("No se ejecutó nada")
            assert len(writes()) == 1
        finally:
            await browser.close()

    (write,) = writes()
    assert write["tool"] == "batch_recording" and write["arguments"]["action"] == "start"
    shown = json.loads(fleetwatch(demo_env, "pending", "show", item["proposal_id"], "--json").stdout)
    assert shown["outcome"] == "ok" and shown["verification"] == "verified"
    assert json.loads(fleetwatch(demo_env, "audit", "verify", "--json").stdout)["ok"] is True

    stopped = fleetwatch(demo_env, "down", timeout=90)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not (home / "run" / "supervisord.pid").exists()
