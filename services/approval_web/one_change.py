"""One change per room at a time, across questions and sessions: what the store says about a
new proposal's rooms before it is queued. Pure decisions over rows read by SQL here.

The peer's invariant "no second write before the first is verified" (seed 000) held only
inside one question; a question that starts afresh knows nothing of the last one. It is held
here, in the intake every proposal passes (approval_web, under its submission lock), from the
store every service shares. For a new proposal (tool, canonical arguments, targets as master
IDs), `judge` answers, in this order:

1. **the same change is already waiting** (`Identical`): a proposal with the same tool and
   canonical arguments (hence the same targets) is pending and not past its expiry, whoever
   proposed it, in any session. Nothing new is queued; the answer names that one and its state.
2. **another change is in the way** (``target_busy``): a different proposal naming one of the
   targets is pending, or approved and not run yet, or its execution is running.
3. **the last change is not settled** (``target_unverified``): the newest execution on one of
   the targets that was not refused ended ``unknown``, or ``ok`` without ``verified``, and no
   operator acknowledged it. The service first asks the executor for a fresh read
   (``Recheck``): when that read verifies the change, it no longer blocks. Otherwise a person
   looks at the room and acknowledges it (`acknowledge`, ``fleetwatch acknowledge ID``).

An execution that ended ``error`` (Epiphan said the write failed) or ``refused`` (nothing ran)
is settled; so is one ``verified`` by the write's own check or by a later fresh read.

Every time is the database clock's text (UTC ``YYYY-MM-DDTHH:MM:SS.SSSZ``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from shared.canonical import canonical_json, parse_json_strict
from shared.errors import Code
from shared.store.approval_rows import audit_refusal, one_row
from shared.store.db import append_audit, db_now, write_tx
from shared.wire.approval import ChangeToSettle

UNSETTLED_OUTCOMES = frozenset({"ok", "unknown"})
"""Outcomes that changed (or may have changed) a room, and so need a verification to settle."""


@dataclass(frozen=True, slots=True)
class Identical:
    """A pending proposal identical to the new one (`judge` step 1)."""

    proposal_id: str
    status: str
    expires_at: str | None


@dataclass(frozen=True, slots=True)
class Busy:
    """Another proposal holds one of the targets (`judge` step 2): ``why`` ∈ pending |
    approved | running."""

    proposal_id: str
    target: str
    why: str


@dataclass(frozen=True, slots=True)
class LastChange:
    """The newest execution on one target that was not refused."""

    target: str
    proposal_id: str
    tool: str
    action: str | None
    outcome: str
    verification: str | None
    acknowledged: bool
    finished_at: str | None

    @property
    def settled(self) -> bool:
        """Nothing to settle: it failed outright, was verified, or a person acknowledged it."""
        return self.outcome not in UNSETTLED_OUTCOMES or self.verification == "verified" or self.acknowledged


@dataclass(frozen=True, slots=True)
class RoomState:
    """What the store says about a new proposal's targets (`read_room_state`)."""

    identical: Identical | None
    busy: tuple[Busy, ...]
    last: tuple[LastChange, ...]


def judge(state: RoomState) -> Identical | Busy | tuple[LastChange, ...] | None:
    """The first thing in the way of a new proposal (module doc order): the identical pending
    proposal, a busy target, the unsettled last changes (one per proposal, oldest target
    first), or None."""
    if state.identical is not None:
        return state.identical
    if state.busy:
        return state.busy[0]
    unsettled: dict[str, LastChange] = {}
    for change in state.last:
        if not change.settled:
            unsettled.setdefault(change.proposal_id, change)
    return tuple(unsettled.values()) or None


def action_of(arguments_json: str) -> str | None:
    """The ``action`` argument (``start``/``stop``) of a stored proposal, or None."""
    arguments = parse_json_strict(arguments_json)
    action = arguments.get("action") if isinstance(arguments, dict) else None
    return action if isinstance(action, str) else None


# --- SQL -------------------------------------------------------------------------------------

_IDENTICAL_SQL = """
SELECT id, status, expires_at FROM proposals
WHERE status = 'pending' AND tool = ? AND arguments_json = ?
  AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
ORDER BY created_at, id LIMIT 1
"""
_BUSY_SQL = """
SELECT p.id, t.master_id, p.status FROM proposals AS p JOIN proposal_targets AS t ON t.proposal_id = p.id
WHERE t.master_id IN (SELECT value FROM json_each(?))
  AND ((p.status = 'pending' AND (p.expires_at IS NULL OR p.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
       OR p.status = 'approved'
       OR EXISTS (SELECT 1 FROM executions AS e WHERE e.proposal_id = p.id AND e.outcome = 'running'))
ORDER BY p.created_at, p.id, t.master_id
"""
_LAST_SQL = """
SELECT t.master_id, p.id, p.tool, p.arguments_json, e.outcome, e.verification, e.acknowledged_at,
       e.finished_at
FROM executions AS e JOIN proposals AS p ON p.id = e.proposal_id
JOIN proposal_targets AS t ON t.proposal_id = p.id
WHERE e.outcome != 'refused' AND (? IS NULL OR t.master_id IN (SELECT value FROM json_each(?)))
ORDER BY t.master_id, e.started_at DESC, e.id DESC
"""


async def last_changes(conn: aiosqlite.Connection, targets: Sequence[str] | None) -> tuple[LastChange, ...]:
    """The last change (newest execution not refused) on each of `targets` (master IDs; None:
    every room that has one), sorted by target."""
    chosen = None if targets is None else json.dumps(list(targets))
    found: dict[str, LastChange] = {}
    async with conn.execute(_LAST_SQL, (chosen, chosen)) as cursor:
        async for row in cursor:
            if row[0] in found:
                continue
            found[row[0]] = LastChange(
                target=row[0],
                proposal_id=row[1],
                tool=row[2],
                action=action_of(row[3]),
                outcome=row[4],
                verification=row[5],
                acknowledged=row[6] is not None,
                finished_at=row[7],
            )
    return tuple(found[t] for t in sorted(found))


async def read_room_state(
    conn: aiosqlite.Connection, *, tool: str, arguments: dict[str, object], targets: Sequence[str]
) -> RoomState:
    """Everything `judge` needs about a new proposal of `tool` with canonical `arguments` on
    `targets` (master IDs)."""
    row = await one_row(conn, _IDENTICAL_SQL, (tool, canonical_json(arguments).decode()))
    identical = None if row is None else Identical(row["id"], row["status"], row["expires_at"])
    busy = []
    async with conn.execute(_BUSY_SQL, (json.dumps(list(targets)),)) as cursor:
        async for found in cursor:
            status = found[2]
            busy.append(Busy(found[0], found[1], status if status in ("pending", "approved") else "running"))
    return RoomState(identical=identical, busy=tuple(busy), last=await last_changes(conn, targets))


async def target_names(conn: aiosqlite.Connection, proposal_id: str) -> dict[str, str]:
    """Master ID -> the room's name read at the proposal's Prepare (display text; missing: not read)."""
    async with conn.execute(
        "SELECT master_id, name FROM proposal_targets WHERE proposal_id = ? AND name IS NOT NULL",
        (proposal_id,),
    ) as cursor:
        return {row[0]: row[1] async for row in cursor}


async def unsettled(conn: aiosqlite.Connection) -> tuple[ChangeToSettle, ...]:
    """Every change that is the last on one of its rooms and is not settled (for ``status``,
    ``doctor`` and the page), oldest first, one per proposal."""
    changes: dict[str, list[LastChange]] = {}
    for change in await last_changes(conn, None):
        if not change.settled:
            changes.setdefault(change.proposal_id, []).append(change)
    out = []
    for proposal_id, rooms in changes.items():
        names = await target_names(conn, proposal_id)
        first = rooms[0]
        out.append(
            ChangeToSettle(
                proposal_id=proposal_id,
                tool=first.tool,
                action=first.action,
                targets=tuple(c.target for c in rooms),
                target_names=tuple(names.get(c.target, "") for c in rooms),
                outcome=first.outcome,
                verification=first.verification,
                finished_at=first.finished_at,
            )
        )
    return tuple(sorted(out, key=lambda c: (c.finished_at or "", c.proposal_id)))


async def acknowledge(conn: aiosqlite.Connection, proposal_id: str, *, actor: str) -> Code | None:
    """An operator acknowledges a change that ended ``unknown`` or ran without being verified:
    in one transaction its execution records who and when, and one ``acknowledgement`` audit
    row names the outcome and verification it had. None when done; else the refusal's code
    (``proposal_not_found``; ``nothing_to_acknowledge``: it never ran, was verified, or was
    already acknowledged), with one ``refusal`` audit row and nothing else written."""
    async with write_tx(conn):
        row = await one_row(
            conn,
            "SELECT e.id, e.outcome, e.verification, e.acknowledged_at FROM executions AS e"
            " WHERE e.proposal_id = ? AND e.outcome != 'refused' ORDER BY e.started_at DESC LIMIT 1",
            (proposal_id,),
        )
        exists = await one_row(conn, "SELECT 1 FROM proposals WHERE id = ?", (proposal_id,)) is not None
        code = None
        if not exists:
            code = Code.PROPOSAL_NOT_FOUND
        elif (
            row is None
            or row["outcome"] not in UNSETTLED_OUTCOMES
            or row["verification"] == "verified"
            or row["acknowledged_at"] is not None
        ):
            code = Code.NOTHING_TO_ACKNOWLEDGE
        if code is not None:
            await audit_refusal(
                conn,
                actor=actor,
                operation="acknowledge",
                code=code,
                proposal_id=proposal_id if exists else None,
                detail={"proposal_id": proposal_id},
            )
            return code
        now = await db_now(conn)
        await conn.execute(
            "UPDATE executions SET acknowledged_at = ?, acknowledged_by = ? WHERE id = ?",
            (now, actor, row["id"]),
        )
        await append_audit(
            conn,
            actor=actor,
            kind="acknowledgement",
            proposal_id=proposal_id,
            detail={
                "execution_id": row["id"],
                "outcome": row["outcome"],
                "verification": row["verification"],
            },
        )
    return None
