"""The local ask page: Host, origin and form-token guards, escaping, and the real keyword path."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx2
import pytest

from services.assistant.page import COOKIE, PRESETS, serve_page
from shared.web.page_style import page_css
from shared.wire.assistant import Answer, ModelInfo, ProposalLine, RefusalLine


@dataclass
class FakeAssistant:
    """Answers every question with fixed hostile text and records what it was asked."""

    asked: list[tuple[str, str | None]] = field(default_factory=list)
    answered_by: str = "model"
    model_info: ModelInfo = field(default_factory=lambda: ModelInfo(kind="model"))

    async def ask(self, question: str, language: str | None = None) -> Answer:
        self.asked.append((question, language))
        line = ProposalLine(proposal_id="p_1", state="waiting_for_approval", text="Proposal p_1 <b>x</b>")
        return Answer(
            text="Room <script>alert(1)</script> \u202eevil\n\n2 rooms:\n- A\n- B\nDone.",
            language="en",
            answered_by=self.answered_by,
            proposals=(line,),
            refusals=(RefusalLine(code="queue_full", text="Not proposed: reboot in B: the queue is full."),),
        )


@pytest.fixture
def fake() -> FakeAssistant:
    return FakeAssistant()


@pytest.fixture
async def page(fake: FakeAssistant) -> AsyncIterator[str]:
    async with serve_page(fake, 0) as url:
        yield url.rstrip("/")


async def _form(http: httpx2.AsyncClient, url: str) -> str:
    response = await http.get(f"{url}/")
    assert response.status_code == 200
    match = re.search(r'name="token" value="([0-9a-f]{64})"', response.text)
    assert match is not None
    return match.group(1)


def _same_origin(url: str) -> dict[str, str]:
    return {"Sec-Fetch-Site": "same-origin", "Origin": url}


async def test_the_page_shows_the_keyword_buttons_under_a_strict_policy(page):
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{page}/")
    assert response.status_code == 200 and COOKIE in response.cookies
    assert "script-src" not in response.headers["Content-Security-Policy"]
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    for preset in PRESETS:
        assert f'value="{preset.replace(chr(39), "&#39;")}"' in response.text


async def test_a_foreign_host_is_refused(page, fake):
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{page}/", headers={"Host": "evil.example"})
        posted = await http.post(f"{page}/ask", headers={"Host": "evil.example", **_same_origin(page)})
    assert response.status_code == posted.status_code == 400
    assert (
        response.text.startswith("The page was reached by a name it does not answer to") and fake.asked == []
    )
    assert "bad_host" not in response.text


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
        response = await http.post(f"{page}/ask", data={"token": token, "question": "hi"}, headers=headers)
    assert response.status_code == 403 and fake.asked == []
    assert response.text.startswith("The request did not come from this page itself.")


async def test_a_post_without_the_form_token_of_this_session_is_refused(page, fake):
    async with httpx2.AsyncClient() as http, httpx2.AsyncClient() as other:
        theirs = await _form(other, page)
        await _form(http, page)
        wrong = await http.post(
            f"{page}/ask", data={"token": theirs, "question": "hi"}, headers=_same_origin(page)
        )
        missing = await http.post(f"{page}/ask", data={"question": "hi"}, headers=_same_origin(page))
    assert wrong.status_code == missing.status_code == 403
    assert wrong.text.startswith("The form does not belong to this page") and fake.asked == []


async def test_get_on_the_ask_action_changes_nothing(page, fake):
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{page}/ask", params={"question": "hi"})
    assert response.status_code == 405 and fake.asked == []


async def test_a_large_body_is_refused(page, fake):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page}/ask", data={"token": token, "question": "x" * 20_000}, headers=_same_origin(page)
        )
    assert response.status_code == 413 and fake.asked == []


async def test_an_answer_is_escaped_and_hidden_characters_are_shown(page, fake):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page}/ask",
            data={"token": token, "preset": PRESETS[3], "question": "", "language": "es"},
            headers=_same_origin(page),
        )
    assert response.status_code == 200
    assert fake.asked == [(PRESETS[3], "es")]
    assert "<script>" not in response.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert "\u202e" not in response.text and "⟦U+202E⟧" in response.text
    assert "Proposal p_1 &lt;b&gt;x&lt;/b&gt;" in response.text


async def test_the_page_answers_with_the_real_keyword_path(make_assistant):
    assistant = make_assistant(model_client=None)
    async with serve_page(assistant, 0) as url, httpx2.AsyncClient() as http:
        base = url.rstrip("/")
        token = await _form(http, base)
        response = await http.post(
            f"{base}/ask",
            data={"token": token, "question": "What's offline?", "language": ""},
            headers=_same_origin(base),
        )
    assert response.status_code == 200
    assert (
        "<p>2 rooms are offline:</p>" in response.text
        and "<li>ENG 210: offline for 3 h 00 min" in response.text
    )
    assert '<p class="by">Answered by the keyword answer (no model; read-only).</p>' in response.text


async def _answer_page(page: str, question: str = "What's offline?") -> str:
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page}/ask", data={"token": token, "question": question}, headers=_same_origin(page)
        )
    assert response.status_code == 200
    return response.text


async def test_the_ask_page_uses_the_approval_pages_stylesheet(page):
    async with httpx2.AsyncClient() as http:
        css = await http.get(f"{page}/page.css")
        html = (await http.get(f"{page}/")).text
    assert css.status_code == 200 and css.content == page_css()
    assert b"header.top" in css.content and b".card" in css.content and b".answer" in css.content
    assert '<header class="top">' in html and '<link rel="stylesheet" href="/page.css">' in html


async def test_an_answer_is_plain_paragraphs_and_lists_never_monospace(page):
    html = await _answer_page(page)
    assert "<pre" not in html and "monospace" not in html
    assert "<p>2 rooms:</p>" in html and "<ul><li>A</li><li>B</li></ul>" in html and "<p>Done.</p>" in html
    assert '<li class="refusal">Not proposed: reboot in B: the queue is full.</li>' in html


@pytest.mark.parametrize(
    ("answered_by", "words"),
    [
        ("model", "Answered by the model."),
        ("demo_model", "Answered by the demo model: the lab&#39;s stand-in, not a real model."),
        ("keyword", "Answered by the keyword answer (no model; read-only)."),
    ],
)
async def test_the_page_says_which_answered(fake, answered_by, words):
    fake.answered_by = answered_by
    async with serve_page(fake, 0) as url:
        html = await _answer_page(url.rstrip("/"))
    assert f'<p class="by">{words}</p>' in html


async def test_a_question_that_is_too_long_or_blank_is_refused_in_words(page, fake):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        response = await http.post(
            f"{page}/ask",
            data={"token": token, "question": " ", "language": "es"},
            headers=_same_origin(page),
        )
    assert response.status_code == 400 and fake.asked == []
    assert (
        "Una pregunta tiene de 1 a 2000 caracteres." in response.text
        and "invalid_message" not in response.text
    )


async def test_every_refusal_names_its_one_code_in_a_header_and_an_unknown_address_is_page_not_found(
    page, fake
):
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        answers = {
            "bad_host": await http.get(f"{page}/", headers={"Host": "evil.example"}),
            "method_not_allowed": await http.get(f"{page}/ask"),
            "page_not_found": await http.get(f"{page}/nowhere"),
            "cross_site": await http.post(f"{page}/ask", data={"token": token, "question": "hi"}),
            "invalid_message": await http.post(
                f"{page}/ask", data={"token": token, "question": " "}, headers=_same_origin(page)
            ),
        }
    for code, response in answers.items():
        assert response.status_code >= 400 and response.headers.get_list("Fleetwatch-Code") == [code], code
    assert answers["page_not_found"].status_code == 404 and fake.asked == []
