"""The local ask page: keyword buttons and a text box, at ``http://localhost:<FLEETWATCH_ASK_PORT>/``.

An aiohttp app run inside the assistant process (``python -m services.assistant --page``); it
calls the same `Assistant.ask` as assistant.sock and holds nothing secret but its own page
secret and two keys (in memory). Its own port; never the approval page, but the same
stylesheet (`shared.web.page_style`), so the two read as one product.

**Words.** The page speaks one language per request, chosen as the approval page chooses
(`shared.text.accept_language.page_language`: ``?lang=``, else the switch's cookie
`LANGUAGE_COOKIE`, else ``Accept-Language``), every word from the one catalogue (the templates
through Jinja's i18n extension); the header has the approval page's switch. An answer is shown
as the model's quoted words (`shared.text.model_text.model_lines`, the one rule of every surface:
each line starts ``│ ``, a line imitating the product is marked), then, under Fleetwatch's own
heading, the code-built lines: each proposal with its recorded state, each change not proposed
and why; after a proposal, a link to the approval page (`approval_page`: its address as
approval.sock names it); the operators' notes on the rooms the answer names; then which
answered (the model, the lab's demo model, or the keyword answer). A refusal is a sentence, never a code.

**Where.** The page listens on both loopbacks, 127.0.0.1 and [::1], at its port
(`shared.web.local_http.serve_loopback`: either taken by anyone refuses the start, naming the
holder) and answers only the host name ``localhost``, which the approval page never answers: a
browser sends a cookie to every port of the host that set it, so the approval page's cookie
(host 127.0.0.1 or [::1]) is never sent here (issue 24). A GET naming 127.0.0.1 or [::1] is sent
to ``http://localhost:<port>/`` by a redirect that sets no cookie.

**Who may ask.** The loopback is open to every local user, so the page asks for its own secret
once per browser session, as the approval page does (`shared.web.page_secret`: printed on a
terminal, else written to ``FLEETWATCH_ASK_SECRET_FILE``, readable on a server by the operators'
group only), with the same slow-down for wrong entries, per uid (`shared.web.throttle`, which
also caps the refusal rows per uid). A right entry starts a session: the cookie holds a random
token, the page keeps only ``k-`` + HMAC(key, token) for 12 hours (a restart forgets them all),
bound to the uid that signed in (`shared.web.page_session`): a request from another uid is
refused ``session_not_yours`` (both uids recorded) and ends the session. Without a session the
page shows only the secret form; a question posted without one is refused (``secret_required``).

**What is recorded** (through approval.sock: the assistant holds no store; `PageAudit`): each
session begun (``ask_session_start``), each refusal (``refusal``, surface ``ask_page``: the
operation and code, never what was sent), and each question's ``ask`` row names its page
session. Each row also names the uid the kernel lists for the browser's connection
(`shared.web.loopback_peer`), so a person knocking without the secret is named by uid.

``GET /wall`` is the watch's wall screen (`services.assistant.watch.wall`): read-only, no form,
no secret, behind the same Host check and headers; it refreshes itself with a meta refresh.

Guards (`shared.web.guards`, the approval page's rules): every request's Host must be
``localhost:<port>`` (``bad_host``); every POST must come from the
page itself (``Sec-Fetch-Site``/``Origin``: ``cross_site``) and fit `MAX_BODY_BYTES`
(``body_too_large``); a question carries the form token bound to its session (``csrf_failed``).
GET changes nothing. The secret is checked by the handlers that need it, so a page added later
on this port for everyone (a wall screen) is not behind it. Templates autoescape; answer text
passes through `shared.text.display.visible` so hidden and bidi characters are shown, not obeyed.
Every response carries `SECURITY_HEADERS` (a strict CSP: no script at all).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import hashlib
import hmac
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import jinja2
from aiohttp import web

from services.assistant.server import MAX_QUESTION_CHARS, Asker
from services.assistant.service import AskedBy
from services.assistant.watch.wall import CSS as WALL_CSS
from shared.errors import Code, FleetwatchError
from shared.text.accept_language import page_language
from shared.text.answered_by import answered_by
from shared.text.ask_words import EXAMPLE_QUESTION, question_refusal
from shared.text.catalogue import N_, Words, say_text, translate, translations
from shared.text.change_words import why
from shared.text.changes import quoted_name
from shared.text.display import visible
from shared.text.languages import LANGUAGES, Language, language_of
from shared.text.model_text import MODEL_HEADING, NOTES_HEADING, RECORDED_HEADING, model_lines
from shared.web.forms import read_form
from shared.web.guards import (
    ASK_NAMES,
    CODE_HEADER,
    SECURITY_HEADERS,
    form_token,
    host_ok,
    loopback_redirect,
    new_key,
    post_origin_problem,
    token_ok,
)
from shared.web.local_http import serve_loopback
from shared.web.page_secret import PageSecret, SecretSink
from shared.web.page_session import NotYours, SessionOwners, request_uid
from shared.web.page_style import page_css
from shared.web.throttle import WrongSecretThrottle
from shared.wire.assistant import Answer

WallFunction = Callable[[str | None], Awaitable[Any]]
"""The wall screen's view in a language (`services.assistant.watch.runner.wall_for`)."""
ApprovalPage = Callable[[], Awaitable[str | None]]
"""The approval page's address as approval.sock names it (None: not serving, or not known)."""
MAX_BODY_BYTES: Final = 16 * 1024
COOKIE: Final = "fleetwatch_ask"
LANGUAGE_COOKIE: Final = "fleetwatch_ask_language"
"""The language the switch chose (``en`` or ``es``): a preference, never a secret."""
HTML_LANG: Final = {"en": "en", "es": "es-419"}
"""The ``lang`` attribute of each language's pages (as the approval page's)."""
SESSION_SECONDS: Final = 12 * 3600
"""A session ends 12 hours after the secret was entered (as the approval page's)."""
MAX_SESSIONS: Final = 1024
"""Sessions kept at once; the oldest is forgotten first."""
PRESETS: Final = (N_("What needs attention?"), N_("What's offline?"), N_("Next events"))
"""The keyword buttons (catalogue messages: each shown in the page's language)."""
STATUS: Final = {
    Code.BAD_HOST: 400,
    Code.CROSS_SITE: 403,
    Code.BODY_TOO_LARGE: 413,
    Code.CSRF_FAILED: 403,
    Code.SECRET_REQUIRED: 401,
    Code.SECRET_WRONG: 403,
    Code.SLOW_DOWN: 429,
    Code.SESSION_NOT_YOURS: 403,
    Code.PAGE_NOT_FOUND: 404,
    Code.METHOD_NOT_ALLOWED: 405,
}
SLOW_DOWN_WORDS: Final = N_("Too many wrong entries. Wait %(wait)s seconds, then try again.")
"""The slow-down in words with its wait (every other refusal: `shared.text.change_words.why`)."""
LOGIN_AGAIN: Final = frozenset(
    {Code.SECRET_REQUIRED, Code.SECRET_WRONG, Code.SLOW_DOWN, Code.SESSION_NOT_YOURS}
)
"""Refusals answered with the secret form again, saying why."""
_TEMPLATE_DIR: Final = Path(__file__).resolve().parent / "templates"


def _environment(language: Language | None) -> jinja2.Environment:
    """The templates' environment: autoescaping, undefined names an error; with `language`,
    the catalogue's words in it (``_("...")``) and its ``language``/``html_lang`` globals."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATE_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.i18n"],
    )
    if language is not None:
        env.install_gettext_translations(translations()[language], newstyle=True)
        env.globals["language"] = language
        env.globals["html_lang"] = HTML_LANG[language]
    return env


_TEMPLATES = _environment(None)
"""The wall screen's (its words come with its view)."""


class PageAudit(Protocol):
    """Where the page's audit rows go (`services.assistant.server.AssistantAudit`: approval.sock)."""

    async def page_refused(
        self,
        operation: str,
        code: Code,
        uid: int | None,
        *,
        signed_in_uid: int | None = None,
        unrecorded_before: int | None = None,
    ) -> None: ...

    async def session_started(self, page_session: str, uid: int | None) -> None: ...


class Sessions:
    """The page's sessions, in memory: ``k-`` + HMAC(key, cookie token) -> when it began
    (monotonic seconds), and the uid that began it (`SessionOwners`). At most `MAX_SESSIONS`;
    each lasts `SESSION_SECONDS`."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._key = new_key()
        self._clock = clock
        self._started: collections.OrderedDict[str, float] = collections.OrderedDict()
        self._owners = SessionOwners()

    def id_of(self, token: str) -> str:
        digest = hmac.new(self._key, token.encode("utf-8", "replace"), hashlib.sha256).hexdigest()
        return "k-" + digest[:32]

    def begin(self, uid: int | None) -> tuple[str, str]:
        """A new session begun by `uid`: (cookie token, session ID)."""
        token = secrets.token_urlsafe(32)
        session = self.id_of(token)
        self._started[session] = self._clock()
        self._owners.bind(session, uid)
        while len(self._started) > MAX_SESSIONS:
            self._owners.end(self._started.popitem(last=False)[0])
        return token, session

    def find(self, token: str | None, uid: int | None) -> str | NotYours | None:
        """The live session a cookie token names, `NotYours` when another uid than the one
        that began it sends it (the session is then ended), or None."""
        if not token or len(token) > 200:
            return None
        session = self.id_of(token)
        started = self._started.get(session)
        if started is None or not self._owners.live(session):
            return None
        if self._clock() - started >= SESSION_SECONDS:
            del self._started[session]
            self._owners.end(session)
            return None
        not_yours = self._owners.check(session, uid)
        if not_yours is not None:
            del self._started[session]
            return not_yours
        return session


@dataclass(frozen=True)
class PageParts:
    """Everything the handlers use, made once per app."""

    ask: Callable[..., Awaitable[Answer]]
    secret: PageSecret
    secret_hint: str | None
    form_key: bytes
    sessions: Sessions
    throttle: WrongSecretThrottle
    clock: Callable[[], float]
    audit: PageAudit | None
    css: bytes
    envs: dict[str, jinja2.Environment]
    approval_page: ApprovalPage | None = None


_PARTS: Final = web.AppKey("parts", PageParts)


_WALL: Final = web.AppKey("wall", Any)


class _Refused(Exception):
    def __init__(
        self, code: Code, operation: str, *, wait: int | None = None, signed_in_uid: int | None = None
    ) -> None:
        super().__init__(code)
        self.code = code
        self.operation = operation
        self.wait = wait
        self.signed_in_uid = signed_in_uid


def _port(request: web.Request) -> int:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if sockname else -1


def _session(request: web.Request, operation: str) -> str | None:
    """This request's live session, or None.

    Raises:
        _Refused: ``session_not_yours`` (another uid began it; it is now ended).
    """
    found = request.app[_PARTS].sessions.find(request.cookies.get(COOKIE), request_uid(request))
    if isinstance(found, NotYours):
        raise _Refused(Code.SESSION_NOT_YOURS, operation, signed_in_uid=found.signed_in_uid)
    return found


def language_of_request(request: web.Request) -> Language:
    """The request's language (`shared.text.accept_language.page_language`)."""
    return page_language(
        request.query.get("lang"),
        request.cookies.get(LANGUAGE_COOKIE),
        request.headers.get("Accept-Language"),
    )


def _render(request: web.Request, template: str, *, status: int = 200, **context: Any) -> web.Response:
    """`template` in the request's language; a ``?lang=`` choice is kept in a cookie."""
    lang = language_of_request(request)
    html = request.app[_PARTS].envs[lang].get_template(template).render(**context)
    response = web.Response(text=html, content_type="text/html", charset="utf-8", status=status)
    if request.query.get("lang") == lang:
        response.set_cookie(LANGUAGE_COOKIE, lang, samesite="Strict", path="/", httponly=True)
    return response


def _login(request: web.Request, *, status: int = 200, error: str | None = None) -> web.Response:
    parts = request.app[_PARTS]
    return _render(request, "ask_login.html", status=status, error=error, secret_hint=parts.secret_hint)


def _ask_form(
    request: web.Request, session: str, *, status: int = 200, approval_url: str | None = None, **context: Any
) -> web.Response:
    answer: Answer | None = context.get("answer")
    lang = language_of_request(request)
    said = language_of(answer.language) if answer else lang
    values = {
        "token": form_token(request.app[_PARTS].form_key, "ask", session),
        "presets": [translate(lang, preset) for preset in PRESETS],
        "max_chars": MAX_QUESTION_CHARS,
        "question": "",
        "chosen": "",
        "error": None,
        "answer": None,
        "answer_lang": HTML_LANG[said],
        "model_heading": translate(lang, MODEL_HEADING),
        "recorded_heading": translate(lang, RECORDED_HEADING),
        "model_lines": model_lines(answer.text, lang) if answer else [],
        "answered_by": answered_by(answer.answered_by, lang) if answer else "",
        "line_texts": [visible(line.text, 600) for line in answer.proposals] if answer else [],
        "refusal_texts": [visible(line.text, 600) for line in answer.refusals] if answer else [],
        "notes_heading": translate(lang, NOTES_HEADING),
        "note_texts": [visible(line.text, 600) for line in answer.notes] if answer else [],
        "approval_url": approval_url,
        **context,
    }
    return _render(request, "ask.html", status=status, **values)


def _said(words: Words, language: Language) -> str:
    """`words` as plain text in `language` (no times among them)."""
    return say_text(words, language, zone=dt.UTC, now=dt.datetime.now(dt.UTC))


def _preset(value: object) -> str | None:
    """The keyword button pressed, in any language's words, or None."""
    for preset in PRESETS:
        for lang in LANGUAGES:
            if value == translate(lang, preset):
                return str(value)
    return None


async def _index(request: web.Request) -> web.Response:
    session = _session(request, "page")
    return _login(request) if session is None else _ask_form(request, session)


async def _css(request: web.Request) -> web.Response:
    return web.Response(body=request.app[_PARTS].css, content_type="text/css", charset="utf-8")


async def _login_post(request: web.Request) -> web.Response:
    parts = request.app[_PARTS]
    uid, now = request_uid(request), parts.clock()
    form = await read_form(request)
    wait = parts.throttle.wait_left(uid, now)
    if wait > 0:
        raise _Refused(Code.SLOW_DOWN, "login", wait=int(wait + 0.999))
    typed = form.get("secret")
    if not isinstance(typed, str) or not parts.secret.matches(typed):
        wait = parts.throttle.failed(uid, now)
        raise _Refused(Code.SECRET_WRONG, "login", wait=int(wait + 0.999) or None)
    parts.throttle.succeeded(uid)
    token, session = parts.sessions.begin(uid)
    if parts.audit is not None:
        await parts.audit.session_started(session, uid)
    response = web.Response(status=303, headers={"Location": "/"})
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
    return response


async def _wall(request: web.Request) -> web.Response:
    """The wall screen (read-only, no form, no secret): see `services.assistant.watch.wall`."""
    source = request.app[_WALL]
    if source is None:
        return _plain(Code.WATCH_NOT_READY, 503)
    language = request.query.get("lang")
    view = await source(language if language in LANGUAGES else None)
    html = _TEMPLATES.get_template("wall.html").render(view=view)
    return web.Response(text=html, content_type="text/html", charset="utf-8")


async def _wall_css(request: web.Request) -> web.Response:
    return web.Response(text=WALL_CSS, content_type="text/css")


async def _ask(request: web.Request) -> web.Response:
    parts = request.app[_PARTS]
    form = await read_form(request)
    session = _session(request, "ask")
    if session is None:
        raise _Refused(Code.SECRET_REQUIRED, "ask")
    token = form.get("token")
    if not isinstance(token, str) or not token_ok(parts.form_key, token, "ask", session):
        raise _Refused(Code.CSRF_FAILED, "ask")
    preset, typed, language = form.get("preset"), form.get("question"), form.get("language")
    question = _preset(preset) or typed
    chosen = language if language in LANGUAGES else None
    page_lang = language_of_request(request)
    question = question if isinstance(question, str) else ""
    refusal = question_refusal(
        question,
        example=_said(quoted_name(translate(chosen or page_lang, EXAMPLE_QUESTION)), chosen or page_lang),
        most=MAX_QUESTION_CHARS,
    )
    if refusal is not None:
        error = _said(refusal, chosen or page_lang)
        response = _ask_form(request, session, status=400, error=error, chosen=chosen or "")
        response.headers[CODE_HEADER] = str(Code.INVALID_MESSAGE)
        return response
    asked_by = AskedBy(uid=request_uid(request), page_session=session)
    try:
        answer = await parts.ask(question, chosen, asked_by=asked_by)
    except FleetwatchError as exc:
        words = why(exc.code, chosen or page_lang)
        error = f"{words[:1].upper()}{words[1:]}."
        response = _ask_form(request, session, status=503, error=error, question=question)
        response.headers[CODE_HEADER] = str(exc.code)
        return response
    approval_url = None
    if answer.proposals and parts.approval_page is not None:
        approval_url = await parts.approval_page()
    return _ask_form(
        request, session, answer=answer, question=question, chosen=chosen or "", approval_url=approval_url
    )


async def _refusal(request: web.Request, refused: _Refused) -> web.Response:
    """The refusal's answer and its audit row (a wrong secret or a slow-down only within its
    uid's cap of rows: `shared.web.throttle`)."""
    parts = request.app[_PARTS]
    uid = request_uid(request)
    unrecorded: int | None = 0
    if refused.code in (Code.SECRET_WRONG, Code.SLOW_DOWN):
        unrecorded = parts.throttle.refusal_row(uid, parts.clock())
    if parts.audit is not None and unrecorded is not None:
        await parts.audit.page_refused(
            refused.operation,
            refused.code,
            uid,
            signed_in_uid=refused.signed_in_uid,
            unrecorded_before=unrecorded or None,
        )
    status = STATUS.get(refused.code, 400)
    if refused.code is Code.SLOW_DOWN:
        words = translate(language_of_request(request), SLOW_DOWN_WORDS) % {"wait": refused.wait or 1}
        response = _login(request, status=status, error=words)
    elif refused.code in LOGIN_AGAIN:
        response = _login(request, status=status, error=_sentence(refused.code, language_of_request(request)))
    else:
        response = _plain(refused.code, status, language_of_request(request))
    response.headers[CODE_HEADER] = str(refused.code)
    if refused.wait:
        response.headers["Retry-After"] = str(refused.wait)
    return response


def _sentence(code: Code, language: Language) -> str:
    """Why, in words (`shared.text.change_words.why`), in `language`: no code."""
    words = why(code, language)
    return f"{words[:1].upper()}{words[1:]}."


def _plain(code: Code, status: int, language: Language) -> web.Response:
    """A refused request: one sentence a person reads, in the request's language (no code in
    the words); the code, for a program, in `CODE_HEADER`."""
    response = web.Response(text=_sentence(code, language) + "\n", status=status)
    response.headers[CODE_HEADER] = str(code)
    return response


_POSTED: Final = {"/login": "login", "/ask": "ask"}
"""The page's POST addresses and the operation each refusal there is recorded under."""


def _operation(request: web.Request) -> str:
    """The operation a refusal is recorded under: ``page`` for a GET or HEAD of the page,
    ``login`` / ``ask`` for its two forms, ``unknown`` for anything else; never a value the
    browser sent (approval.sock takes only names of ours)."""
    if request.method in ("GET", "HEAD") and request.path in ("/", "/page.css", "/wall", "/wall.css"):
        return "page"
    if request.method == "POST":
        return _POSTED.get(request.path, "unknown")
    return "unknown"


@web.middleware
async def _guard(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    operation = _operation(request)
    host = request.headers.get("Host")
    to = loopback_redirect(request.method, host, _port(request), ASK_NAMES)
    if to is not None:
        response = web.Response(status=307, headers={"Location": to})
        response.headers.update(SECURITY_HEADERS)
        return response
    try:
        if not host_ok(host, _port(request), ASK_NAMES):
            raise _Refused(Code.BAD_HOST, operation)
        if request.method == "POST":
            if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
                raise _Refused(Code.BODY_TOO_LARGE, operation)
            if post_origin_problem(request.headers, request.headers["Host"]) is not None:
                raise _Refused(Code.CROSS_SITE, operation)
        try:
            response = await handler(request)
        except web.HTTPRequestEntityTooLarge as exc:
            raise _Refused(Code.BODY_TOO_LARGE, operation) from exc
        except web.HTTPMethodNotAllowed as exc:
            raise _Refused(Code.METHOD_NOT_ALLOWED, operation) from exc
        except web.HTTPNotFound as exc:
            raise _Refused(Code.PAGE_NOT_FOUND, operation) from exc
    except _Refused as refused:
        response = await _refusal(request, refused)
    response.headers.update(SECURITY_HEADERS)
    return response


def build_page_app(
    ask: Callable[..., Awaitable[Answer]],
    *,
    secret: PageSecret,
    audit: PageAudit | None = None,
    secret_hint: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    throttle: WrongSecretThrottle | None = None,
    wall: WallFunction | None = None,
    approval_page: ApprovalPage | None = None,
) -> web.Application:
    """The ask page's app. `ask(question, language, asked_by=...)` answers (usually
    `Assistant.ask`); `secret` guards it; `audit` records sessions and refusals; `secret_hint`
    says where the secret is (the file's path), shown on the secret form; `wall(language)` gives
    the wall screen's view (None: ``/wall`` answers 503); `approval_page()` the approval page's
    address, linked after a proposal (None, or it answers None: the link's words say how to
    find it)."""
    app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY_BYTES)
    app[_PARTS] = PageParts(
        ask=ask,
        secret=secret,
        secret_hint=secret_hint,
        form_key=new_key(),
        sessions=Sessions(clock),
        throttle=throttle or WrongSecretThrottle(),
        clock=clock,
        audit=audit,
        css=page_css(),
        envs={lang: _environment(lang) for lang in LANGUAGES},
        approval_page=approval_page,
    )
    app[_WALL] = wall
    app.router.add_get("/", _index)
    app.router.add_get("/page.css", _css)
    app.router.add_post("/login", _login_post)
    app.router.add_post("/ask", _ask)
    app.router.add_get("/wall", _wall)
    app.router.add_get("/wall.css", _wall_css)
    return app


@contextlib.asynccontextmanager
async def serve_page(
    assistant: Asker,
    port: int,
    *,
    sink: SecretSink,
    audit: PageAudit | None = None,
    wall: WallFunction | None = None,
    approval_page: ApprovalPage | None = None,
) -> AsyncIterator[str]:
    """Serve the ask page for `assistant` (and, with `wall`, the wall screen at ``/wall``) on
    both loopbacks at `port` (0: any free port) for the block, its secret published through
    `sink` (printed on a terminal, else written to its file, deleted at the end); yields its
    URL, ``http://localhost:<port>/``.

    Raises:
        FleetwatchError: ``socket_in_use`` when the port is taken on either loopback (naming
            its holder).
        OSError: the secret file cannot be written (the page must not run without it).
    """
    secret = PageSecret.new()
    hint = None if sink.terminal else str(sink.path)
    app = build_page_app(
        assistant.ask, secret=secret, audit=audit, secret_hint=hint, wall=wall, approval_page=approval_page
    )
    async with serve_loopback(app, port, ASK_NAMES[0]) as base_url:
        url = f"{base_url}/"
        sink.publish(secret, url)
        try:
            yield url
        finally:
            sink.withdraw()
