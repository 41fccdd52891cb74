"""The local ask page: Host, origin and form-token guards, escaping, and the real keyword path."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx2
import pytest

from services.assistant.page import COOKIE, PRESETS, serve_page
from shared.wire.assistant import Answer, ProposalLine


@dataclass
class FakeAssistant:
    """Answers every question with fixed hostile text and records what it was asked."""

    asked: list[tuple[str, str | None]] = field(default_factory=list)

    async def ask(self, question: str, language: str | None = None) -> Answer:
        self.asked.append((question, language))
        line = ProposalLine(proposal_id="p_1", state="waiting_for_approval", text="Proposal p_1 <b>x</b>")
        return Answer(
            text="Room <script>alert(1)</script> \u202eevil",
            language="en",
            answered_by="model",
            proposals=(line,),
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
    assert response.text.startswith("bad_host") and fake.asked == []


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
    assert response.status_code == 403 and response.text.startswith("cross_site") and fake.asked == []


async def test_a_post_without_the_form_token_of_this_session_is_refused(page, fake):
    async with httpx2.AsyncClient() as http, httpx2.AsyncClient() as other:
        theirs = await _form(other, page)
        await _form(http, page)
        wrong = await http.post(
            f"{page}/ask", data={"token": theirs, "question": "hi"}, headers=_same_origin(page)
        )
        missing = await http.post(f"{page}/ask", data={"question": "hi"}, headers=_same_origin(page))
    assert wrong.status_code == missing.status_code == 403
    assert wrong.text.startswith("csrf_failed") and fake.asked == []


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
    assert "2 rooms are offline:" in response.text and "- ENG 210: offline for 3 h 00 min" in response.text


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
