"""The local ask page: keyword buttons and a text box, on 127.0.0.1 (``FLEETWATCH_ASK_PORT``).

An aiohttp app run inside the assistant process (``python -m services.assistant --page``); it
calls the same `Assistant.ask` as assistant.sock and holds nothing secret but its form-token
key (in memory). Its own port; never the approval page, but the same stylesheet
(`shared.web.page_style`), so the two read as one product.

An answer is shown as plain paragraphs (a line starting ``- `` is a list item), says which
answered (the model, the lab's demo model, or the keyword answer), and lists the code-built
lines: each proposal with its recorded state, each change not proposed and why. A refusal of
the question itself is a sentence, never a code.

Guards (`shared.web.guards`, the approval page's rules): every request's Host must be
``127.0.0.1:<port>`` or ``localhost:<port>`` (``bad_host``); every POST must come from the
page itself (``Sec-Fetch-Site``/``Origin``: ``cross_site``), fit `MAX_BODY_BYTES`
(``body_too_large``) and carry the form token bound to the browser's session cookie
(``csrf_failed``). GET changes nothing. Templates autoescape; answer text passes through
`shared.text.display.visible` so hidden and bidi characters are shown, not obeyed. Every response
carries `SECURITY_HEADERS` (a strict CSP: no script at all).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jinja2
from aiohttp import web

from services.assistant.server import MAX_QUESTION_CHARS, Asker
from shared.errors import Code, FleetwatchError
from shared.text.change_words import why
from shared.text.display import visible
from shared.web.guards import (
    CODE_HEADER,
    SECURITY_HEADERS,
    form_token,
    host_ok,
    new_key,
    post_origin_problem,
    token_ok,
)
from shared.web.local_http import serve_local
from shared.web.page_style import page_css
from shared.wire.assistant import Answer

AskFunction = Callable[[str, str | None], Awaitable[Answer]]
MAX_BODY_BYTES: Final = 16 * 1024
COOKIE: Final = "fleetwatch_ask"
ANSWERED_BY: Final = {
    "model": ("Answered by the model.", "Respondió el modelo."),
    "demo_model": (
        "Answered by the demo model: the lab's stand-in, not a real model.",
        "Respondió el modelo de demostración: el sustituto del laboratorio, no un modelo real.",
    ),
    "keyword": (
        "Answered by the keyword answer (no model; read-only).",
        "Respondió la respuesta por palabras clave (sin modelo; solo lectura).",
    ),
}
"""Which path answered (`Answer.answered_by`), in words (en, es)."""
TOO_LONG: Final = (
    "A question is 1 to {n} characters.",
    "Una pregunta tiene de 1 a {n} caracteres.",
)
PRESETS: Final = (
    "What needs attention?",
    "What's offline?",
    "Next events",
    "¿Qué necesita atención?",
    "¿Qué está desconectado?",
    "Próximos eventos",
)
_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
_KEY: Final = web.AppKey("form_key", bytes)
_ASK: Final = web.AppKey("ask", Any)
_CSS: Final = web.AppKey("css", bytes)


@dataclass(frozen=True)
class Block:
    """One block of an answer: a paragraph (``items`` has one line) or a list (``is_list``)."""

    is_list: bool
    items: tuple[str, ...]


def blocks(text: str) -> list[Block]:
    """An answer's text as paragraphs and lists: each line is a paragraph, except that
    consecutive lines starting ``- `` make one list; blank lines only separate. Every line
    passes `shared.text.display.visible` (hidden and bidi characters shown, not obeyed)."""
    out: list[Block] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("- "):
            item = visible(line[2:], 2000)
            if out and out[-1].is_list:
                out[-1] = Block(True, (*out[-1].items, item))
            else:
                out.append(Block(True, (item,)))
        else:
            out.append(Block(False, (visible(line, 2000),)))
    return out


def _es(language: str | None) -> int:
    return 1 if language == "es" else 0


class _Refused(Exception):
    def __init__(self, status: int, code: Code) -> None:
        super().__init__(code)
        self.status = status
        self.code = code


def _port(request: web.Request) -> int:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if sockname else -1


def _session(request: web.Request) -> tuple[str, bool]:
    """The browser's session cookie, or a new one (True when new)."""
    cookie = request.cookies.get(COOKIE, "")
    if 20 <= len(cookie) <= 64 and cookie.replace("-", "").replace("_", "").isalnum():
        return cookie, False
    return secrets.token_urlsafe(32), True


def _render(request: web.Request, session: str, *, status: int = 200, **context: Any) -> web.Response:
    answer: Answer | None = context.get("answer")
    values = {
        "lang": answer.language if answer else "en",
        "token": form_token(request.app[_KEY], "ask", session),
        "presets": PRESETS,
        "max_chars": MAX_QUESTION_CHARS,
        "question": "",
        "language": "",
        "error": None,
        "answer": None,
        "blocks": blocks(answer.text) if answer else [],
        "answered_by": ANSWERED_BY.get(answer.answered_by, ANSWERED_BY["model"])[_es(answer.language)]
        if answer
        else "",
        "line_texts": [visible(line.text, 600) for line in answer.proposals] if answer else [],
        "refusal_texts": [visible(line.text, 600) for line in answer.refusals] if answer else [],
        **context,
    }
    html = _TEMPLATES.get_template("ask.html").render(**values)
    response = web.Response(text=html, content_type="text/html", charset="utf-8", status=status)
    response.set_cookie(COOKIE, session, httponly=True, samesite="Strict", path="/")
    return response


async def _index(request: web.Request) -> web.Response:
    session, _ = _session(request)
    return _render(request, session)


async def _css(request: web.Request) -> web.Response:
    return web.Response(body=request.app[_CSS], content_type="text/css", charset="utf-8")


async def _ask(request: web.Request) -> web.Response:
    host = request.headers.get("Host", "")
    if post_origin_problem(request.headers, host) is not None:
        raise _Refused(403, Code.CROSS_SITE)
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise _Refused(413, Code.BODY_TOO_LARGE)
    form = await request.post()
    session, new = _session(request)
    token = form.get("token")
    if new or not isinstance(token, str) or not token_ok(request.app[_KEY], token, "ask", session):
        raise _Refused(403, Code.CSRF_FAILED)
    preset, typed, language = form.get("preset"), form.get("question"), form.get("language")
    question = preset if isinstance(preset, str) and preset in PRESETS else typed
    chosen = language if language in ("en", "es") else None
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION_CHARS:
        error = TOO_LONG[_es(chosen)].format(n=MAX_QUESTION_CHARS)
        response = _render(request, session, status=400, error=error, language=chosen or "")
        response.headers[CODE_HEADER] = str(Code.INVALID_MESSAGE)
        return response
    try:
        answer = await request.app[_ASK](question, chosen)
    except FleetwatchError as exc:
        words = why(exc.code, chosen or "en")
        response = _render(
            request, session, status=503, error=f"{words[:1].upper()}{words[1:]}.", question=question
        )
        response.headers[CODE_HEADER] = str(exc.code)
        return response
    return _render(request, session, answer=answer, question=question, language=chosen or "")


@web.middleware
async def _guard(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    try:
        if not host_ok(request.headers.get("Host"), _port(request)):
            raise _Refused(400, Code.BAD_HOST)
        response = await handler(request)
    except _Refused as refused:
        response = _plain(refused.code, refused.status)
    except web.HTTPRequestEntityTooLarge:
        response = _plain(Code.BODY_TOO_LARGE, 413)
    except web.HTTPMethodNotAllowed:
        response = _plain(Code.METHOD_NOT_ALLOWED, 405)
    except web.HTTPNotFound:
        response = _plain(Code.PAGE_NOT_FOUND, 404)
    response.headers.update(SECURITY_HEADERS)
    return response


def _plain(code: Code, status: int) -> web.Response:
    """A refused request: one sentence a person reads, in English and Spanish (no code in the
    words); the code, for a program, in `CODE_HEADER`."""
    words = [why(code, language) for language in ("en", "es")]
    response = web.Response(text=" / ".join(f"{w[:1].upper()}{w[1:]}." for w in words) + "\n", status=status)
    response.headers[CODE_HEADER] = str(code)
    return response


def build_page_app(ask: AskFunction) -> web.Application:
    """The ask page's app; `ask(question, language)` answers (usually `Assistant.ask`)."""
    app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY_BYTES)
    app[_KEY] = new_key()
    app[_ASK] = ask
    app[_CSS] = page_css()
    app.router.add_get("/", _index)
    app.router.add_get("/page.css", _css)
    app.router.add_post("/ask", _ask)
    return app


@contextlib.asynccontextmanager
async def serve_page(assistant: Asker, port: int) -> AsyncIterator[str]:
    """Serve the ask page for `assistant` on ``127.0.0.1:port`` (0: any free port) for the
    block; yields its URL.

    Raises:
        FleetwatchError: ``socket_in_use`` when the port cannot be bound.
    """
    async with serve_local(build_page_app(assistant.ask), port) as base_url:
        yield f"{base_url}/"
