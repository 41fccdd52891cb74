"""Every refusal of the page changes nothing: no approval consumed, no Execute sent, the
approval tables as they were, and exactly one audit row naming the code."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, CookieJar

from services.approval_web.page.context import PAGE
from shared.web.throttle import ROW_WINDOW_SECONDS, ROWS_PER_WINDOW
from tests.approval_web.page.helpers import Harness, add_proposal, connection, forms_of, page, policies
from tests.other_uid import needs_root, other_user, request_as
from tests.support import UNREADABLE_FORMS

TABLES = {
    "proposals": "SELECT * FROM proposals ORDER BY rowid",
    "approvals": "SELECT * FROM approvals ORDER BY rowid",
    "executions": "SELECT * FROM executions ORDER BY rowid",
    "sessions": "SELECT * FROM sessions ORDER BY rowid",
}


async def snapshot(h: Harness) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with connection(h.db) as conn:
        for table, sql in TABLES.items():
            async with conn.execute(sql) as cursor:
                out[table] = [tuple(r) for r in await cursor.fetchall()]
        async with conn.execute("SELECT count(*) FROM audit") as cursor:
            row = await cursor.fetchone()
    out["audit"] = row[0] if row else 0
    return out


@contextlib.asynccontextmanager
async def refused_once(h: Harness, code: str) -> AsyncIterator[None]:
    """The block must leave the tables unchanged, send no Execute, and add one refusal row."""
    before = await snapshot(h)
    executed = list(h.executor.executed)
    yield
    after = await snapshot(h)
    assert {t: after[t] for t in TABLES} == {t: before[t] for t in TABLES}
    assert h.executor.executed == executed
    rows = (await h.audit_rows())[before["audit"] :]
    assert [(r["kind"], r["detail"]["code"]) for r in rows] == [("refusal", code)]
    if rows[0]["detail"]["operation"].startswith("page "):  # refused at the page, not by the store
        assert rows[0]["detail"]["uid"] == os.getuid()  # who knocked, as the kernel lists it


async def card_ready(tmp_path: Path) -> AsyncIterator[tuple[Harness, dict[str, str]]]:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        yield h, forms.forms["/approve"]


@pytest.fixture
async def ready(tmp_path: Path) -> AsyncIterator[tuple[Harness, dict[str, str]]]:
    async for pair in card_ready(tmp_path):
        yield pair


async def test_a_post_without_the_session_cookie_is_refused(ready: tuple[Harness, dict[str, str]]) -> None:
    h, form = ready
    h.client.session.cookie_jar.clear()
    async with refused_once(h, "secret_required"):
        response = await h.post("/approve", form)
        assert response.status == 401


async def test_a_forged_session_cookie_is_refused(ready: tuple[Harness, dict[str, str]]) -> None:
    h, form = ready
    h.client.session.cookie_jar.clear()
    h.client.session.cookie_jar.update_cookies({"fleetwatch_page": "forged-" + "A" * 36})
    async with refused_once(h, "secret_required"):
        response = await h.post("/approve", form)
        assert response.status == 401


async def test_a_wrong_secret_is_refused_and_starts_no_session(tmp_path: Path) -> None:
    async with page(tmp_path) as h, refused_once(h, "secret_wrong"):
        response = await h.post("/login", {"secret": "WRONG-WRONG-WRONG"})
        assert response.status == 403
        assert "fleetwatch_page" not in {c.key for c in h.client.session.cookie_jar}
        assert "That is not the page secret." in await response.text()


async def test_wrong_secrets_slow_the_form_after_three_tries_without_extending_the_wait(
    tmp_path: Path,
) -> None:
    async with page(tmp_path) as h:
        for _ in range(3):
            async with refused_once(h, "secret_wrong"):
                await h.post("/login", {"secret": "nope"})
        async with refused_once(h, "slow_down"):  # even the right secret waits
            response = await h.post("/login", {"secret": h.secret.shown()})
            assert response.status == 429 and response.headers["Retry-After"] == "1"
        h.clock.now += 0.5
        async with refused_once(h, "slow_down"):
            await h.post("/login", {"secret": "nope"})
        h.clock.now += 0.5  # the wait was 1 s from the third wrong entry: not extended
        async with refused_once(h, "secret_wrong"):
            response = await h.post("/login", {"secret": "nope"})
            assert response.headers["Retry-After"] == "2"  # the wait doubles
        h.clock.now += 2
        response = await h.post("/login", {"secret": h.secret.shown()})
        assert response.status == 303


@needs_root
async def test_another_users_wrong_secrets_never_slow_the_operator_and_its_rows_are_capped(
    tmp_path: Path,
) -> None:
    """Issue 24 #7: another local user (a real one) posts 40 wrong secrets from 127.0.0.1, as
    every local user does; the operator's right secret is never refused, and that user's
    refusals leave at most `ROWS_PER_WINDOW` rows in the window."""
    async with page(tmp_path) as h:
        seq = len(await h.audit_rows())
        headers = {**h.same_origin(), "Content-Type": "application/x-www-form-urlencoded"}
        answer = await asyncio.to_thread(
            request_as, "127.0.0.1", h.client.port, "POST", "/login", headers, "secret=nope", times=40
        )
        assert answer["status"] == 429  # that user waits
        assert h.client.app[PAGE].throttle.wait_left(other_user().pw_uid, h.clock.now) > 0
        response = await h.post("/login", {"secret": h.secret.shown()})
        assert response.status == 303  # the operator does not
        rows = [r for r in (await h.audit_rows())[seq:] if r["kind"] == "refusal"]
        assert len(rows) == ROWS_PER_WINDOW
        assert {r["detail"]["uid"] for r in rows} == {other_user().pw_uid}
        h.clock.now += ROW_WINDOW_SECONDS
        await asyncio.to_thread(
            request_as, "127.0.0.1", h.client.port, "POST", "/login", headers, "secret=nope"
        )
        last = (await h.audit_rows())[-1]
        assert last["detail"]["unrecorded_before"] == 40 - ROWS_PER_WINDOW


FOREIGN_HEADERS = [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "none"},
    {},
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://localhost:1"},
    {"Origin": "http://127.0.0.1:1"},
    {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
    {"Sec-Fetch-Site": "none", "Origin": "null"},
    {"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"},
    {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost:1"},
    {"Sec-Fetch-Site": "cross-site", "Origin": "OWN"},
    {"Sec-Fetch-Site": "same-site", "Origin": "OWN"},
    {"Sec-Fetch-Site": "none", "Origin": "OWN"},
]
"""Every Sec-Fetch-Site / Origin combination that does not prove "this page" ("OWN": the
page's own origin, sent beside a Sec-Fetch-Site that contradicts it)."""


@pytest.mark.parametrize("style", ["form", "fetch-text", "fetch-json", "fetch-cors"])
async def test_a_post_that_did_not_come_from_the_page_is_refused(
    ready: tuple[Harness, dict[str, str]], style: str
) -> None:
    h, form = ready
    for headers in FOREIGN_HEADERS:
        sent = {k: (h.origin if v == "OWN" else v) for k, v in headers.items()}
        for path, fields in (
            ("/approve", form),
            ("/deny", form),
            ("/deny-all", form),
            ("/login", {"secret": h.secret.shown()}),
        ):
            async with refused_once(h, "cross_site"):
                if style == "form":
                    response = await h.post(path, fields, headers=sent)
                else:
                    body = "&".join(f"{k}={v}" for k, v in fields.items())
                    content_type = {"fetch-text": "text/plain", "fetch-json": "application/json"}.get(
                        style, "application/x-www-form-urlencoded"
                    )
                    mode = "cors" if style == "fetch-cors" else "no-cors"
                    fetch = {
                        **sent,
                        "Content-Type": content_type,
                        "Sec-Fetch-Mode": mode,
                        "Sec-Fetch-Dest": "empty",
                    }
                    response = await h.client.post(path, data=body, headers=fetch, allow_redirects=False)
                assert response.status == 403, (path, headers)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1", "localhost:1", "localhost"]
)
async def test_a_request_naming_a_foreign_host_is_refused(
    ready: tuple[Harness, dict[str, str]], host: str
) -> None:
    h, form = ready
    host = host.format(port=h.client.port)
    async with refused_once(h, "bad_host"):
        response = await h.client.get("/", headers={"Host": host})
        assert response.status == 421
    async with refused_once(h, "bad_host"):
        response = await h.post("/approve", form, headers={**h.same_origin(), "Host": host})
        assert response.status == 421


async def test_localhost_is_the_ask_pages_name_never_the_approval_pages(
    ready: tuple[Harness, dict[str, str]],
) -> None:
    """Issue 24 #1: a cookie goes to every port of its host, so the approval page never answers
    to ``localhost`` (the ask page's name): a GET is sent to 127.0.0.1 with no cookie set, an
    action is refused and changes nothing."""
    h, form = ready
    localhost = f"localhost:{h.client.port}"
    before = await snapshot(h)
    for path in ("/", "/page.css", f"/outcome/{form['proposal_id']}"):
        response = await h.client.get(path, headers={"Host": localhost}, allow_redirects=False)
        assert response.status == 307 and response.headers["Location"] == f"{h.origin}/"
        assert "Set-Cookie" not in response.headers
        assert "Enter the page secret" not in await response.text()
    assert await snapshot(h) == before
    origin = {"Origin": f"http://{localhost}", "Sec-Fetch-Site": "same-origin", "Host": localhost}
    async with refused_once(h, "bad_host"):
        response = await h.post("/approve", form, headers=origin)
        assert response.status == 421


async def test_the_ipv6_loopback_is_the_approval_page_too(ready: tuple[Harness, dict[str, str]]) -> None:
    h, _ = ready
    response = await h.client.get("/page.css", headers={"Host": f"[::1]:{h.client.port}"})
    assert response.status == 200


@pytest.mark.parametrize("path", ["/approve", "/deny", "/deny-all", "/login"])
async def test_an_action_url_fetched_with_get_changes_nothing(
    ready: tuple[Harness, dict[str, str]], path: str
) -> None:
    h, form = ready
    query = "&".join(f"{k}={v}" for k, v in form.items())
    async with refused_once(h, "method_not_allowed"):
        response = await h.client.get(f"{path}?{query}", allow_redirects=False)
        assert response.status == 405


async def test_a_token_made_for_another_proposal_is_refused(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        other = await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        form = dict(forms.forms["/approve"])
        async with refused_once(h, "csrf_failed"):
            response = await h.post("/approve", {**form, "proposal_id": other})
            assert response.status == 403
        async with refused_once(h, "csrf_failed"):
            await h.post("/deny", {**forms.forms["/deny"], "proposal_id": other})


async def test_a_token_made_for_another_session_is_refused(ready: tuple[Harness, dict[str, str]]) -> None:
    h, form = ready
    async with ClientSession(base_url=h.origin, cookie_jar=CookieJar(unsafe=True)) as second:
        response = await second.post(
            "/login", data={"secret": h.secret.shown()}, headers=h.same_origin(), allow_redirects=False
        )
        assert response.status == 303
        other = forms_of(await (await second.get("/")).text()).forms["/approve"]
        async with refused_once(h, "csrf_failed"):
            # The second browser posts the first one's form (its own cookie, their token).
            response = await second.post(
                "/approve", data=form, headers=h.same_origin(), allow_redirects=False
            )
            assert response.status == 403
        async with refused_once(h, "csrf_failed"):
            # The first browser posts the second one's token with its own IDs.
            await h.post("/approve", {**form, "token": other["token"]})


async def test_a_replayed_approve_is_refused_and_runs_nothing_more(
    ready: tuple[Harness, dict[str, str]],
) -> None:
    h, form = ready
    first = await h.post("/approve", form)
    assert first.status == 303 and len(h.executor.executed) == 1
    async with refused_once(h, "approval_already_used"):
        again = await h.post("/approve", form)
        assert again.status == 409
        assert "Nothing ran" in await again.text()


async def test_approve_after_the_card_expired_is_refused(tmp_path: Path) -> None:
    policy, _ = policies()
    instant = dataclasses.replace(policy, limits=dataclasses.replace(policy.limits, approval_ttl_seconds=0))
    async with page(tmp_path, policy=instant) as h:  # a card window that closes as it opens
        await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        async with refused_once(h, "approval_expired"):
            response = await h.post("/approve", forms.forms["/approve"])
            assert response.status == 409
            assert "window closed before the change could start" in await response.text()


@pytest.mark.parametrize("field", ["proposal_id", "card_hash", "facts_hash", "shown_at"])
async def test_approve_with_any_bound_field_changed_is_refused(
    ready: tuple[Harness, dict[str, str]], field: str
) -> None:
    h, form = ready
    other = await add_proposal(h.db) if field == "proposal_id" else None
    changed = {
        **form,
        field: other or ("2000-01-01T00:00:00.000Z" if field == "shown_at" else "0" * 64),
    }
    async with refused_once(h, "csrf_failed"):
        response = await h.post("/approve", changed)
        assert response.status == 403


@pytest.mark.parametrize("chunked", [False, True])
async def test_an_oversize_body_is_refused(ready: tuple[Harness, dict[str, str]], chunked: bool) -> None:
    h, form = ready
    body = "&".join(f"{k}={v}" for k, v in form.items()) + "&pad=" + "x" * 20_000
    headers = {**h.same_origin(), "Content-Type": "application/x-www-form-urlencoded"}

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096].encode()

    async with refused_once(h, "body_too_large"):
        response = await h.client.post(
            "/approve", data=chunks() if chunked else body, headers=headers, allow_redirects=False
        )
        assert response.status == 413


async def test_every_response_carries_the_security_headers(ready: tuple[Harness, dict[str, str]]) -> None:
    h, _ = ready
    for response in (await h.client.get("/"), await h.client.get("/nowhere"), await h.client.get("/approve")):
        csp = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "script-src" not in csp and "default-src 'none'" in csp
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    login = await h.client.post(
        "/login", data={"secret": h.secret.shown()}, headers=h.same_origin(), allow_redirects=False
    )
    cookie = login.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert h.secret.shown() not in cookie and "Max-Age" not in cookie and "expires" not in cookie.lower()


@pytest.mark.parametrize(("method", "path"), [("GET", "/nowhere"), ("POST", "/approve/x"), ("GET", "/.env")])
async def test_an_address_the_page_does_not_have_is_refused_with_page_not_found(
    ready: tuple[Harness, dict[str, str]], method: str, path: str
) -> None:
    h, _ = ready
    async with refused_once(h, "page_not_found"):
        response = await h.client.request(method, path, headers=h.same_origin(), allow_redirects=False)
        assert response.status == 404
        assert response.headers.getall("Fleetwatch-Code") == ["page_not_found"]
        text = await response.text()
        assert "No such page here: nothing changed" in text and "Refused: nothing changed" not in text


async def test_every_refusal_carries_its_one_code_in_a_header(ready: tuple[Harness, dict[str, str]]) -> None:
    h, form = ready
    answers = {
        "bad_host": await h.client.get("/", headers={"Host": "evil.example"}),
        "method_not_allowed": await h.client.get("/approve", allow_redirects=False),
        "cross_site": await h.client.post("/approve", data=form, allow_redirects=False),
    }
    for code, response in answers.items():
        assert response.headers.getall("Fleetwatch-Code") == [code], code
    page = await h.client.get("/")
    assert page.status == 200 and "Fleetwatch-Code" not in page.headers


@pytest.mark.parametrize("content_type", UNREADABLE_FORMS)
async def test_a_body_that_is_no_readable_form_is_refused_as_a_form_without_its_token(
    ready: tuple[Harness, dict[str, str]], content_type: str
) -> None:
    """Found by the fuzzing (issue 15): a multipart body without a boundary answered 500."""
    h, _ = ready
    async with refused_once(h, "csrf_failed"):
        response = await h.client.post(
            "/approve",
            data=b"\xff\xfe not a form",
            headers={**h.same_origin(), "Content-Type": content_type},
            allow_redirects=False,
        )
        assert response.status == 403
        assert response.headers.getall("Fleetwatch-Code") == ["csrf_failed"]
