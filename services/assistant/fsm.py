"""The session state machine: what the model may do next, enforced in code (DESIGN §8). Pure.

Prompt wording can be argued with by a model; these rules cannot. A session (one operator
question) starts in ``resolving`` and holds:

- ``resolved``: the master IDs that a *resolve* tool returned in this session: the read team's
  device list, or ``list_writable_devices`` (the sandbox team the executor just read, the only
  devices a change can pass the fence for). A channel ``<master>-<n>`` counts as its master.
  The first successful resolve moves the session to ``reading``.
- ``pending``: master ID -> proposal ID for each proposal of this session (or an identical one
  it was answered with) that is not settled: waiting for a person, approved and not run, or
  run and neither verified nor acknowledged (`settled`).
- ``made``: the key of each proposal made (tool + canonical arguments) -> its proposal ID.
- ``blocked``: how many calls were blocked. **Telemetry only**: no count ever opens the gate.

Invariants:

1. **No proposal before its target was resolved in this session**: every target's master ID
   must be in ``resolved`` (an ID the model typed, or read in a name, is not enough).
2. **No second proposal for a target while one is pending, or while its change is not
   settled** (no second write before the first is verified, seed 000). Across questions and
   sessions the intake holds the same rule (`services.approval_web.one_change`): a session
   knows only its own question.
3. **Blocked attempts never wear the gate down**: a blocked call changes nothing but the counter.
4. **Reads are never blocked**, nor ``resolve`` nor ``user_input`` (the model may ask on its
   first turn: the peer's later state, seed 002).

A block is `Blocked`: the stable code ``fsm_blocked`` plus the state, the tool kind, a reason
and ``recoverable`` (always True: resolving the target, or waiting for the pending proposal,
lifts it), so the model can branch on the code.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from services.assistant.tools import ToolKind
from shared.errors import Code
from shared.ids import is_master_id

_ID_KEYS = frozenset({"Id", "id", "device_id", "DeviceId", "deviceId"})


class State(enum.StrEnum):
    RESOLVING = "resolving"
    READING = "reading"


@dataclass(frozen=True)
class Blocked:
    """Why a call was blocked; ``code`` is always ``fsm_blocked``."""

    state: State
    kind: ToolKind
    reason: str
    code: Code = Code.FSM_BLOCKED
    recoverable: bool = True

    def facts(self) -> dict[str, Any]:
        """The block as data for the model (inside a data block)."""
        return {"state": str(self.state), "kind": str(self.kind), "recoverable": self.recoverable}


@dataclass(frozen=True)
class Session:
    """One question's state; every transition returns a new `Session`."""

    state: State = State.RESOLVING
    resolved: frozenset[str] = frozenset()
    pending: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    made: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    blocked: int = 0


def check(session: Session, kind: ToolKind, targets: Iterable[str] = ()) -> Blocked | None:
    """None when a call of `kind` on `targets` (master IDs) may run now, else why not."""
    if kind is not ToolKind.PROPOSE:
        return None
    wanted = tuple(targets)
    if session.state is State.RESOLVING:
        return Blocked(
            session.state, kind, "no device has been resolved in this session; list the team's devices first"
        )
    unresolved = [t for t in wanted if t not in session.resolved]
    if unresolved or not wanted:
        return Blocked(
            session.state,
            kind,
            "a target was not resolved in this session; use an ID from the team's device list",
        )
    waiting = sorted({session.pending[t] for t in wanted if t in session.pending})
    if waiting:
        return Blocked(
            session.state,
            kind,
            f"a proposal for this target is still pending ({', '.join(waiting)}); wait for it",
        )
    return None


def on_blocked(session: Session) -> Session:
    """Count a blocked call (telemetry; it never changes what is allowed)."""
    return replace(session, blocked=session.blocked + 1)


def on_resolved(session: Session, device_ids: Iterable[str]) -> Session:
    """A resolve tool answered with these master IDs."""
    return replace(session, state=State.READING, resolved=session.resolved | frozenset(device_ids))


def on_proposed(session: Session, key: str, proposal_id: str, targets: Iterable[str]) -> Session:
    """A proposal was recorded (pending) for `targets`."""
    pending = dict(session.pending)
    pending.update(dict.fromkeys(targets, proposal_id))
    made = {**session.made, key: proposal_id}
    return replace(session, pending=MappingProxyType(pending), made=MappingProxyType(made))


def settled(
    status: str, *, outcome: str | None = None, verification: str | None = None, acknowledged: bool = False
) -> bool:
    """A proposal no longer holds its targets: nothing ran and nothing will (denied, expired,
    not run, refused), the write failed (``error``), or it ran and was verified or an operator
    acknowledged it. Waiting, approved, running, ``unknown`` or ``ok`` without ``verified``
    hold them."""
    if status in ("denied", "expired", "not_run") or outcome in ("refused", "error"):
        return True
    return (
        status == "executed" and outcome in ("ok", "unknown") and (verification == "verified" or acknowledged)
    )


def on_proposal_state(
    session: Session,
    proposal_id: str,
    status: str,
    *,
    outcome: str | None = None,
    verification: str | None = None,
    acknowledged: bool = False,
) -> Session:
    """A proposal's recorded state was read; a `settled` one frees its targets."""
    if not settled(status, outcome=outcome, verification=verification, acknowledged=acknowledged):
        return session
    pending = {t: p for t, p in session.pending.items() if p != proposal_id}
    return replace(session, pending=MappingProxyType(pending))


def repeat_of(session: Session, key: str) -> str | None:
    """The proposal ID of an identical earlier proposal in this session, or None."""
    return session.made.get(key)


def device_ids_in(result: Any, *, limit: int = 10_000) -> frozenset[str]:
    """Master IDs in a resolve tool's result: string values under an ID key (``Id``,
    ``device_id``...) that look like master IDs, at any depth."""
    found: set[str] = set()
    stack = [result]
    while stack and len(found) < limit:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, value in item.items():
                if key in _ID_KEYS and is_master_id(value):
                    found.add(value)
                elif isinstance(value, Mapping | list):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, Mapping | list))
    return frozenset(found)
