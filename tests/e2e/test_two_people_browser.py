"""Two people for a firmware update, on the real page with two real uids (root only), in
Chromium, in English and Spanish:

- the first person (``fw-other``, signed in from their own account) approves the card and confirms
  the room: nothing runs, the proposal keeps waiting;
- the second person (this test's uid, in Chromium) sees "approved by fw-other at <time>; needs a
  second person" in English and in Spanish, approves the same card, confirms the room, and the
  change runs once; the executor claimed both approvals together.

Screenshots of the two-person card in both languages go to ``test-artifacts/``.
"""

from __future__ import annotations

import asyncio
import json
import os

from playwright.async_api import Browser

from shared.store.db import open_store
from tests.e2e.browser import ARTIFACTS, browser, needs_chromium
from tests.e2e.stack import IDLE, running_stack
from tests.other_uid import needs_root, other_user, python_as

__all__ = ["browser"]  # the fixture

pytestmark = [needs_chromium, needs_root]

FIRST_PERSON = r"""
import html.parser, http.client, json, sys, urllib.parse
host, port, secret = sys.argv[1], int(sys.argv[2]), sys.argv[3]
origin = f"http://{host}:{port}"
cookie = ""

class Forms(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.forms = {}; self.action = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.action = a.get("action"); self.forms[self.action] = {}
        elif tag == "input" and self.action and a.get("name"):
            self.forms[self.action][a["name"]] = a.get("value") or ""
    def handle_endtag(self, tag):
        if tag == "form": self.action = None

def ask(method, path, fields=None):
    global cookie
    conn = http.client.HTTPConnection(host, port, timeout=60)
    headers = {"Cookie": cookie} if cookie else {}
    body = None
    if fields is not None:
        body = urllib.parse.urlencode(fields)
        headers.update({"Content-Type": "application/x-www-form-urlencoded", "Origin": origin,
                        "Sec-Fetch-Site": "same-origin"})
    conn.request(method, path, body=body, headers=headers)
    answer = conn.getresponse()
    text = answer.read().decode()
    for name, value in answer.getheaders():
        if name.lower() == "set-cookie":
            cookie = value.split(";")[0]
    return answer.status, text

def forms(text):
    parsed = Forms(); parsed.feed(text); return parsed.forms

steps = [ask("POST", "/login", {"secret": secret})[0]]
status, card = ask("GET", "/")
steps.append(status)
if "/approve" not in forms(card):
    sys.exit(card)
status, confirm = ask("POST", "/approve", forms(card)["/approve"])
steps.append(status)
fields = dict(forms(confirm)["/confirm"])
fields["confirm_room"] = fields.get("confirm_room") or ""
steps.append(ask("POST", "/confirm", fields)[0])
print(json.dumps(steps))
"""
"""The first person's whole Approve, as their browser sends it: sign in, the card, Approve, the
room confirmed; prints the answers' statuses."""


async def test_a_firmware_update_needs_two_people_and_the_card_says_so_in_english_and_spanish(
    browser: Browser, tmp_path
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    other = other_user()
    operators = f"{os.getuid()},{other.pw_uid}"
    async with running_stack(tmp_path / "home", FLEETWATCH_APPROVAL_UIDS=operators) as stack:
        proposal_id = await stack.propose("batch_firmware_update", {"device_ids": [IDLE]})
        host, port = stack.url.removeprefix("http://").rstrip("/").split(":")
        with python_as(other, FIRST_PERSON, host, port, stack.secret) as first:
            # Off the event loop: the lab this test serves must answer the executor meanwhile.
            out, _ = await asyncio.to_thread(first.communicate, timeout=120)
        assert json.loads(out) == [303, 200, 200, 303], out
        assert stack.writes() == []

        pages = {}
        for locale in ("en-US", "es-419"):
            context = await browser.new_context(locale=locale, viewport={"width": 1100, "height": 1000})
            context.set_default_timeout(20_000)
            page = await context.new_page()
            await page.goto(stack.url)
            await page.fill("#secret", stack.secret.lower())
            await page.press("#secret", "Enter")
            await page.wait_for_selector("article.card")
            pages[locale] = page
        en, es = pages["en-US"], pages["es-419"]
        said = await en.inner_text("p.second-person")
        assert said.startswith(f"Approved by {other.pw_name} at ") and said.endswith(
            "needs a second person."
        )
        await en.locator("article.card").screenshot(path=str(ARTIFACTS / "two-people-card-en.png"))
        dicho = await es.inner_text("p.second-person")
        assert (
            dicho.startswith(f"Aprobado por {other.pw_name} a las ")
            and "necesita una segunda persona" in dicho
        )
        await es.locator("article.card").screenshot(path=str(ARTIFACTS / "two-people-card-es.png"))

        await en.click("button.approve")
        await en.wait_for_selector("form[action='/confirm']")
        await en.check("input[name=confirm_room]")
        await en.click("form[action='/confirm'] button.approve")
        await en.wait_for_selector("section.outcome")
        assert en.url.endswith(f"/outcome/{proposal_id}"), await en.inner_text("main")
        assert "Done: Epiphan accepted the change." in await en.inner_text("section.outcome")
        assert [w["tool"] for w in stack.writes()] == ["batch_firmware_update"]

        conn = await open_store(stack.settings.db)
        try:
            async with conn.execute(
                "SELECT a.uid, f.uid, f.claimed FROM approvals a JOIN first_approvals f"
                " ON f.id = a.first_approval_id WHERE a.proposal_id = ?",
                (proposal_id,),
            ) as cursor:
                rows = [tuple(r) for r in await cursor.fetchall()]
        finally:
            await conn.close()
        assert rows == [(os.getuid(), other.pw_uid, 1)]
