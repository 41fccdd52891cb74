"""What every handler of the page shares: the `Page` parts, rendering, and refusing.

`Page` is made once per app by `services.approval_web.page.app.build_page_app` and kept
under `PAGE`. `render` picks the language from ``Accept-Language``; `refuse` answers a refused
request with one ``refusal`` audit row and a page in plain words.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import functools
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from gettext import GNUTranslations
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite
import jinja2
from aiohttp import web

from services.approval_web.page.i18n import make_say, make_when
from services.approval_web.page.words import refusal_words
from shared.errors import Code
from shared.policy.loader import Policy, ToolPolicy
from shared.store.approvals import audit_refusal
from shared.store.db import StoreError
from shared.text.accept_language import page_language
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import Language
from shared.text.times import zone_name
from shared.web.guards import CODE_HEADER
from shared.web.page_secret import PageSecret
from shared.web.page_session import SessionOwners, request_uid
from shared.web.throttle import WrongSecretThrottle
from shared.wire.protocol import Message, Request

logger = logging.getLogger(__name__)

COOKIE = "fleetwatch_page"
"""The session cookie: HttpOnly, SameSite=Strict, Path=/, no expiry (a browser session)."""
LANGUAGE_COOKIE = "fleetwatch_language"
"""The language the switch chose (``en`` or ``es``): a preference, never a secret."""
ACTOR = "approval_web"
STATUS = {
    Code.BAD_HOST: 421,
    Code.METHOD_NOT_ALLOWED: 405,
    Code.PAGE_NOT_FOUND: 404,
    Code.BODY_TOO_LARGE: 413,
    Code.CROSS_SITE: 403,
    Code.CSRF_FAILED: 403,
    Code.SECRET_REQUIRED: 401,
    Code.SECRET_WRONG: 403,
    Code.SLOW_DOWN: 429,
    Code.SESSION_NOT_YOURS: 403,
    Code.STORE_BUSY: 503,
    Code.STORE_FULL: 503,
    Code.STORE_READ_ONLY: 503,
}
STORE_CODES = frozenset({Code.STORE_BUSY, Code.STORE_FULL, Code.STORE_READ_ONLY})
"""A store that cannot be written: the request is refused with its code and changes nothing."""

ConnFactory = Callable[[], AbstractAsyncContextManager[aiosqlite.Connection]]
"""Gives a fresh store connection for one request, closed when the block ends."""


class FactsSeen:
    """The binding facts of the cards this process showed, by facts hash (the newest `limit`),
    so an approval can record the facts its card showed without the form carrying them."""

    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        self._facts: collections.OrderedDict[str, dict[str, str]] = collections.OrderedDict()

    def remember(self, facts_hash: str, facts: dict[str, str]) -> None:
        self._facts[facts_hash] = dict(facts)
        self._facts.move_to_end(facts_hash)
        while len(self._facts) > self._limit:
            self._facts.popitem(last=False)

    def recall(self, facts_hash: str) -> dict[str, str] | None:
        """The facts shown with that hash, or None (forgotten, or another process's)."""
        facts = self._facts.get(facts_hash)
        return dict(facts) if facts is not None else None


R = TypeVar("R", bound=Message)


class PageExecutor(Protocol):
    """What the page asks the executor: `shared.wire.executor.ExecutorClient` in production
    (tests pass a recorder through `build_page_app`). Both raise `CallError`: the executor's
    code, ``service_unavailable`` (not reached: nothing ran) or ``service_no_answer`` (sent, no
    answer: the outcome is unknown)."""

    async def call(self, request: Request[R]) -> R:
        """`Inspect` (a fresh read of the card's facts) or `Execute` (run the consumed
        approval once: `request` carries what the person approved); its reply."""
        ...


@dataclasses.dataclass(frozen=True)
class Page:
    """Everything the handlers use, made once per app (keys live only in this process).

    Attributes:
        policy, tool_policy: loaded at start; the rules give the card's words and the
            disruptive test.
        connect: a `ConnFactory`.
        executor: Inspect and Execute (`PageExecutor`).
        secret: the page secret.
        clock: monotonic seconds, for the slow-down.
        session_key, form_key: HMAC keys for session IDs and form tokens.
        throttle: wrong-secret strikes, per uid.
        envs: a Jinja2 environment per language.
        translations: each language's catalogue (for ``say``).
        zone: the operator's time zone (`FLEETWATCH_TIMEZONE`); every time shown is in it.
        secret_file: where the page secret was written (None: printed on a terminal).
        facts_seen: the binding facts of cards shown (`FactsSeen`).
        rooms_seen: the names each proposal's last card showed, by proposal ID (`FactsSeen`),
            recorded with a denial so "Recent decisions" names the room denied.
        owners: the uid that started each session (`shared.web.page_session`); a request
            from another uid is refused ``session_not_yours`` and ends the session.
        operator_uids: the operators' accounts (``FLEETWATCH_APPROVAL_UIDS``); fewer than two
            make a change whose rule asks two people Deny-only. None: not known here (the
            store and the executor still require two uids).
        home: ``FLEETWATCH_HOME`` when it is not the default (`shared.config.home_given`),
            kept in the commands the page prints (`command`).
    """

    policy: Policy
    tool_policy: ToolPolicy
    connect: ConnFactory
    executor: PageExecutor
    secret: PageSecret
    clock: Callable[[], float]
    session_key: bytes
    form_key: bytes
    throttle: WrongSecretThrottle
    envs: dict[str, jinja2.Environment]
    translations: dict[str, GNUTranslations]
    css: bytes
    zone: dt.tzinfo = dt.UTC
    secret_file: Path | None = None
    facts_seen: FactsSeen = dataclasses.field(default_factory=FactsSeen)
    rooms_seen: FactsSeen = dataclasses.field(default_factory=FactsSeen)
    owners: SessionOwners = dataclasses.field(default_factory=SessionOwners)
    operator_uids: frozenset[int] | None = None
    home: str | None = None


PAGE = web.AppKey("page", Page)


def page_of(request: web.Request) -> Page:
    return request.app[PAGE]


def client_of(request: web.Request) -> str:
    """The client's address (loopback only, as the page listens there)."""
    return request.remote or "unknown"


def language_of(request: web.Request) -> Language:
    """The request's language: ``?lang=`` (the switch's links, ``fleetwatch demo --language
    es``), else the switch's cookie, else ``Accept-Language``."""
    return page_language(
        request.query.get("lang"),
        request.cookies.get(LANGUAGE_COOKIE),
        request.headers.get("Accept-Language"),
    )


def uid_of(request: web.Request) -> int:
    """The uid the kernel lists for the browser's connection (`shared.web.loopback_peer`); -1 when
    it cannot be read. Recorded in audit rows, never trusted to grant anything."""
    found = request_uid(request)
    return -1 if found is None else found


def render(request: web.Request, template: str, *, status: int = 200, **context: Any) -> web.Response:
    """Render `template` in the request's language (`language_of`) as an HTML response; times
    in the operator's zone, relative to now. A ``?lang=`` choice is kept in a cookie (a browser
    preference: nothing is written to the store)."""
    page = page_of(request)
    lang = language_of(request)
    when = make_when(zone=page.zone, now=dt.datetime.now(dt.UTC), language=lang)
    html = (
        page.envs[lang]
        .get_template(template)
        .render(
            say=make_say(page.translations[lang], when),
            when=when,
            zone_name=zone_name(page.zone),
            here=request.path,
            secret_file=str(page.secret_file) if page.secret_file else None,
            command=functools.partial(printed_command, language=lang, home=page.home),
            **context,
        )
    )
    response = web.Response(text=html, status=status, content_type="text/html", charset="utf-8")
    if request.query.get("lang") == lang:
        response.set_cookie(LANGUAGE_COOKIE, lang, samesite="Strict", path="/", httponly=True)
    return response


async def refuse(
    request: web.Request,
    code: Code,
    *,
    proposal_id: str | None = None,
    conn: aiosqlite.Connection | None = None,
    wait_seconds: int | None = None,
    template: str = "refused.html",
    noted: dict[str, int] | None = None,
    audited: bool = True,
    **context: Any,
) -> web.Response:
    """Answer a refused request: one ``refusal`` audit row (operation ``page <METHOD> <path>``,
    the client address, the uid the kernel names for it, and `noted`: numbers such as the uid
    that signed in) and `template` saying why (``why``, ``code``, ``wait_seconds`` and
    `context`), with the code's HTTP status and, for a wait, ``Retry-After``. A store that
    cannot be written (`STORE_CODES`) gets no row: the refusal is logged and still answered.
    ``audited=False``: no row (a wrong secret past its uid's cap of rows: `shared.web.throttle`)."""
    detail = {"client": client_of(request), "path": visible(request.path, 120), "uid": uid_of(request)}
    detail |= noted or {}
    operation = f"page {visible(request.method, 16)} {visible(request.path, 120)}"
    try:
        if audited and conn is None:
            async with page_of(request).connect() as own:
                await audit_refusal(
                    own, actor=ACTOR, operation=operation, code=code, proposal_id=proposal_id, detail=detail
                )
        elif audited and conn is not None:
            await audit_refusal(
                conn, actor=ACTOR, operation=operation, code=code, proposal_id=proposal_id, detail=detail
            )
    except StoreError as exc:
        if exc.code not in STORE_CODES:
            raise
        logger.warning("refusal %s of %s not audited: %s", code, operation, exc.code)
    response = render(
        request,
        template,
        status=STATUS.get(code, 400),
        why=refusal_words(code),
        code=str(code),
        wait_seconds=wait_seconds,
        **context,
    )
    if wait_seconds:
        response.headers["Retry-After"] = str(wait_seconds)
    response.headers[CODE_HEADER] = str(code)
    return response
