"""The local ask page: keyword buttons and a text box, on 127.0.0.1 (``FLEETWATCH_ASK_PORT``).

An aiohttp app run inside the assistant process (``python -m services.assistant --page``); it
calls the same `Assistant.ask` as assistant.sock and holds nothing secret but its form-token
key (in memory). Its own port; never the approval page.

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
from pathlib import Path
from typing import Any, Final

import jinja2
from aiohttp import web

from services.assistant.server import MAX_QUESTION_CHARS, Asker
from shared.errors import MEANINGS, Code, FleetwatchError
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
from shared.wire.assistant import Answer

AskFunction = Callable[[str, str | None], Awaitable[Answer]]
MAX_BODY_BYTES: Final = 16 * 1024
COOKIE: Final = "fleetwatch_ask"
PRESETS: Final = (
    "What needs attention?",
    "What's offline?",
    "Next events",
    "¿Qué necesita atención?",
    "¿Qué está desconectado?",
    "Próximos eventos",
)
CSS: Final = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}"
    ".buttons button{margin:0 .5rem .5rem 0}input[type=text]{width:100%}"
    "pre{white-space:pre-wrap;background:#f4f4f4;padding:1rem}.error{color:#a00}.note{color:#555}"
)
_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
_KEY: Final = web.AppKey("form_key", bytes)
_ASK: Final = web.AppKey("ask", Any)


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
        "answer_text": visible(answer.text, 20_000) if answer else "",
        "line_texts": [visible(line.text, 500) for line in answer.proposals] if answer else [],
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
    return web.Response(text=CSS, content_type="text/css")


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
        error = f"{Code.INVALID_MESSAGE}: a question is 1 to {MAX_QUESTION_CHARS} characters"
        response = _render(request, session, status=400, error=error, language=chosen or "")
        response.headers[CODE_HEADER] = str(Code.INVALID_MESSAGE)
        return response
    try:
        answer = await request.app[_ASK](question, chosen)
    except FleetwatchError as exc:
        response = _render(
            request, session, status=503, error=f"{exc.code}: {MEANINGS[exc.code]}", question=question
        )
        response.headers[CODE_HEADER] = str(exc.code)
        return response
    return _render(request, session, answer=answer, question=question, language=chosen or "")


def _refusal(status: int, code: Code) -> web.Response:
    """A refusal: the code and its meaning as text, the code in `CODE_HEADER`."""
    response = web.Response(text=f"{code}: {MEANINGS[code]}\n", status=status)
    response.headers[CODE_HEADER] = str(code)
    return response


@web.middleware
async def _guard(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    try:
        if not host_ok(request.headers.get("Host"), _port(request)):
            raise _Refused(400, Code.BAD_HOST)
        response = await handler(request)
    except _Refused as refused:
        response = _refusal(refused.status, refused.code)
    except web.HTTPRequestEntityTooLarge:
        response = _refusal(413, Code.BODY_TOO_LARGE)
    except web.HTTPMethodNotAllowed:
        response = _refusal(405, Code.METHOD_NOT_ALLOWED)
    except web.HTTPNotFound:
        response = _refusal(404, Code.PAGE_NOT_FOUND)
    response.headers.update(SECURITY_HEADERS)
    return response


def build_page_app(ask: AskFunction) -> web.Application:
    """The ask page's app; `ask(question, language)` answers (usually `Assistant.ask`)."""
    app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY_BYTES)
    app[_KEY] = new_key()
    app[_ASK] = ask
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
