"""The approval page's aiohttp application: routes, the request guards, headers, start and stop.

`build_page_app` makes the app from its parts (the store's connection factory, the executor
client, the secret, a clock for the slow-down); `page_side` runs it on both loopbacks,
``127.0.0.1`` and ``[::1]`` at ``FLEETWATCH_APPROVE_PORT`` (`shared.web.local_http.bind_loopback`:
either taken by anyone refuses the start, naming the holder), for an ``async with`` block,
publishing the secret at start and withdrawing its file at a clean stop.

Every request: the Host must be ``127.0.0.1`` or ``[::1]`` on the port the connection arrived
on (``bad_host``; never ``localhost``, the ask page's name, so the approval cookie is never
sent to a page the assistant serves: `shared.web.guards`); a GET naming ``localhost`` there is
sent to ``http://127.0.0.1:<port>/`` by a redirect that sets no cookie; a method a route does not serve is refused (``method_not_allowed``: an action
URL fetched with GET changes nothing). Every POST: a body within `MAX_BODY_BYTES`
(``body_too_large``), sent by the page itself (``cross_site``, see `guards`); the handlers then
check the session and the form token. An address the page does not have is refused
(``page_not_found``); a store that cannot be written (full, read-only, locked) refuses
the request with its code (``store_full``...) and 503. Each refusal is answered with a page in plain words, its code in the
``Fleetwatch-Code`` header, and one ``refusal`` audit row, and changes nothing else. Every response carries
`guards.SECURITY_HEADERS`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiosqlite
from aiohttp import web

from services.approval_web.page import guards, views
from services.approval_web.page.context import (
    PAGE,
    STORE_CODES,
    ConnFactory,
    Page,
    PageExecutor,
    page_of,
    refuse,
)
from services.approval_web.page.errors import PageError
from services.approval_web.page.i18n import page_environments
from shared.config import Settings, home_given
from shared.errors import Code
from shared.policy.loader import Policy, ToolPolicy
from shared.store.audit_export import AuditSink
from shared.store.audit_seal import APPROVAL_WEB, Keyring, own_keyring
from shared.store.audit_witness import Witness
from shared.store.db import StoreError, migrate, open_store
from shared.text import catalogue
from shared.web.guards import APPROVAL_NAMES, loopback_redirect
from shared.web.local_http import LocalHttpError, serve_loopback
from shared.web.page_secret import PageSecret, SecretSink
from shared.web.page_style import page_css
from shared.web.throttle import WrongSecretThrottle
from shared.wire.executor import ExecutorClient

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024
"""Largest request body read (the forms are a few hundred bytes)."""


def store_connections(
    db: Path, keyring: Keyring, witness: Witness | None = None, audit_sink: AuditSink | None = None
) -> ConnFactory:
    """A `ConnFactory` opening the store at `db` (already migrated) for each request, signing
    its audit rows with `keyring` (approval_web's key). With `witness` (approval_web's anchor),
    every row written through the connection is in the anchor before the connection is let go,
    so before the request that wrote it is answered (`Witness.settle`). With `audit_sink`, each
    row goes to the continuous export as it commits."""

    @contextlib.asynccontextmanager
    async def connect() -> AsyncIterator[aiosqlite.Connection]:
        conn = await open_store(db, keyring=keyring)
        if witness is not None:
            witness.attach(conn)
        if audit_sink is not None:
            audit_sink.attach(conn)
        try:
            yield conn
        finally:
            try:
                if witness is not None:
                    await witness.settle()
            finally:
                await conn.close()

    return connect


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Host, method, body size and origin checks, in that order (see the module doc)."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    port = sockname[1] if isinstance(sockname, tuple) and len(sockname) >= 2 else -1
    host = request.headers.get("Host")
    to = loopback_redirect(request.method, host, port, APPROVAL_NAMES)
    if to is not None:
        return web.Response(status=307, headers={"Location": to})
    if not guards.host_ok(host, port, APPROVAL_NAMES):
        return await refuse(request, Code.BAD_HOST)
    if request.method == "POST":
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            return await refuse(request, Code.BODY_TOO_LARGE)
        if guards.post_origin_problem(request.headers, request.headers["Host"]) is not None:
            return await refuse(request, Code.CROSS_SITE)
    try:
        return await handler(request)
    except web.HTTPMethodNotAllowed:
        return await refuse(request, Code.METHOD_NOT_ALLOWED)
    except web.HTTPNotFound:
        return await refuse(request, Code.PAGE_NOT_FOUND)
    except StoreError as exc:
        if exc.code not in STORE_CODES:
            raise
        return await refuse(request, exc.code)
    except web.HTTPRequestEntityTooLarge:
        return await refuse(request, Code.BODY_TOO_LARGE)


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(guards.SECURITY_HEADERS)


async def css(request: web.Request) -> web.Response:
    return web.Response(body=page_of(request).css, content_type="text/css", charset="utf-8")


def build_page_app(
    *,
    policy: Policy,
    tool_policy: ToolPolicy,
    connect: ConnFactory,
    executor: PageExecutor,
    secret: PageSecret,
    clock: Callable[[], float] = time.monotonic,
    throttle: WrongSecretThrottle | None = None,
    zone: dt.tzinfo = dt.UTC,
    secret_file: Path | None = None,
    operator_uids: frozenset[int] | None = None,
    home: str | None = None,
) -> web.Application:
    """The page's app. Serve it on the loopbacks only (`page_side` does).

    Raises:
        OSError / babel.messages.pofile.PoFileError: a catalogue or the stylesheet is missing.
    """
    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY_BYTES)
    translations = dict(catalogue.translations())
    app[PAGE] = Page(
        policy=policy,
        tool_policy=tool_policy,
        connect=connect,
        executor=executor,
        secret=secret,
        clock=clock,
        session_key=guards.new_key(),
        form_key=guards.new_key(),
        throttle=throttle or WrongSecretThrottle(),
        envs=page_environments(translations),
        translations=translations,
        css=page_css(),
        zone=zone,
        secret_file=secret_file,
        operator_uids=operator_uids,
        home=home,
    )
    app.on_response_prepare.append(_security_headers)
    app.router.add_get("/", views.index, allow_head=False)
    app.router.add_get("/outcome/{proposal_id}", views.outcome_page, allow_head=False)
    app.router.add_get("/page.css", css, allow_head=False)
    app.router.add_post("/login", views.login)
    app.router.add_post("/approve", views.approve)
    app.router.add_post("/confirm", views.confirm)
    app.router.add_post("/deny", views.deny)
    app.router.add_post("/deny-all", views.deny_all)
    return app


@dataclasses.dataclass(frozen=True, slots=True)
class RunningPage:
    """The page while `page_side` runs: its URL and port, and where the secret went."""

    url: str
    port: int
    secret_file: Path | None


@contextlib.asynccontextmanager
async def page_side(
    settings: Settings,
    policy: Policy,
    tool_policy: ToolPolicy,
    *,
    sink: SecretSink,
    executor: PageExecutor | None = None,
    connect: ConnFactory | None = None,
    keyring: Keyring | None = None,
    witness: Witness | None = None,
    audit_sink: AuditSink | None = None,
) -> AsyncIterator[RunningPage]:
    """Serve the page on ``127.0.0.1`` and ``[::1]`` at ``settings.approve_port`` (0: any free
    port) for the block; its URL is ``http://127.0.0.1:<port>/``.

    At start: migrate the store, make the secret, bind both loopbacks, then publish the secret through
    `sink` (printed on a terminal, else the 0600 file whose path is printed). At a clean stop:
    stop serving and delete the file. `witness`: approval_web's audit anchor; the rows a
    request writes are in it before the request is answered (`store_connections`).

    Raises:
        PageError: ``socket_in_use`` (the port is taken on either loopback; the message names
            the address and the uid holding it) or ``internal_error`` (the secret file cannot
            be written).
        StoreError: the store cannot be opened or migrated.
    """
    keyring = keyring or own_keyring(settings.keys_dir, APPROVAL_WEB)
    conn = await open_store(settings.db, keyring=keyring)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    secret = PageSecret.new()
    app = build_page_app(
        policy=policy,
        tool_policy=tool_policy,
        connect=connect or store_connections(settings.db, keyring, witness, audit_sink),
        executor=executor or ExecutorClient(settings.executor_socket),
        secret=secret,
        zone=settings.timezone,
        secret_file=None if sink.terminal else sink.path,
        operator_uids=settings.approval_uids,
        home=home_given(),
    )
    async with contextlib.AsyncExitStack() as serving:
        try:
            base = await serving.enter_async_context(
                serve_loopback(app, settings.approve_port, APPROVAL_NAMES[0])
            )
        except LocalHttpError as exc:
            raise PageError(exc.code, exc.message) from exc
        url = f"{base}/"
        try:
            sink.publish(secret, url)
        except OSError as exc:
            raise PageError(
                Code.INTERNAL_ERROR, f"cannot write the page secret to {sink.path}: {exc.strerror}"
            ) from exc
        try:
            yield RunningPage(
                url=url, port=int(base.rsplit(":", 1)[1]), secret_file=None if sink.terminal else sink.path
            )
        finally:
            sink.withdraw()
