"""Faults the lab injects into tool calls, per tool or for every tool (``"*"``).

Kinds (what the client sees):

- ``latency``: the answer comes ``seconds`` late (default 1.0 s); the call itself is normal.
- ``error``: an error result (``isError: true``, text ``500 Internal Server Error ...``);
  nothing is applied and nothing is logged as a write.
- ``auth_401``: the in-band sign-in error the real server gives (``isError: true``, text holds
  ``401 Unauthorized`` and ``invalid_token``); nothing is applied.
- ``auth_forbidden``: the other in-band form of a missing or dead sign-in the live server gives
  (``isError: true``, text ``FORBIDDEN``); nothing is applied.
- ``plan_required``: a write tool's call is refused as the live server refuses a write for a
  team without the Epiphan Edge Premium plan (``isError: true``, a permission/plan text; the
  exact wording is unconfirmed); nothing is applied. Read tools pass untouched: reads keep
  working on such a team (use ``team`` to give one team the lesser plan).
- ``drop_response``: the call runs (a write is applied and logged) and then the answer never
  comes: the request stays open until the client gives up (its read timeout) or the session
  ends. That is what a response lost behind a proxy looks like: a timeout, never a result.
- ``malformed_json``: the call runs, the result text is cut-off JSON and carries no
  structured content.
- ``schema_drift``: the call runs, the result breaks the tool's declared output schema the
  way Epiphan's does (``null`` where an object is expected, ``Warnings[].data`` null,
  lower-case keys); see ``shapes.drift``.
- ``http_500``: the HTTP request carrying the call is answered ``500 Internal Server Error``
  (a proxy or the server failing), not an MCP result; nothing is applied.
- ``close_connection``: the HTTP response starts and the connection is then closed without a
  body (a crashed or restarted server); nothing is applied.
- ``hold``: a barrier a test controls. The call waits in the lab, before anything else, until
  ``POST /_lab/release`` (or ``seconds``, default 120, pass), then runs normally; while it
  waits it is listed under ``held`` in ``GET /_lab/faults``.

``count`` limits how many calls a fault applies to (``None``: until cleared). ``team``
(``normal`` or ``sandbox``) limits it to calls signed in to that team (``None``: any caller).
``after`` lets that many matching calls pass untouched first (a barrier on the second read).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import msgspec

from services.lab import LabError


class FaultKind(enum.StrEnum):
    """The fault kinds; the value is the wire form used by scenarios and ``/_lab/faults``."""

    LATENCY = "latency"
    ERROR = "error"
    AUTH_401 = "auth_401"
    AUTH_FORBIDDEN = "auth_forbidden"
    PLAN_REQUIRED = "plan_required"
    DROP_RESPONSE = "drop_response"
    MALFORMED_JSON = "malformed_json"
    SCHEMA_DRIFT = "schema_drift"
    HTTP_500 = "http_500"
    CLOSE_CONNECTION = "close_connection"
    HOLD = "hold"


HTTP_KINDS = frozenset({FaultKind.HTTP_500, FaultKind.CLOSE_CONNECTION})
"""Kinds answered at the HTTP layer, before the MCP session sees the call."""
HOLD_SECONDS = 120.0
"""How long a ``hold`` waits for ``POST /_lab/release`` when it names no ``seconds``."""


class Fault(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One fault: ``tool`` is a tool name or ``"*"``; ``seconds`` only for latency and hold;
    ``count`` is how many calls it applies to (None: unlimited); ``team`` the caller's team
    it applies to (None: any)."""

    tool: str
    kind: FaultKind
    seconds: float | None = None
    count: int | None = None
    team: str | None = None
    after: int = 0

    def check(self, known_tools: frozenset[str], known_teams: frozenset[str] = frozenset()) -> Fault:
        """Return self if it makes sense, else raise `LabError` naming the problem."""
        if self.tool != "*" and self.tool not in known_tools:
            raise LabError(f"fault names an unknown tool: {self.tool!r}")
        if self.team is not None and self.team not in known_teams:
            raise LabError(f"fault names an unknown team: {self.team!r}")
        timed = (FaultKind.LATENCY, FaultKind.HOLD)
        if self.seconds is not None and (self.kind not in timed or not 0 <= self.seconds <= 600):
            raise LabError("fault 'seconds' is only for latency and hold, between 0 and 600")
        if not 0 <= self.after <= 1000:
            raise LabError("fault 'after' must be between 0 and 1000")
        if self.count is not None and self.count < 1:
            raise LabError("fault 'count' must be at least 1")
        return self

    @property
    def delay(self) -> float:
        """Seconds of latency this fault adds (0 for other kinds)."""
        if self.kind is not FaultKind.LATENCY:
            return 0.0
        return 1.0 if self.seconds is None else self.seconds

    @property
    def hold_seconds(self) -> float:
        """Longest wait of a ``hold`` (0 for other kinds)."""
        if self.kind is not FaultKind.HOLD:
            return 0.0
        return HOLD_SECONDS if self.seconds is None else self.seconds


_fault_decoder = msgspec.json.Decoder(Fault)


def parse_fault(body: bytes, known_tools: frozenset[str], known_teams: frozenset[str] = frozenset()) -> Fault:
    """Decode a ``POST /_lab/faults`` body. Raises `LabError` with a readable reason."""
    try:
        fault = _fault_decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise LabError(f"bad fault: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise LabError(f"bad fault: not JSON ({exc})") from exc
    return fault.check(known_tools, known_teams)


@dataclass
class _Slot:
    fault: Fault
    remaining: int | None
    skip: int = 0


@dataclass
class FaultTable:
    """The faults in force. `take` hands out the faults for one call and spends their counts."""

    _slots: list[_Slot] = field(default_factory=list)

    def add(self, fault: Fault) -> None:
        self._slots.append(_Slot(fault, fault.count, fault.after))

    def clear(self) -> None:
        self._slots.clear()

    def listing(self) -> list[dict[str, object]]:
        """The faults in force as JSON-ready dicts (``remaining`` counts down)."""
        return [{**msgspec.to_builtins(slot.fault), "remaining": slot.remaining} for slot in self._slots]

    def take(
        self, tool: str, team: str | None = None, *, layer: str = "call"
    ) -> tuple[float, frozenset[FaultKind]]:
        """The faults that apply to one call of ``tool`` by a caller of ``team`` (None: not
        known yet) at ``layer`` (``"http"``: the `HTTP_KINDS`, taken before the MCP session;
        ``"call"``: every other kind): (total latency or hold seconds, kinds)."""
        delay = 0.0
        kinds: set[FaultKind] = set()
        for slot in list(self._slots):
            if slot.fault.tool not in ("*", tool):
                continue
            if slot.fault.team is not None and slot.fault.team != team:
                continue
            if (slot.fault.kind in HTTP_KINDS) != (layer == "http"):
                continue
            if slot.skip > 0:
                slot.skip -= 1
                continue
            delay += slot.fault.delay + slot.fault.hold_seconds
            kinds.add(slot.fault.kind)
            if slot.remaining is not None:
                slot.remaining -= 1
                if slot.remaining <= 0:
                    self._slots.remove(slot)
        return delay, frozenset(kinds)
