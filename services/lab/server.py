"""The lab's web app (MCP at ``/mcp``, OAuth, ``/_lab/*``) and how to run it.

Routes::

    /mcp                                       MCP, streamable HTTP (the SDK's session manager)
    /.well-known/oauth-protected-resource/mcp  protected-resource metadata (RFC 9728)
    /.well-known/oauth-authorization-server    authorization-server metadata (RFC 8414)
    /register /authorize /token /revoke        OAuth (see oauth.py); /authorize/team picks the team
    /_lab/state /_lab/writes /_lab/faults /_lab/clock /_lab/reset /_lab/tokens   (see control.py)
    /slack/api/chat.postMessage /teams/webhook/<key> /_lab/notices   (see notices.py, standins.py)
    /slack/api/apps.connections.open ... /_lab/slack/ask /_lab/slack  (Socket Mode: slack_socket.py)

``/_lab/*`` and the team page answer loopback peers addressing the lab by a loopback name
only. With ``anonymous: admit`` (default, like Epiphan) a request without a valid token still
connects and tool calls answer the in-band 401; with ``challenge`` it gets HTTP 401 and
``WWW-Authenticate: Bearer ... resource_metadata=...`` (the SDK's OAuth client starts there).

A ``drop_response`` fault holds the tool call open (the write applied and logged) until the
client gives up or the session ends: the client sees a timeout, never a result. The HTTP-layer
faults (``http_500``, ``close_connection``) are taken by `_http_faults` in front of ``/mcp``,
before the session sees the request: nothing is applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import msgspec
import uvicorn
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import ProviderTokenVerifier
from mcp.server.auth.routes import (
    build_metadata,
    build_resource_metadata_url,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.responses import Response
from starlette.routing import Route

from services.lab import LabError
from services.lab.capture_scenario import replay
from services.lab.control import control_routes
from services.lab.faults import Fault, FaultKind
from services.lab.lab import Anonymous, Lab, LabSettings
from services.lab.oauth import LabOAuthProvider, metadata_extras
from services.lab.scenario import (
    Scenario,
    check_scenario,
    generate_fleet,
    generate_sandbox,
    load_scenario,
    with_normal_team,
)
from services.lab.shapes import SERVED_SHAPES
from services.lab.slack_board import SlackAskBoard
from services.lab.slack_socket import serving_socket, slack_socket_routes
from services.lab.standins import notice_routes
from services.lab.state import LabClock, World
from services.lab.tools import TOOLS
from shared.errors import FleetwatchError

_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


def make_lab(
    scenario: str | Path | Scenario = "campus",
    *,
    devices: int | None = None,
    seed: int = 0,
    older_shapes: bool | None = None,
    anonymous: Anonymous | None = None,
    expose_team_id: bool | None = None,
    clock: LabClock | None = None,
    shapes: Mapping[str, str] | None = None,
    sandbox_devices: int | None = None,
    capture: Path | None = None,
    capture_sandbox: Path | None = None,
    control_delay_seconds: float = 0.0,
) -> Lab:
    """A `Lab` for a scenario (name, path or `Scenario`); ``devices`` replaces its normal team
    by a generated fleet of that size, ``sandbox_devices`` its sandbox team by a generated
    healthy one. ``shapes`` (tool → named shape, `shared.epiphan.fleet_shapes`) answers those tools in
    those shapes. ``capture`` (a ``fleetwatch capture`` folder) replaces the normal team by the
    captured one, answered in its captured shapes (`services.lab.capture_scenario`), and
    ``capture_sandbox`` the sandbox team. ``control_delay_seconds`` (0..600) is how long a
    recording or stream write takes to apply (0, the default here: at once; ``fleetwatch lab``
    passes its ``--control-delay``). ``None`` settings keep the scenario's own.

    Raises:
        LabError: a shape the lab cannot serve, a bad setting, or a capture that cannot be
            replayed (`ScenarioError` for a bad scenario).
    """
    loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    verbatim: Mapping[str, Mapping[str, Any]] = {}
    if devices is not None and capture is not None:
        raise LabError("a captured team replaces the normal team: --devices cannot be used with --capture")
    if capture_sandbox is not None and capture is None:
        raise LabError("--capture-sandbox needs --capture")
    if devices is not None:
        loaded = with_normal_team(
            loaded, generate_fleet(devices, seed).teams.normal, name=f"{loaded.name}+{devices}"
        )
    if sandbox_devices is not None:
        teams = msgspec.structs.replace(loaded.teams, sandbox=generate_sandbox(sandbox_devices, seed))
        loaded = msgspec.structs.replace(loaded, teams=teams, name=f"{loaded.name}+sandbox{sandbox_devices}")
        if capture is None:  # a replay checks the world it makes
            loaded = check_scenario(loaded, where=loaded.name)
    if capture is not None:
        try:
            replayed = replay(capture, loaded, capture_sandbox)
        except FleetwatchError as exc:
            raise LabError(exc.message) from exc
        loaded, verbatim = replayed.scenario, replayed.verbatim
    options = loaded.options
    settings = LabSettings(
        anonymous=anonymous or options.anonymous,
        expose_team_id=options.expose_team_id if expose_team_id is None else expose_team_id,
        older_shapes=options.older_shapes if older_shapes is None else older_shapes,
        access_token_ttl_seconds=options.access_token_ttl_seconds,
        shapes=check_shapes({**options.shapes, **(shapes or {})}),
        verbatim=verbatim,
        control_delay_seconds=control_delay_seconds,
    )
    if not 0 <= control_delay_seconds <= 600:
        raise LabError(f"the control delay must be 0..600 seconds, not {control_delay_seconds:g}")
    if settings.anonymous not in ("admit", "challenge"):
        raise LabError(f"anonymous must be 'admit' or 'challenge', not {settings.anonymous!r}")
    return Lab(loaded, settings, clock)


def check_shapes(shapes: Mapping[str, str]) -> dict[str, str]:
    """`shapes` if the lab can serve each (`services.lab.shapes.SERVED_SHAPES`).

    Raises:
        LabError: a tool or shape it cannot serve (the message lists what it can).
    """
    for tool, name in shapes.items():
        served = SERVED_SHAPES.get(tool)
        if served is None:
            raise LabError(f"no other shape to serve for {tool!r}; tools: {', '.join(sorted(SERVED_SHAPES))}")
        if name not in served:
            raise LabError(f"{tool} has no shape {name!r}; shapes: {', '.join(sorted(served))}")
    return dict(shapes)


def _bearer(request: Any) -> str | None:
    return _bearer_text(request.headers.get("authorization", "") if request is not None else "")


def _bearer_text(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _mcp_server(lab: Lab) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                t.listing(older_shapes=lab.settings.older_shapes, redefined=lab.redefined)
                for t in TOOLS.values()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = ctx.request.headers.get("mcp-session-id") if ctx.request is not None else None
        outcome = await lab.call_tool(_bearer(ctx.request), params.name, params.arguments, session=session)
        if outcome.dropped:
            await anyio.sleep_forever()
        return outcome.result

    return Server(
        "epiphan-edge-lab",
        version="lab",
        instructions="A simulated Epiphan Edge (Fleetwatch lab). Nothing here is a real device.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


SESSION_NOT_FOUND = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'
"""What the SDK's session manager answers (HTTP 404) for a session ID it does not hold."""


class _EndedSessionsRefused:
    """An ASGI app around the MCP one, answering a request on a session of
    ``lab.ended_sessions`` as the SDK's session manager answers one it no longer holds: HTTP
    404 with a JSON-RPC error. (A class: Starlette's `Route` treats a plain function as a
    request handler, not as an ASGI app.)"""

    def __init__(self, lab: Lab, app: Any) -> None:
        self._lab = lab
        self._app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            session = dict(scope["headers"]).get(b"mcp-session-id", b"").decode("latin-1")
            if session and session in self._lab.ended_sessions:
                response = Response(SESSION_NOT_FOUND, status_code=404, media_type="application/json")
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)


def _tool_call_name(body: bytes) -> str | None:
    """The tool a JSON-RPC ``tools/call`` request body names, else None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


class _HttpFaults:
    """ASGI middleware for ``/mcp``: a ``tools/call`` that an ``http_500`` or
    ``close_connection`` fault applies to is answered here, and never reaches the session.
    (A class, not a function: Starlette wraps a plain function as a GET endpoint.)"""

    def __init__(self, lab: Lab, app: Any) -> None:
        self.lab, self.app = lab, app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages, body, more = [], b"", True
        while more:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            more = message["type"] == "http.request" and message.get("more_body", False)
        name = _tool_call_name(body)
        kinds: frozenset[FaultKind] = frozenset()
        if name is not None:
            header = next((v for k, v in scope["headers"] if k.lower() == b"authorization"), b"")
            team = self.lab.team_of(_bearer_text(header.decode("latin-1")))
            _, kinds = self.lab.faults.take(name, team, layer="http")
        if FaultKind.CLOSE_CONNECTION in kinds:
            start = {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
            await send(start)
            # Returning with the response unfinished makes uvicorn drop the connection.
            return
        if FaultKind.HTTP_500 in kinds:
            await send(
                {"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]}
            )
            await send({"type": "http.response.body", "body": b"500 Internal Server Error (lab fault)"})
            return
        replay = iter(messages)

        async def replayed() -> Any:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)


def build_app(lab: Lab, base_url: str, *, on_ready: Callable[[], None] | None = None) -> Starlette:
    """The lab's ASGI app, served at ``base_url`` (``http://127.0.0.1:<port>``). Build a new
    one per run: the SDK's session manager runs once. ``on_ready`` is called at startup."""
    issuer = _URL.validate_python(base_url)
    resource = _URL.validate_python(f"{base_url}/mcp")
    manager = StreamableHTTPSessionManager(
        app=_mcp_server(lab),
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        ),
    )
    provider = LabOAuthProvider(lab, base_url)
    mcp_app: Any = _EndedSessionsRefused(lab, _HttpFaults(lab, StreamableHTTPASGIApp(manager)))
    if lab.settings.anonymous == "challenge":
        mcp_app = AuthenticationMiddleware(
            RequireAuthMiddleware(mcp_app, [], build_resource_metadata_url(resource)),
            backend=BearerAuthBackend(ProviderTokenVerifier(provider)),
        )
    registration, revocation = ClientRegistrationOptions(enabled=True), RevocationOptions(enabled=True)
    metadata_path = "/.well-known/oauth-authorization-server"
    metadata = build_metadata(issuer, None, registration, revocation).model_copy(update=metadata_extras())

    def now_text() -> str:
        return lab.clock.now().isoformat().replace("+00:00", "Z")

    routes = [
        Route("/mcp", endpoint=mcp_app),
        Route(
            metadata_path,
            cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        ),
        *(
            r
            for r in create_auth_routes(provider, issuer, None, registration, revocation)
            if getattr(r, "path", None) not in (metadata_path, "/revoke")
        ),
        *create_protected_resource_routes(resource, [issuer], resource_name="Epiphan Edge (lab)"),
        *provider.page_routes(),
        *control_routes(lab, base_url),
        *slack_socket_routes(lab.slack, lab.notices, base_url, now_text),
        *notice_routes(lab.notices, now_text),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), serving_socket(lab.slack):
            if on_ready is not None:
                on_ready()
            yield

    return Starlette(routes=routes, lifespan=lifespan)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal capture (the owner of the loop decides about signals) and
    without its 0.1 s polling: `exit_now` wakes the main loop at once, so a lab stops in
    milliseconds instead of 0.2 s (a test suite starts and stops hundreds of labs)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._exit = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield

    def exit_now(self) -> None:
        """Ask the server to finish; its main loop wakes at once."""
        self.should_exit = True
        self._exit.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn always sleeps 0.1 s after asking open connections to close; with none open
        # (the usual end of a test) close the listeners and run the lifespan's shutdown at once.
        if self.server_state.connections or self.server_state.tasks or self.force_exit:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        await self.lifespan.shutdown()

    async def main_loop(self) -> None:
        # uvicorn's own loop sleeps 0.1 s between ticks; this one waits for `exit_now`, waking
        # once a second for the tick (the Date header), which then always counts as a new second.
        tick = 0
        while not await self.on_tick(tick):
            tick = (tick + 10) % 864000
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._exit.wait()


@dataclass
class Serving:
    """A lab being served: its base URL; `stop` asks uvicorn to finish."""

    url: str
    server: _Uvicorn
    task: asyncio.Task[None]

    def stop(self) -> None:
        self.server.exit_now()


@contextlib.asynccontextmanager
async def serve_lab(lab: Lab, port: int = 0) -> AsyncIterator[Serving]:
    """Serve ``lab`` on ``127.0.0.1:port`` (0: any free port) until the block ends.

    Ready on entry: the socket listens and the app (with the MCP session manager) has
    started. Raises `LabError` if the port cannot be bound or the app does not start.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise LabError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from exc
    except BaseException:  # a timeout's or an interrupt's exception: the socket is still ours
        sock.close()
        raise
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    ready = asyncio.Event()
    config = uvicorn.Config(
        build_app(lab, url, on_ready=ready.set),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=1,
    )
    server = _Uvicorn(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    waiter = asyncio.create_task(ready.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.is_set():
            raise LabError("the lab did not start (see the log above)")
        yield Serving(url, server, task)
    finally:
        waiter.cancel()
        server.exit_now()
        with contextlib.suppress(SystemExit):
            await task
        sock.close()


@dataclass(frozen=True)
class LabTeam:
    """One team as a test sees it: its name, team ID, demo bearer token and device IDs."""

    name: str
    team_id: str
    token: str
    device_ids: tuple[str, ...]


@dataclass
class LabHandle:
    """A running lab, for tests. ``url`` is ``http://127.0.0.1:<port>``."""

    lab: Lab
    url: str

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    @property
    def teams(self) -> Mapping[str, LabTeam]:
        return {
            t["name"]: LabTeam(t["name"], t["team_id"], t["token"], tuple(t["device_ids"]))
            for t in self.lab.teams_view()
        }

    @property
    def state(self) -> World:
        """The simulated world itself (settle a device with ``state.team_device(...)``)."""
        return self.lab.world

    @property
    def now(self) -> datetime:
        return self.lab.clock.now()

    def writes(self) -> list[dict[str, Any]]:
        """The write log: ``[{seq, tool, arguments, team, at, result}]`` (as ``/_lab/writes``)."""
        return [dict(w) for w in self.lab.writes]

    async def notices_until(
        self, found: Callable[[list[dict[str, Any]]], bool], seconds: float
    ) -> list[dict[str, Any]]:
        """The notices the Slack and Teams stand-ins received (as ``/_lab/notices``), once
        `found` holds of them; waits on each arrival, at most `seconds`.

        Raises:
            TimeoutError: `found` did not hold in time.
        """
        async with asyncio.timeout(seconds):
            while not found(notices := list(self.lab.notices.notices)):
                await self.lab.notices.arrived.wait()
        return notices

    @property
    def slack(self) -> SlackAskBoard:
        """The Socket Mode stand-in's state (connections, envelopes sent and their acks)."""
        return self.lab.slack

    async def slack_until(self, found: Callable[[SlackAskBoard], bool], seconds: float) -> SlackAskBoard:
        """The Socket Mode stand-in once `found` holds of it; waits on each change, at most
        `seconds`.

        Raises:
            TimeoutError: `found` did not hold in time.
        """
        async with asyncio.timeout(seconds):
            while not found(self.lab.slack):
                await self.lab.slack.changed.wait()
        return self.lab.slack

    def rejected(self) -> list[dict[str, Any]]:
        """Calls refused before any change: ``[{seq, tool, arguments, team, at, reason}]``."""
        return [dict(r) for r in self.lab.rejected]

    def calls(self) -> list[tuple[str, str | None]]:
        """Every tool call that reached the lab, oldest first: ``(tool, MCP session ID)``."""
        return list(self.lab.calls)

    def end_sessions(self) -> None:
        """Every session used so far answers 404 from now on (see `Lab.end_sessions`)."""
        self.lab.end_sessions()

    def set_fault(
        self, tool: str, kind: FaultKind | str, *, seconds: float | None = None, count: int | None = None
    ) -> None:
        """Inject a fault (see faults.py). Raises `LabError` for an unknown tool or bad values."""
        try:
            fault_kind = FaultKind(kind)
        except ValueError as exc:
            raise LabError(f"no fault kind {kind!r}") from exc
        self.lab.set_fault(Fault(tool=tool, kind=fault_kind, seconds=seconds, count=count))

    def clear_faults(self) -> None:
        self.lab.faults.clear()

    def advance(self, seconds: float) -> None:
        """Move the lab clock forward (reboots finish, events start, tokens expire)."""
        self.lab.clock.advance(seconds)

    def reset(self) -> None:
        self.lab.reset()

    def issue_token(self, team: str, ttl_seconds: float | None = None) -> str:
        """A new bearer token for ``team`` living ``ttl_seconds`` of lab time (None: forever)."""
        return self.lab.issue_token(team, ttl_seconds)

    def revoke_token(self, token: str) -> None:
        self.lab.tokens.revoke(token)


@contextlib.asynccontextmanager
async def run_lab(
    scenario: str | Path | Scenario = "campus", *, port: int = 0, **options: Any
) -> AsyncIterator[LabHandle]:
    """Run a lab in this process (uvicorn on the running loop) for the ``async with`` block.

    `options` are `make_lab`'s keyword arguments, declared there (an unknown one is a
    `TypeError`): ``None`` settings keep the scenario's own (campus: admit, team ID shown,
    current shapes); controls apply at once unless ``control_delay_seconds`` says otherwise.
    """
    lab = make_lab(scenario, **options)
    async with serve_lab(lab, port) as serving:
        yield LabHandle(lab, serving.url)
