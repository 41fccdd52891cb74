"""The person's browser is the only thing that approves (issue 24 #1 and #2), in Chromium on
the real approval_web process, the lab and one store:

- the operator signs in on the approval page (``127.0.0.1``), then opens the ask page and the
  wall (``localhost``, served here in this process by the ask page's own app, with a hook that
  records every ``Cookie`` header it is sent): the assistant's side never receives the
  approval cookie;
- ``http://localhost:<approval port>/`` (Chromium tries ::1 first, where the page also listens)
  reaches the real approval page, by a redirect to 127.0.0.1;
- the approval cookie replayed by another local user (``fw-other``, a real second uid) with the
  card's own form approves nothing: ``session_not_yours``, audited with both uids, no write at
  the lab, the proposal still pending, and the operator's session ended.

Needs Debian's ``chromium`` and root (to run the replay as another user).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import web
from playwright.async_api import Browser

from services.approval_web.page.context import COOKIE as APPROVAL_COOKIE
from services.assistant.page import COOKIE as ASK_COOKIE
from services.assistant.page import build_page_app
from services.assistant.watch.wall import WallView
from shared.web.guards import ASK_NAMES
from shared.web.local_http import serve_loopback
from shared.web.page_secret import PageSecret
from shared.wire.assistant import Answer
from tests.approval_web.page.helpers import forms_of
from tests.e2e.browser import browser, needs_chromium
from tests.e2e.stack import IDLE, running_stack
from tests.other_uid import needs_root, other_user, request_as
from tests.support import store_rows

__all__ = ["browser"]  # the fixture

pytestmark = [needs_chromium, needs_root]


async def answer(question: str, language: str | None = None, *, asked_by: object = None) -> Answer:
    return Answer(text="Nothing needs attention.", language="en", answered_by="keyword")


async def wall(language: str | None) -> WallView:
    return WallView(
        lang="en",
        title="Rooms",
        read_line="Read just now.",
        stale=False,
        problem=None,
        counts="2 rooms",
        groups=(),
        all_clear="All clear.",
        events_heading="Next events",
        events=(),
        no_events="No events.",
        when_word="When",
        room_word="Room",
        event_word="Event",
        ready_word="Ready",
        footer="Fleetwatch",
        refresh_seconds=60,
    )


async def test_the_assistant_never_receives_the_approval_cookie_and_its_replay_by_another_uid_approves_nothing(
    browser: Browser, tmp_path: Path
) -> None:
    async with running_stack(tmp_path / "home") as stack:
        proposal_id = await stack.propose("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-2"]})
        ask_secret = PageSecret.new()
        app = build_page_app(answer, secret=ask_secret, wall=wall)
        cookies_sent: list[tuple[str, str]] = []

        async def record(request: web.Request, response: web.StreamResponse) -> None:
            cookies_sent.extend((request.path, c) for c in request.headers.getall("Cookie", []))

        app.on_response_prepare.append(record)
        async with serve_loopback(app, 0, ASK_NAMES[0]) as ask_url:
            context = await browser.new_context()
            context.set_default_timeout(20_000)
            page = await context.new_page()
            # The operator signs in on the approval page and sees the card.
            await page.goto(stack.url)
            await page.fill("#secret", stack.secret)
            await page.press("#secret", "Enter")
            await page.wait_for_selector("form[action='/approve']")
            form = forms_of(await page.content()).forms["/approve"]
            assert form["proposal_id"] == proposal_id
            # Then the ask page (signed in with its own secret) and the wall, in the same browser.
            ask = await context.new_page()
            await ask.goto(f"{ask_url}/")
            await ask.fill("#secret", ask_secret.shown())
            await ask.press("#secret", "Enter")
            await ask.wait_for_selector("form[action='/ask']")
            await ask.goto(f"{ask_url}/wall")
            assert "All clear." in await ask.content()
            # localhost at the approval page's port (::1 first) reaches the real page.
            port = stack.url.rstrip("/").rsplit(":", 1)[1]
            await ask.goto(f"http://localhost:{port}/")
            assert ask.url == stack.url
            await ask.wait_for_selector("form[action='/approve']")
            approval = [c for c in await context.cookies() if c["name"] == APPROVAL_COOKIE]
            await context.close()
        assert [c["domain"] for c in approval] == ["127.0.0.1"]
        sent_to_assistant = " ".join(c for _, c in cookies_sent)
        assert f"{ASK_COOKIE}=" in sent_to_assistant  # the hook saw the ask page's own cookie
        assert APPROVAL_COOKIE not in sent_to_assistant, cookies_sent
        assert approval[0]["value"] not in sent_to_assistant
        assert {path for path, _ in cookies_sent} >= {"/", "/wall"}

        # Another local user replays the approval cookie with the card's own form.
        (seq,) = await store_rows(stack.settings.db, "SELECT coalesce(max(seq), 0) AS seq FROM audit")
        own = stack.url.rstrip("/")
        headers = {
            "Host": own.removeprefix("http://"),
            "Origin": own,
            "Sec-Fetch-Site": "same-origin",
            "Cookie": f"{APPROVAL_COOKIE}={approval[0]['value']}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        replay = await asyncio.to_thread(
            request_as, "127.0.0.1", int(port), "POST", "/approve", headers, urlencode(form)
        )
        assert replay["status"] == 403 and replay["headers"]["Fleetwatch-Code"] == "session_not_yours"
        again = await asyncio.to_thread(request_as, "127.0.0.1", int(port), "GET", "/", headers)
        assert "Enter the page secret" in again["body"]  # the session was ended
        assert stack.writes() == []
        rows = await store_rows(
            stack.settings.db, "SELECT kind, detail_json FROM audit WHERE seq > ? ORDER BY seq", (seq["seq"],)
        )
        refusals = [json.loads(r["detail_json"]) for r in rows if r["kind"] == "refusal"]
        assert [(r["code"], r["uid"], r["signed_in_uid"]) for r in refusals] == [
            ("session_not_yours", other_user().pw_uid, os.getuid())
        ]
        (status,) = await store_rows(
            stack.settings.db, "SELECT status FROM proposals WHERE id = ?", (proposal_id,)
        )
        assert status["status"] == "pending"
        assert [r for r in rows if r["kind"] in ("approval", "execution", "outcome")] == []
