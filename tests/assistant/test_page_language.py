"""Issue 28 #6: the ask page speaks one language, the request's (``?lang=``, else the switch's
cookie, else ``Accept-Language``), has the approval page's switch, and links to the approval
page after a proposal."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from services.assistant.page import serve_page
from shared.web.page_secret import SecretSink, read_secret_file
from shared.wire.assistant import Answer, NoteLine
from tests.assistant.test_page import FakeAssistant, Page, RecordingAudit, _form, _same_origin

APPROVAL_URL = "http://127.0.0.1:8790/"
WORDS = {
    "en": ("Ask the assistant", "Question", "What needs attention?", "Answer language", ">Ask</button>"),
    "es": (
        "Preguntar al asistente",
        "Pregunta",
        "¿Qué necesita atención?",
        "Idioma de la respuesta",
        ">Preguntar</button>",
    ),
}
LOGIN = {"en": "Enter the ask page", "es": "Escriba el secreto de la página de preguntas"}
ANSWERED = {
    "en": (
        "The assistant&#39;s words (not checked by Fleetwatch):",
        "Open the approval page to approve or deny it",
    ),
    "es": (
        "Palabras del asistente (Fleetwatch no las comprobó):",
        "Abra la página de aprobación para aprobarlo o rechazarlo",
    ),
}


class NoProposal(FakeAssistant):
    async def ask(self, question, language=None, *, asked_by=None) -> Answer:
        return Answer(text="All calm.", language=language or "en", answered_by="model")


async def _serve(tmp_path: Path, assistant, approval_url: str | None = APPROVAL_URL) -> AsyncIterator[Page]:
    sink = SecretSink.for_stream(tmp_path / "ask-secret", io.StringIO())

    async def approval_page() -> str | None:
        return approval_url

    async with serve_page(assistant, 0, sink=sink, approval_page=approval_page) as url:
        yield Page(url.rstrip("/"), read_secret_file(tmp_path / "ask-secret"), RecordingAudit())


async def asked(page: Page, *, language: str | None = None, question: str = "x") -> httpx2.Response:
    """Sign in, then ask `question` on the page in `language` (``?lang=`` and the form's
    answer language; None: neither)."""
    async with httpx2.AsyncClient() as http:
        token = await _form(http, page)
        data = {"token": token, "question": question, **({"language": language} if language else {})}
        path = f"/ask?lang={language}" if language else "/ask"
        return await http.post(f"{page.url}{path}", data=data, headers=_same_origin(page.url))


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[Page]:
    async for served in _serve(tmp_path, FakeAssistant()):
        yield served


def _only(html: str, language: str) -> None:
    other = "es" if language == "en" else "en"
    for words in WORDS[language]:
        assert words in html, words
    for words in WORDS[other]:
        assert words not in html, words
    assert " / " not in html  # no label said twice, side by side


@pytest.mark.parametrize(
    ("how", "language"),
    [
        ({"path": "/?lang=es"}, "es"),
        ({"path": "/", "headers": {"Accept-Language": "es-MX,es;q=0.9,en;q=0.5"}}, "es"),
        ({"path": "/?lang=en", "headers": {"Accept-Language": "es-MX"}}, "en"),
        ({"path": "/"}, "en"),
    ],
)
async def test_the_ask_page_speaks_the_requests_language_only(page, how, language):
    async with httpx2.AsyncClient() as http:
        before = await http.get(f"{page.url}{how['path']}", headers=how.get("headers", {}))
        await _form(http, page)
        html = (await http.get(f"{page.url}{how['path']}", headers=how.get("headers", {}))).text
    assert LOGIN[language] in before.text and LOGIN["es" if language == "en" else "en"] not in before.text
    _only(html, language)
    assert f'<html lang="{"es-419" if language == "es" else "en"}">' in html


async def test_the_switch_is_the_approval_pages_and_its_choice_is_kept(page):
    async with httpx2.AsyncClient() as http:
        await _form(http, page)
        english = (await http.get(f"{page.url}/")).text
        switched = await http.get(f"{page.url}/?lang=es")
        kept = (await http.get(f"{page.url}/", headers={"Accept-Language": "en"})).text
    assert '<a href="/?lang=es" lang="es-419" hreflang="es-419">Español</a>' in english
    assert '<strong lang="en">English</strong>' in english
    assert '<a href="/?lang=en" lang="en" hreflang="en">English</a>' in switched.text
    assert "fleetwatch_ask_language=es" in switched.headers["set-cookie"]
    _only(kept, "es")  # the cookie wins over Accept-Language


@pytest.mark.parametrize("language", ["en", "es"])
async def test_after_a_proposal_the_answer_links_to_the_approval_page(page, language):
    response = await asked(page, language=language, question="start recording")
    heading, link = ANSWERED[language]
    assert response.status_code == 200 and heading in response.text
    assert f'<a href="{APPROVAL_URL}" rel="noreferrer">{link}</a>' in response.text


async def test_without_the_approval_pages_address_the_answer_says_where_to_find_it(tmp_path):
    async for page in _serve(tmp_path, FakeAssistant(), approval_url=None):
        response = await asked(page, language="es")
    assert "en la dirección que mostró fleetwatch up" in response.text and "<a href" not in re.sub(
        r'<nav class="language".*?</nav>', "", response.text, flags=re.S
    )


async def test_an_answer_without_a_proposal_has_no_link(tmp_path):
    async for page in _serve(tmp_path, NoProposal()):
        response = await asked(page)
    assert "│ All calm." in response.text and APPROVAL_URL not in response.text


async def test_a_refusal_is_said_in_the_requests_language_only(page):
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{page.url}/login",
            data={"secret": "wrong"},
            headers={**_same_origin(page.url), "Accept-Language": "es"},
        )
    assert response.status_code == 403 and LOGIN["es"] in response.text
    assert LOGIN["en"] not in response.text and " / " not in response.text


@pytest.mark.parametrize(
    ("language", "heading"),
    [
        ("en", "Room notes (operators&#39; words):"),
        ("es", "Notas de las salas (palabras de los operadores):"),
    ],
)
async def test_the_rooms_notes_stand_apart_under_their_heading(tmp_path, language, heading):
    class WithNote(NoProposal):
        async def ask(self, question, language=None, *, asked_by=None) -> Answer:
            note = NoteLine(device_id="19012340204", text="“ENG 210”: Switch port dead")
            return Answer(text="ENG 210 is offline.", language="en", answered_by="model", notes=(note,))

    async for page in _serve(tmp_path, WithNote()):
        response = await asked(page, language=language)
    assert f'<h2>{heading}</h2>\n<ul><li class="note">“ENG 210”: Switch port dead</li></ul>' in response.text
