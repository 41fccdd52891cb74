"""The simulator's root: scenario, world, clock, tokens, faults, and the write log.

`Lab.call_tool` is the whole life of one tool call, in this order: faults are taken (for the
caller's team; latency and ``hold`` wait here), the bearer token is checked (a missing, unknown, revoked or expired token gets the
in-band ``401 Unauthorized`` error result the real server gives), ``error``/``auth_401``/
``auth_forbidden`` faults answer (and ``plan_required`` for a write tool), the arguments are
validated against the tool's schema, the controls due by now are applied (`World.apply_due`),
the handler runs, a write is
logged, and ``malformed_json``/``schema_drift``/``drop_response`` shape what is sent back.

The write log holds every write call that reached a handler (valid arguments, any team, any
per-device result): ``{seq, tool, arguments, team, at, result}``. Calls refused before that
(bad arguments, no sign-in, unknown tool, an injected error) go to ``rejected`` instead, with a
``reason``. Times are UTC ISO 8601 from the lab clock.

Every tool call that reached the lab, refused or not, is also in ``calls`` as (tool, MCP session
ID): tests see which session a client used, and that a client sent nothing at all (the last
`CALLS_KEPT` calls are kept).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import anyio
import mcp_types as types

from services.lab.calls import BadArguments, Call, Image, ToolFailure
from services.lab.faults import Fault, FaultKind, FaultTable
from services.lab.notices import NoticeBoard
from services.lab.scenario import TEAM_NAMES, Scenario
from services.lab.shapes import OLDER_SHAPES, drift
from services.lab.slack_board import SlackAskBoard
from services.lab.state import LabClock, World
from services.lab.tools import TOOL_NAMES, TOOLS, Redefinitions

Anonymous = Literal["admit", "challenge"]
UNAUTHORIZED_MISSING = (
    "401 Unauthorized: invalid_token: no access token was provided. Sign in to Epiphan Edge."
)
UNAUTHORIZED_INVALID = "401 Unauthorized: invalid_token: the access token is invalid or revoked."
UNAUTHORIZED_EXPIRED = "401 Unauthorized: invalid_token: token expired. Sign in again."
FORBIDDEN = "FORBIDDEN"
"""The other in-band form of a missing or dead sign-in (EPIPHAN.md, live-verified peer)."""
PLAN_REFUSAL = (
    "403 Forbidden: this action requires an Epiphan Edge Premium plan; your team's plan allows viewing only."
)
"""A write refused for a team without the plan that allows writes (wording unconfirmed)."""
INJECTED_ERROR = "500 Internal Server Error: the device service did not answer (simulated)."
DEFAULT_CONTROL_DELAY_SECONDS = 2.0
"""How long ``fleetwatch lab`` (and the demo) takes to apply a recording or stream write, like a
live Pearl, whose start and stop calls answer before the change (``--control-delay``)."""
CALLS_KEPT = 10_000
"""How many (tool, session) entries `Lab.calls` keeps (the oldest go first)."""


@dataclass(frozen=True)
class LabSettings:
    """How the lab behaves (from the scenario's ``options``, overridable)."""

    anonymous: Anonymous = "admit"
    expose_team_id: bool = True
    older_shapes: bool = False
    access_token_ttl_seconds: int = 3600
    shapes: Mapping[str, str] = field(default_factory=dict)
    """Named shapes (`shared.epiphan.fleet_shapes`) to answer tools in, over ``older_shapes``'s."""
    verbatim: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Team → read tool → an answer to give as it is (a replayed capture's answer that had no
    known shape)."""
    control_delay_seconds: float = 0.0
    """Lab seconds between a recording or stream write and its effect (`World.control_delay`;
    ``fleetwatch lab`` runs with `DEFAULT_CONTROL_DELAY_SECONDS`, a lab made in a test with 0)."""

    def shape_map(self) -> dict[str, str]:
        """Tool → named shape this lab answers in (tools not named: ``current``)."""
        return {**(OLDER_SHAPES if self.older_shapes else {}), **self.shapes}


@dataclass
class TokenInfo:
    team: str
    client_id: str
    expires_at: datetime | None
    revoked: bool = False


@dataclass
class TokenBook:
    """Bearer tokens the lab accepts; each maps to exactly one team."""

    tokens: dict[str, TokenInfo] = field(default_factory=dict)

    def issue(self, team: str, client_id: str, expires_at: datetime | None) -> str:
        token = secrets.token_urlsafe(32)
        self.tokens[token] = TokenInfo(team, client_id, expires_at)
        return token

    def revoke(self, token: str) -> None:
        if token in self.tokens:
            self.tokens[token].revoked = True

    def check(self, token: str | None, now: datetime) -> TokenInfo | str:
        """The token's info, or the in-band 401 text for a missing/unknown/revoked/expired one."""
        if not token:
            return UNAUTHORIZED_MISSING
        info = self.tokens.get(token)
        if info is None or info.revoked:
            return UNAUTHORIZED_INVALID
        if info.expires_at is not None and now >= info.expires_at:
            return UNAUTHORIZED_EXPIRED
        return info


@dataclass(frozen=True)
class CallOutcome:
    """What to send back for one call; ``dropped`` means: never answer."""

    result: types.CallToolResult
    dropped: bool = False


class Lab:
    """The simulator. Build with a scenario; `reset` restores its first state."""

    def __init__(self, scenario: Scenario, settings: LabSettings, clock: LabClock | None = None) -> None:
        self.scenario = scenario
        self.settings = settings
        self.clock = clock or LabClock()
        self.tokens = TokenBook()
        self.demo_tokens = {team: self.tokens.issue(team, f"lab-demo-{team}", None) for team in TEAM_NAMES}
        self.faults = FaultTable()
        self.held: list[dict[str, Any]] = []
        """Calls waiting in a ``hold`` fault: ``[{tool, team}]``."""
        self._release = anyio.Event()
        self._shapes = settings.shape_map()
        self.writes: list[dict[str, Any]] = []
        self.rejected: list[dict[str, Any]] = []
        self.calls: deque[tuple[str, str | None]] = deque(maxlen=CALLS_KEPT)
        self.ended_sessions: set[str] = set()
        self.notices = NoticeBoard()
        self.slack = SlackAskBoard()
        """The Slack Socket Mode stand-in's state (slack_socket.py)."""
        self.redefined = Redefinitions()
        """Tool definitions changed at run time (``/_lab/tools``); a reset restores them."""
        self._seq = 0
        self.world: World
        self.reset()

    def reset(self) -> None:
        """The scenario's first state again: clock restarted, world rebuilt, write log and
        faults cleared (the scenario's own faults set again), the notices received forgotten,
        every tool's definition as served first.
        Tokens stay valid."""
        self.clock.restart()
        self.world = World.build(self.scenario, self.clock.now())
        self.world.control_delay = self.settings.control_delay_seconds
        self.writes.clear()
        self.rejected.clear()
        self.calls.clear()
        self.ended_sessions.clear()
        self.notices.clear()
        self.slack.clear()
        self.redefined.clear()
        self._seq = 0
        self.faults.clear()
        self.release()
        for fault in self.scenario.faults:
            self.faults.add(fault.check(TOOL_NAMES, frozenset(TEAM_NAMES)))

    def set_fault(self, fault: Fault) -> None:
        self.faults.add(fault.check(TOOL_NAMES, frozenset(TEAM_NAMES)))

    def release(self) -> int:
        """Let every call waiting in a ``hold`` go on; how many were waiting."""
        waiting = len(self.held)
        self._release.set()
        self._release = anyio.Event()
        return waiting

    def team_of(self, token: str | None) -> str | None:
        """The team a bearer token signs in to right now, or None."""
        auth = self.tokens.check(token, self.clock.now())
        return None if isinstance(auth, str) else auth.team

    async def _hold(self, name: str, team: str | None, seconds: float) -> None:
        entry = {"tool": name, "team": team}
        self.held.append(entry)
        try:
            with anyio.move_on_after(seconds):
                await self._release.wait()
        finally:
            self.held.remove(entry)

    def end_sessions(self) -> None:
        """End every MCP session a tool call came on so far: their IDs answer HTTP 404
        ``Session not found`` from now on, as the SDK's session manager answers a session it
        reaped after 30 idle minutes, or a server that restarted (`services.lab.server`)."""
        self.ended_sessions.update(session for _, session in self.calls if session is not None)

    def issue_token(self, team: str, ttl_seconds: float | None, client_id: str = "lab-issued") -> str:
        """A bearer token for ``team``, valid ``ttl_seconds`` of lab time (None: forever)."""
        if team not in TEAM_NAMES:
            raise ValueError(f"no team {team!r}")
        expires = None if ttl_seconds is None else self.clock.now() + timedelta(seconds=ttl_seconds)
        return self.tokens.issue(team, client_id, expires)

    def teams_view(self) -> list[dict[str, Any]]:
        """``[{name, team_id, token, device_ids}]`` for ``GET /_lab/state``."""
        return [
            {
                "name": name,
                "team_id": self.world.teams[name].team_id,
                "token": self.demo_tokens[name],
                "device_ids": list(self.world.teams[name].device_ids),
            }
            for name in TEAM_NAMES
        ]

    def _log(self, into: list[dict[str, Any]], **entry: Any) -> None:
        self._seq += 1
        at = self.clock.now().isoformat().replace("+00:00", "Z")
        into.append(json.loads(json.dumps({"seq": self._seq, **entry, "at": at})))

    async def call_tool(
        self, token: str | None, name: str, arguments: dict[str, Any] | None, *, session: str | None = None
    ) -> CallOutcome:
        """Run one ``tools/call`` as the real server would (see the module docstring); `session`
        is the caller's MCP session ID, recorded in ``calls``."""
        self.calls.append((name, session))
        args = dict(arguments or {})
        tool = TOOLS.get(name)
        if tool is None:
            self._log(self.rejected, tool=name, arguments=args, team=None, reason="unknown tool")
            return CallOutcome(_error(f"Unknown tool: {name}"))
        delay, kinds = self.faults.take(name, self.team_of(token))
        if FaultKind.HOLD in kinds:
            await self._hold(name, self.team_of(token), delay)
        elif delay:
            await anyio.sleep(delay)
        auth = self.tokens.check(token, self.clock.now())
        if isinstance(auth, str):
            self._log(self.rejected, tool=name, arguments=args, team=None, reason="not signed in")
            return CallOutcome(_error(auth))
        refusal = None
        if FaultKind.AUTH_401 in kinds:
            refusal = UNAUTHORIZED_EXPIRED
        elif FaultKind.AUTH_FORBIDDEN in kinds:
            refusal = FORBIDDEN
        elif FaultKind.PLAN_REQUIRED in kinds and tool.write:
            refusal = PLAN_REFUSAL
        elif FaultKind.ERROR in kinds:
            refusal = INJECTED_ERROR
        elif problem := tool.argument_problem(args):
            refusal = f"Invalid arguments for {name}: {problem}"
        if refusal is not None:
            self._log(self.rejected, tool=name, arguments=args, team=auth.team, reason=refusal)
            return CallOutcome(_error(refusal))
        settings = self.settings
        now = self.clock.now()
        self.world.apply_due(now)
        call = Call(
            self.world, auth.team, args, now, settings.older_shapes, settings.expose_team_id, self._shapes
        )
        given = settings.verbatim.get(auth.team, {})
        try:
            output = (
                json.loads(json.dumps(given[name]))
                if name in given and not tool.write
                else tool.handler(call)
            )
        except BadArguments as exc:
            refusal = f"Invalid arguments for {name}: {exc}"
            self._log(self.rejected, tool=name, arguments=args, team=auth.team, reason=refusal)
            return CallOutcome(_error(refusal))
        except ToolFailure as exc:
            return CallOutcome(_error(str(exc)))
        if tool.write:
            self._log(self.writes, tool=name, arguments=args, team=auth.team, result=dict(output))
        return CallOutcome(_shape(name, output, kinds), dropped=FaultKind.DROP_RESPONSE in kinds)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _shape(
    name: str, output: dict[str, Any] | list[Any] | Image, kinds: frozenset[FaultKind]
) -> types.CallToolResult:
    if isinstance(output, Image):
        image = types.ImageContent(
            type="image", data=base64.b64encode(output.data).decode("ascii"), mime_type=output.mime_type
        )
        return types.CallToolResult(content=[image])
    if FaultKind.MALFORMED_JSON in kinds:
        text = json.dumps(output)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text[: max(1, len(text) // 2)])]
        )
    if FaultKind.SCHEMA_DRIFT in kinds and isinstance(output, dict):
        output = drift(name, json.loads(json.dumps(output)))
    if not isinstance(output, dict):  # a bare list: text only (structured content is an object)
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(output))])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(output))], structured_content=output
    )
