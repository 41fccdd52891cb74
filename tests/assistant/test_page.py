"""The local ask page: its own secret once per browser session (with the slow-down), every
session, refusal and question recorded with the uid the kernel names for the browser, the Host,
origin and form-token guards, escaping, and the real keyword path."""

from __future__ import annotations

import asyncio
import io
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

from services.assistant.page import COOKIE, PRESETS, build_page_app, serve_page
from services.assistant.service import AskedBy
from shared.errors import Code
from shared.web.guards import ASK_NAMES
from shared.web.local_http import serve_loopback
from shared.web.page_secret import PageSecret, SecretSink, read_secret_file
from shared.web.page_style import page_css
from shared.web.throttle import ROWS_PER_WINDOW
from shared.wire.assistant import Answer, ModelInfo, ProposalLine, RefusalLine
from shared.wire.formats import NAME
from tests.other_uid import needs_root, other_user, request_as
from tests.support import UNREADABLE_FORMS


@dataclass
class FakeAssistant:
    """Answers every question with fixed hostile text and records what it was asked."""

    asked: list[tuple[str, str | None, AskedBy | None]] = field(default_factory=list)
    answered_by: str = "model"
    model_info: ModelInfo = field(default_factory=lambda: ModelInfo(kind="model"))

    async def ask(
        self, question: str, language: str | None = None, *, asked_by: AskedBy | None = None
    ) -> Answer:
        self.asked.append((question, language, asked_by))
        line = ProposalLine(proposal_id="p_1", state="waiting_for_approval", text="Proposal p_1 <b>x</b>")
        return Answer(
            text="Room <script>alert(1)</script> \u202eevil\n\n2 rooms:\n- A\n- B\nDone.",
            language="en",
            answered_by=self.answered_by,
            proposals=(line,),
            refusals=(RefusalLine(code="queue_full", text="Not proposed: reboot in B: the queue is full."),),
        )


@dataclass
class RecordingAudit:
    """The page's audit rows, as `AssistantAudit` would send them to approval.sock."""

    refused: list[tuple[str, Code, int | None]] = field(default_factory=list)
    sessions: list[tuple[str, int | None]] = field(default_factory=list)
    signed_in_uids: list[int | None] = field(default_factory=list)
    unrecorded: list[int | None] = field(default_factory=list)

    async def page_refused(
        self,
        operation: str,
        code: Code,
        uid: int | None,
        *,
        signed_in_uid: int | None = None,
        unrecorded_before: int | None = None,
    ) -> None:
        self.refused.append((operation, code, uid))
        self.signed_in_uids.append(signed_in_uid)
        self.unrecorded.append(unrecorded_before)

    async def session_started(self, page_session: str, uid: int | None) -> None:
        self.sessions.append((page_session, uid))


@dataclass
class Page:
    url: str
    secret: str
    audit: RecordingAudit


@pytest.fixture
def fake() -> FakeAssistant:
    return FakeAssistant()


@pytest.fixture
async def page(fake: FakeAssistant, tmp_path: Path) -> AsyncIterator[Page]:
    audit = RecordingAudit()
    sink = SecretSink.for_stream(tmp_path / "ask-secret", io.StringIO(), label="Ask page")
    async with serve_page(fake, 0, sink=sink, audit=audit) as url:
        yield Page(url.rstrip("/"), read_secret_file(tmp_path / "ask-secret"), audit)
    assert not (tmp_path / "ask-secret").exists()


def _same_origin(url: str) -> dict[str, str]:
    return {"Sec-Fetch-Site": "same-origin", "Origin": url}


async def _login(http: httpx2.AsyncClient, page: Page, secret: str | None = None) -> httpx2.Response:
    return await http.post(
        f"{page.url}/login",
        data={"secret": page.secret if secret is None else secret},
        headers=_same_origin(page.url),
    )


async def _form(http: httpx2.AsyncClient, page: Page) -> str:
    """Sign in (the right secret), then the ask form's token."""
    assert (await _login(http, page)).status_code == 303
    response = await http.get(f"{page.url}/")
    assert response.status_code == 200
    match = re.search(r'name="token" value="([0-9a-f]{64})"', response.text)
    assert match is not None
    return match.group(1)


async def test_without_the_secret_the_page_shows_only_the_secret_form(page):
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{page.url}/")
    assert response.status_code == 200 and 'action="/login"' in response.text
    assert 'action="/ask"' not in response.text and 'name="token"' not in response.text
    assert str(page.audit) and page.audit.refused == []  # a GET writes nothing


async def test_a_question_without_a_session_is_refused_and_recorded_with_the_askers_uid(page, fake):
    async with httpx2.AsyncClient() as http:
        await http.get(f"{page.url}/")  # the cookie and what a form token would be: not enough
        response = await http.post(
            f"{page.url}/ask", data={"question": "What's offline?"}, headers=_same_origin(page.url)
        )
    assert response.status_code == 401 and fake.asked == []
    assert "Enter the page&#39;s secret first" in response.text and "secret_required" not in response.text
    assert page.audit.refused == [("ask", Code.SECRET_REQUIRED, os.getuid())]


async def test_a_wrong_secret_is_refused_then_slowed_down_and_each_try_is_recorded(page, fake):
    async with httpx2.AsyncClient() as http:
        codes = [(await _login(http, page, "WRONG-WRONG-WRONG")).status_code for _ in range(4)]
    assert codes == [403, 403, 403, 429]
    assert [r[1] for r in page.audit.refused] == [Code.SECRET_WRONG] * 3 + [Code.SLOW_DOWN]
    assert {r[2] for r in page.audit.refused} == {os.getuid()} and page.audit.sessions == []


async def test_the_right_secret_begins_a_session_recorded_with_the_browsers_uid(page):
    async with httpx2.AsyncClient() as http:
        response = await _login(http, page)
        assert response.status_code == 303 and COOKIE in response.cookies
        answered = await http.get(f"{page.url}/")
    assert 'action="/ask"' in answered.text
    ((session, uid),) = page.audit.sessions
    assert re.fullmatch(r"k-[0-9a-f]{32}", session) and uid == os.getuid()
    assert session not in response.headers.get("set-cookie", "")


async def test_a_question_names_its_page_session_and_the_askers_uid(page, fake):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask", data={"token": token, "question": "hi"}, headers=_same_origin(page.url)
        )
    assert response.status_code == 200
    ((question, _, asked_by),) = fake.asked
    assert question == "hi" and asked_by == AskedBy(uid=os.getuid(), page_session=page.audit.sessions[0][0])


async def test_a_session_from_another_page_run_is_not_a_session(fake, tmp_path):
    async with httpx2.AsyncClient() as http:
        sink = SecretSink.for_stream(tmp_path / "one", io.StringIO())
        async with serve_page(fake, 0, sink=sink) as url:
            first = Page(url.rstrip("/"), read_secret_file(tmp_path / "one"), RecordingAudit())
            await _login(http, first)
        sink = SecretSink.for_stream(tmp_path / "two", io.StringIO())
        async with serve_page(fake, 0, sink=sink) as url:
            cookie = http.cookies.get(COOKIE)
            response = await http.post(
                f"{url.rstrip('/')}/ask",
                data={"question": "hi"},
                headers=_same_origin(url.rstrip("/")),
            )  # cookies are not per port: the jar sends the first run's cookie here
    assert cookie and response.status_code == 401 and fake.asked == []


async def test_the_keyword_buttons_are_there_under_a_strict_policy(page):
    async with httpx2.AsyncClient() as http:
        await _form(http, page)
        response = await http.get(f"{page.url}/")
    assert response.status_code == 200
    assert "script-src" not in response.headers["Content-Security-Policy"]
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    for preset in PRESETS:
        assert f'value="{preset.replace(chr(39), "&#39;")}"' in response.text


async def test_a_foreign_host_is_refused(page, fake):
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{page.url}/", headers={"Host": "evil.example"})
        posted = await http.post(
            f"{page.url}/ask", headers={"Host": "evil.example", **_same_origin(page.url)}
        )
    assert response.status_code == posted.status_code == 400
    assert (
        response.text.startswith("The page was reached by a name it does not answer to") and fake.asked == []
    )
    assert "bad_host" not in response.text
    assert [r[1] for r in page.audit.refused] == [Code.BAD_HOST, Code.BAD_HOST]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "null"},
    ],
)
async def test_a_post_not_from_the_page_itself_is_refused(page, fake, headers):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask", data={"token": token, "question": "hi"}, headers=headers
        )
        login = await http.post(f"{page.url}/login", data={"secret": page.secret}, headers=headers)
    assert response.status_code == login.status_code == 403 and fake.asked == []
    assert response.text.startswith("The request did not come from this page itself.")


async def test_a_post_without_the_form_token_of_this_session_is_refused(page, fake):
    async with httpx2.AsyncClient() as http, httpx2.AsyncClient() as other:
        theirs = await _form(other, page)
        await _form(http, page)
        wrong = await http.post(
            f"{page.url}/ask", data={"token": theirs, "question": "hi"}, headers=_same_origin(page.url)
        )
        missing = await http.post(f"{page.url}/ask", data={"question": "hi"}, headers=_same_origin(page.url))
    assert wrong.status_code == missing.status_code == 403
    assert wrong.text.startswith("The form does not belong to this page") and fake.asked == []


async def test_get_on_the_ask_action_changes_nothing(page, fake):
    async with httpx2.AsyncClient() as http:
        await _form(http, page)
        response = await http.get(f"{page.url}/ask", params={"question": "hi"})
    assert response.status_code == 405 and fake.asked == []


async def test_a_large_body_is_refused(page, fake):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask", data={"token": token, "question": "x" * 20_000}, headers=_same_origin(page.url)
        )
    assert response.status_code == 413 and fake.asked == []


async def test_an_answer_is_escaped_and_hidden_characters_are_shown(page, fake):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask",
            data={"token": token, "preset": "¿Qué necesita atención?", "question": "", "language": "es"},
            headers=_same_origin(page.url),
        )
    assert response.status_code == 200
    assert [(q, lang) for q, lang, _ in fake.asked] == [("¿Qué necesita atención?", "es")]
    assert "<script>" not in response.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert "\u202e" not in response.text and "⟦U+202E⟧" in response.text
    assert "Proposal p_1 &lt;b&gt;x&lt;/b&gt;" in response.text


async def test_the_page_answers_with_the_real_keyword_path(make_assistant, tmp_path):
    assistant = make_assistant(model_client=None)
    sink = SecretSink.for_stream(tmp_path / "ask-secret", io.StringIO())
    async with serve_page(assistant, 0, sink=sink) as url, httpx2.AsyncClient() as http:
        page = Page(url.rstrip("/"), read_secret_file(tmp_path / "ask-secret"), RecordingAudit())
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask",
            data={"token": token, "question": "What's offline?", "language": ""},
            headers=_same_origin(page.url),
        )
    assert response.status_code == 200
    assert (
        "<p>│ 2 rooms are offline:</p>" in response.text
        and "<p>│ - “ENG 210”: offline for 3 h 00 min" in response.text
    )
    assert '<p class="by">Answered by the keyword answer (no model; read-only).</p>' in response.text


async def _answer_page(page: Page, question: str = "What's offline?") -> str:
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask", data={"token": token, "question": question}, headers=_same_origin(page.url)
        )
    assert response.status_code == 200
    return response.text


async def test_the_ask_page_uses_the_approval_pages_stylesheet(page):
    async with httpx2.AsyncClient() as http:
        css = await http.get(f"{page.url}/page.css")
        html = (await http.get(f"{page.url}/")).text  # the secret form: the same look
    assert css.status_code == 200 and css.content == page_css()
    assert b"header.top" in css.content and b".card" in css.content and b".answer" in css.content
    assert '<header class="top">' in html and '<link rel="stylesheet" href="/page.css">' in html


async def test_an_answer_is_plain_quoted_paragraphs_never_monospace(page):
    html = await _answer_page(page)
    assert "<pre" not in html and "monospace" not in html
    assert "<p>│ 2 rooms:</p>\n<p>│ - A</p>\n<p>│ - B</p>" in html and "<p>│ Done.</p>" in html
    assert '<li class="refusal">Not proposed: reboot in B: the queue is full.</li>' in html


@pytest.mark.parametrize(
    ("answered_by", "words"),
    [
        ("model", "Answered by the model."),
        ("demo_model", "Answered by the demo model: the lab&#39;s stand-in, not a real model."),
        ("keyword", "Answered by the keyword answer (no model; read-only)."),
    ],
)
async def test_the_page_says_which_answered(page, fake, answered_by, words):
    fake.answered_by = answered_by
    html = await _answer_page(page)
    assert f'<p class="by">{words}</p>' in html


async def test_a_question_that_is_too_long_or_blank_is_refused_in_words(page, fake):
    said = {
        ("es", " "): "La pregunta está vacía: escríbala con palabras, por ejemplo «¿Qué necesita atención?»",
        ("en", ""): "The question is empty: write it in words, e.g. “What needs attention?”",
        ("en", "x" * 2001): "The question has 2001 characters; ask it in at most 2000.",
        ("es", "x" * 2001): "La pregunta tiene 2001 caracteres; hágala en 2000 como máximo.",
    }
    async with httpx2.AsyncClient() as http:
        for (language, question), words in said.items():
            token = await _form(http, page)
            response = await http.post(
                f"{page.url}/ask",
                data={"token": token, "question": question, "language": language},
                headers=_same_origin(page.url),
            )
            assert response.status_code == 400 and fake.asked == []
            assert words in response.text and "invalid_message" not in response.text, response.text


async def test_every_refusal_names_its_one_code_in_a_header_and_an_unknown_address_is_page_not_found(
    page, fake
):
    url = page.url
    async with httpx2.AsyncClient() as http:
        answers = {
            "secret_required": await http.post(
                f"{url}/ask", data={"question": "hi"}, headers=_same_origin(url)
            )
        }
        token = await _form(http, page)
        answers |= {
            "bad_host": await http.get(f"{url}/", headers={"Host": "evil.example"}),
            "method_not_allowed": await http.get(f"{url}/ask"),
            "page_not_found": await http.get(f"{url}/nowhere"),
            "cross_site": await http.post(f"{url}/ask", data={"token": token, "question": "hi"}),
            "invalid_message": await http.post(
                f"{url}/ask", data={"token": token, "question": " "}, headers=_same_origin(url)
            ),
        }
    for code, response in answers.items():
        assert response.status_code >= 400 and response.headers.get_list("Fleetwatch-Code") == [code], code
    assert answers["page_not_found"].status_code == 404 and fake.asked == []
    assert answers["method_not_allowed"].status_code == 405
    refused = {code for _, code, _ in page.audit.refused}
    assert {Code.PAGE_NOT_FOUND, Code.METHOD_NOT_ALLOWED, Code.BAD_HOST, Code.CROSS_SITE} <= refused


@pytest.mark.parametrize("content_type", UNREADABLE_FORMS)
async def test_a_body_that_is_no_readable_form_is_refused_as_a_form_without_its_token(
    page, fake, content_type
):
    """Found by the fuzzing (issue 15): a multipart body without a boundary answered 500."""
    async with httpx2.AsyncClient() as http:
        await _form(http, page)
        asked = await http.post(
            f"{page.url}/ask",
            content=b"\xff\xfe not a form",
            headers={**_same_origin(page.url), "Content-Type": content_type},
        )
        login = await http.post(
            f"{page.url}/login",
            content=b"\xff\xfe not a form",
            headers={**_same_origin(page.url), "Content-Type": content_type},
        )
    assert (asked.status_code, asked.headers.get_list("Fleetwatch-Code")) == (403, ["csrf_failed"])
    assert (login.status_code, login.headers.get_list("Fleetwatch-Code")) == (403, ["secret_wrong"])
    assert fake.asked == []


async def test_a_refusal_is_recorded_under_an_operation_of_the_page_never_the_address_sent(page):
    """Found on the way (issue 15): a POST to an address the page does not have was recorded
    under that address, which approval.sock refuses as a name, so the refusal lost its row."""
    async with httpx2.AsyncClient() as http:
        for path in ("/Evil-Path.x", "/ask/more", "/login%00"):
            await http.post(f"{page.url}{path}", data={"q": "1"}, headers=_same_origin(page.url))
        await http.post(f"{page.url}/Evil", headers={"Host": "evil.example"})
    operations = [operation for operation, _, _ in page.audit.refused]
    assert len(operations) == 4
    assert all(re.fullmatch(NAME, operation) for operation in operations), operations
    assert set(operations) == {"unknown"}


async def test_the_ask_page_is_localhost_only_so_no_approval_cookie_is_sent_to_it(page, fake):
    """Issue 24 #1: a browser sends a cookie to every port of its host, and the approval page
    sets its cookie on 127.0.0.1 (and [::1]); the ask page prints and answers ``localhost``
    only, sends a GET naming a loopback address to its own name (setting no cookie), and
    refuses anything else."""
    port = int(page.url.rsplit(":", 1)[1])
    assert page.url == f"http://localhost:{port}"
    async with httpx2.AsyncClient() as http:
        for host in (f"127.0.0.1:{port}", f"[::1]:{port}"):
            response = await http.get(f"http://127.0.0.1:{port}/wall", headers={"Host": host})
            assert response.status_code == 307 and response.headers["Location"] == f"{page.url}/"
            assert "set-cookie" not in response.headers
            posted = await _login(http, Page(f"http://{host}", page.secret, page.audit))
            assert posted.status_code == 400 and posted.headers["Fleetwatch-Code"] == "bad_host"
    assert page.audit.sessions == [] and fake.asked == []


@needs_root
async def test_the_ask_cookie_replayed_by_another_uid_is_refused_and_ends_the_session(page, fake):
    port = int(page.url.rsplit(":", 1)[1])
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        cookie = http.cookies[COOKIE]
        headers = {
            **_same_origin(page.url),
            "Host": f"localhost:{port}",
            "Cookie": f"{COOKIE}={cookie}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        answer = await asyncio.to_thread(
            request_as, "127.0.0.1", port, "POST", "/ask", headers, f"token={token}&question=hi"
        )
        assert answer["status"] == 403 and answer["headers"]["Fleetwatch-Code"] == "session_not_yours"
        assert fake.asked == []
        assert page.audit.refused[-1] == ("ask", Code.SESSION_NOT_YOURS, other_user().pw_uid)
        assert page.audit.signed_in_uids[-1] == os.getuid()
        again = await http.get(f"{page.url}/")  # ended for its own uid too
        assert 'action="/login"' in again.text and 'action="/ask"' not in again.text


@needs_root
async def test_another_users_wrong_secrets_never_slow_an_operator_and_leave_capped_rows(fake):
    """Issue 24 #7 on the ask page: another local user posts 40 wrong secrets; the operator's
    right secret still begins a session, and that user's refusals leave `ROWS_PER_WINDOW` rows
    (the clock does not move here)."""
    audit = RecordingAudit()
    secret = PageSecret.new()
    app = build_page_app(fake.ask, secret=secret, audit=audit, clock=lambda: 1000.0)
    async with serve_loopback(app, 0, ASK_NAMES[0]) as base:
        port = int(base.rsplit(":", 1)[1])
        headers = {
            **_same_origin(base),
            "Host": f"localhost:{port}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        answer = await asyncio.to_thread(
            request_as, "127.0.0.1", port, "POST", "/login", headers, "secret=nope", times=40
        )
        assert answer["status"] == 429
        async with httpx2.AsyncClient() as http:
            response = await _login(http, Page(base, secret.shown(), audit))
    assert response.status_code == 303
    assert [uid for _, _, uid in audit.refused] == [other_user().pw_uid] * ROWS_PER_WINDOW
    assert [uid for _, uid in audit.sessions] == [os.getuid()]
