"""The approval state's rows and reads: proposals, approvals, executions, the kill switch.

Frozen dataclasses of the store's rows (JSON columns decoded) and the read functions over a
connection, plus `audit_refusal` (one ``refusal`` audit row, the shape every refusal uses).
`shared.store.approvals` is the public face and re-exports all of this; the writes are there and in
`services.executor.executions`.

Times are DB-clock text, UTC ``YYYY-MM-DDTHH:MM:SS.SSSZ``.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sqlite3
from collections.abc import Mapping
from typing import Any, TypeVar

import aiosqlite
import msgspec

from shared.canonical import parse_json_strict
from shared.errors import MEANINGS, Code
from shared.store.audit_safe import safe_message, safe_value
from shared.store.audit_seal import EXECUTOR
from shared.store.db import append_audit
from shared.text.deciders import command_uid

EXECUTOR_ACTOR = "executor"
KILL_SWITCH_KIND = "kill_switch"
"""Audit kind of an operator's pause or resume request, ``{on}``."""
KILL_SWITCH_SEALED_KIND = "kill_switch_sealed"
"""Audit kind of the executor's seal of a request, ``{on, request_seq}``."""
OUTCOMES = frozenset({"ok", "error", "unknown", "refused"})
"""Final outcomes of an execution (``running`` is the only other value, never final)."""
VERIFICATIONS = frozenset({"verified", "not_observed", "contradicted"})


def new_id(prefix: str) -> str:
    """``prefix`` and 12 lowercase hex characters (48 random bits)."""
    return f"{prefix}{secrets.token_hex(6)}"


def new_proposal_id() -> str:
    """A fresh proposal ID: ``p-`` and 12 lowercase hex characters."""
    return new_id("p-")


async def one_row(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
    """The first row of `sql`, or None."""
    async with conn.execute(sql, params) as cursor:
        return await cursor.fetchone()


# --- rows ---------------------------------------------------------------------------------


def _json(text: str | None) -> Any:
    return None if text is None else parse_json_strict(text)


RowT = TypeVar("RowT")


def from_row(cls: type[RowT], row: sqlite3.Row) -> RowT:
    """`row` as `cls` (a `msgspec.Struct` or dataclass), converted by msgspec: a field takes
    the column of its name (its encoded name where renamed), a column ``X_json`` decoded
    (strict JSON) as field ``X``; integers 0/1 become bools; other columns are ignored.

    Raises:
        msgspec.ValidationError: a column does not fit its field (the store was edited).
    """
    columns = {k.removesuffix("_json"): _json(row[k]) if k.endswith("_json") else row[k] for k in row.keys()}
    return msgspec.convert(columns, cls, strict=False)


async def one_as(
    cls: type[RowT], conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...]
) -> RowT | None:
    """The first row of `sql` as `cls` (`from_row`), or None."""
    row = await one_row(conn, sql, params)
    return None if row is None else from_row(cls, row)


class ProposalRow(msgspec.Struct, frozen=True):
    """One ``proposals`` row, JSON columns decoded. Times are DB-clock text (UTC).

    ``arguments``, ``targets`` (master IDs) and ``fingerprint`` (master ID -> {online,
    recording, next_event_start}) are copies for display and queries; only ``bound_record``
    (with its ``seal``) is trusted, by the executor that sealed it. ``names``: the rooms' and
    channels' names read at Prepare, as binding-fact keys (`recorded_names`; None for a
    proposal stored before they were recorded).
    """

    id: str
    created_at: str
    tool: str
    arguments: dict[str, Any]
    targets: tuple[str, ...]
    fingerprint: dict[str, Any]
    fingerprint_hash: str
    schema_version: int
    slot: str
    reason: str
    proposed_by: str
    status: str
    status_code: str | None
    bound_record: bytes
    seal: str
    expires_at: str | None
    decided_at: str | None
    turn_id: str | None = msgspec.field(name="session_turn")
    names: dict[str, str] | None = None

    def recorded_names(self, shown: Mapping[str, Any] | None = None) -> dict[str, str]:
        """The names to call this proposal's rooms by, whoever decided and whatever ended it:
        the names recorded at Prepare (`names`), and for a key not recorded (a proposal stored
        before they were) the name a card showed (`shown`: an approval's binding facts or a
        denial's recorded names), as binding-fact keys."""
        out = {str(k): str(v) for k, v in shown.items()} if isinstance(shown, Mapping) else {}
        return out | dict(self.names or {})


class ApprovalRow(msgspec.Struct, frozen=True):
    """One ``approvals`` row: a person's Approve of a card shown in a browser session at
    ``shown_at`` (recorded consumed), then claimed once by the executor. ``facts`` are the
    card's binding facts (display text) that ``facts_hash`` covers; ``ended_code`` is set when
    it ended before a claim (it can never be claimed then)."""

    id: str
    proposal_id: str
    session_id: str
    card_hash: str
    created_at: str
    expires_at: str
    used: bool
    used_at: str | None
    claimed: bool
    claimed_at: str | None
    shown_at: str | None
    facts_hash: str | None
    facts: dict[str, str] | None
    ended_code: str | None
    uid: int | None = None
    first_approval_id: str | None = None


class FirstApprovalRow(msgspec.Struct, frozen=True):
    """One ``first_approvals`` row: the first of two people's Approve of a card (a rule with
    ``approvers: 2``), bound like an approval, by the uid that signed its page session in. The
    proposal stays pending until a second person (another uid) approves the same card."""

    id: str
    proposal_id: str
    session_id: str
    uid: int
    card_hash: str
    facts_hash: str
    shown_at: str
    created_at: str
    expires_at: str
    claimed: bool
    claimed_at: str | None
    ended_code: str | None


class ExecutionRow(msgspec.Struct, frozen=True):
    """One ``executions`` row. ``outcome`` ∈ running | ok | error | unknown | refused;
    ``detail`` is the decoded ``detail_json`` (e.g. the redacted per-device error map)."""

    id: str
    approval_id: str
    proposal_id: str
    started_at: str
    finished_at: str | None
    outcome: str
    refusal_code: str | None
    detail: dict[str, Any] | None
    verification: str | None
    verified_at: str | None
    verification_detail: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class ProposalStatus:
    """A proposal's recorded state with its execution, if any (what `ProposalState` carries)."""

    proposal_id: str
    tool: str
    status: str
    status_code: str | None
    outcome: str | None
    refusal_code: str | None
    verification: str | None
    verified_at: str | None
    detail: dict[str, Any] | None
    action: str | None = None
    targets: tuple[str, ...] = ()
    target_names: tuple[str, ...] = ()
    acknowledged: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ConsumeResult:
    """`approve`: ``ok`` with the proposal now approved and the new approval's ID, or the
    refusal ``code`` (``approval_id`` then names no row). ``first``: the Approve was recorded
    as the first of two (``approval_id`` names a ``first_approvals`` row; nothing may run yet)."""

    ok: bool
    approval_id: str
    proposal_id: str | None
    code: Code | None = None
    message: str = ""
    first: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ClaimResult:
    """`claim_approval`: ``ok`` with the new ``execution_id`` (outcome running), or ``code``."""

    ok: bool
    approval_id: str
    proposal_id: str | None
    execution_id: str | None = None
    code: Code | None = None
    message: str = ""


# --- reads --------------------------------------------------------------------------------


async def get_proposal(conn: aiosqlite.Connection, proposal_id: str) -> ProposalRow | None:
    """The proposal with that ID, or None."""
    return await one_as(ProposalRow, conn, "SELECT * FROM proposals WHERE id = ?", (proposal_id,))


async def list_pending(conn: aiosqlite.Connection) -> list[ProposalRow]:
    """Every pending proposal, oldest first (call `expire_due` first to drop expired ones)."""
    async with conn.execute(
        "SELECT * FROM proposals WHERE status = 'pending' ORDER BY created_at, id"
    ) as cursor:
        return [from_row(ProposalRow, row) async for row in cursor]


async def list_recent_not_run(
    conn: aiosqlite.Connection, *, hours: int = 24, limit: int = 20
) -> list[ProposalRow]:
    """Proposals that ended ``not_run`` in the last `hours` (by ``decided_at``), newest first."""
    async with conn.execute(
        "SELECT * FROM proposals WHERE status = 'not_run'"
        " AND decided_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) ORDER BY decided_at DESC, id LIMIT ?",
        (f"-{int(hours) * 3600} seconds", limit),
    ) as cursor:
        return [from_row(ProposalRow, row) async for row in cursor]


@dataclasses.dataclass(frozen=True, slots=True)
class HistoryItem:
    """A proposal as the watch's history lists it: the row, and its latest execution's
    outcome, verification and end (None when it never ran)."""

    proposal: ProposalRow
    outcome: str | None
    verification: str | None
    finished_at: str | None


async def proposal_history(
    conn: aiosqlite.Connection, since: str, limit: int
) -> tuple[list[HistoryItem], int]:
    """Proposals made at or after `since` (database-clock text), newest first, at most
    `limit`; and how many more there were."""
    async with conn.execute(
        "SELECT p.*, e.outcome AS e_outcome, e.verification AS e_verification, e.finished_at AS e_finished"
        " FROM proposals p LEFT JOIN executions e ON e.id = (SELECT x.id FROM executions x"
        " WHERE x.proposal_id = p.id ORDER BY x.started_at DESC, x.id DESC LIMIT 1)"
        " WHERE p.created_at >= ? ORDER BY p.created_at DESC, p.id DESC LIMIT ?",
        (since, limit + 1),
    ) as cursor:
        rows = [
            HistoryItem(from_row(ProposalRow, r), r["e_outcome"], r["e_verification"], r["e_finished"])
            async for r in cursor
        ]
    if len(rows) <= limit:
        return rows, 0
    row = await one_row(conn, "SELECT count(*) FROM proposals WHERE created_at >= ?", (since,))
    return rows[:limit], (int(row[0]) if row else limit) - limit


async def get_approval(conn: aiosqlite.Connection, approval_id: str) -> ApprovalRow | None:
    """The approval with that ID, or None."""
    return await one_as(ApprovalRow, conn, "SELECT * FROM approvals WHERE id = ?", (approval_id,))


async def live_first_approval(conn: aiosqlite.Connection, proposal_id: str) -> FirstApprovalRow | None:
    """The proposal's first approval that neither ended nor was claimed, or None. Reads only."""
    return await one_as(
        FirstApprovalRow,
        conn,
        "SELECT * FROM first_approvals WHERE proposal_id = ? AND ended_code IS NULL AND claimed = 0",
        (proposal_id,),
    )


async def get_execution(conn: aiosqlite.Connection, execution_id: str) -> ExecutionRow | None:
    """The execution with that ID, or None."""
    return await one_as(ExecutionRow, conn, "SELECT * FROM executions WHERE id = ?", (execution_id,))


async def execution_for_approval(conn: aiosqlite.Connection, approval_id: str) -> ExecutionRow | None:
    """The execution an approval's claim created, or None (not claimed)."""
    return await one_as(ExecutionRow, conn, "SELECT * FROM executions WHERE approval_id = ?", (approval_id,))


async def execution_for_proposal(conn: aiosqlite.Connection, proposal_id: str) -> ExecutionRow | None:
    """The proposal's latest execution (a proposal has at most one), or None."""
    return await one_as(
        ExecutionRow,
        conn,
        "SELECT * FROM executions WHERE proposal_id = ? ORDER BY started_at DESC, id DESC LIMIT 1",
        (proposal_id,),
    )


async def proposal_state(conn: aiosqlite.Connection, proposal_id: str) -> ProposalStatus | None:
    """The proposal's status and its execution's outcome and verification, or None."""
    proposal = await get_proposal(conn, proposal_id)
    if proposal is None:
        return None
    execution = await execution_for_proposal(conn, proposal_id)
    async with conn.execute(
        "SELECT master_id, name FROM proposal_targets WHERE proposal_id = ?", (proposal_id,)
    ) as cursor:
        names = {row[0]: row[1] or "" async for row in cursor}
    action = proposal.arguments.get("action") if isinstance(proposal.arguments, dict) else None
    acknowledged = await one_row(
        conn,
        "SELECT 1 FROM executions WHERE proposal_id = ? AND acknowledged_at IS NOT NULL",
        (proposal_id,),
    )
    return ProposalStatus(
        proposal_id=proposal.id,
        tool=proposal.tool,
        status=proposal.status,
        status_code=proposal.status_code,
        outcome=execution.outcome if execution else None,
        refusal_code=execution.refusal_code if execution else None,
        verification=execution.verification if execution else None,
        verified_at=execution.verified_at if execution else None,
        detail=execution.detail if execution else None,
        action=action if isinstance(action, str) else None,
        targets=tuple(proposal.targets),
        target_names=tuple(names.get(t, "") for t in proposal.targets),
        acknowledged=acknowledged is not None,
    )


async def kill_switch(conn: aiosqlite.Connection) -> bool:
    """Whether writes are paused, as the audit records it (the page's and `status`'s view when
    the executor does not answer): the newest ``kill_switch`` request says on, or says off
    without the executor's ``kill_switch_sealed`` row for it; off when nobody ever paused.

    A resume the executor has not sealed shows as paused, as the executor counts it. The
    executor itself trusts only its own sealed state, MAC and high-water mark included
    (`services.executor.kill_switch`); this view holds no key and only mirrors it."""
    newest = await one_row(
        conn,
        "SELECT seq, detail_json FROM audit WHERE kind = ? ORDER BY seq DESC LIMIT 1",
        (KILL_SWITCH_KIND,),
    )
    if newest is None:
        return False
    try:
        detail = json.loads(newest["detail_json"])
    except ValueError:
        return True
    if not isinstance(detail, dict) or detail.get("on") is not False:
        return True
    sealed = await one_row(
        conn,
        "SELECT 1 FROM audit WHERE kind = ? AND writer = ? AND seq > ?"
        " AND json_extract(detail_json, '$.request_seq') = ? AND json_extract(detail_json, '$.on') = 0",
        (KILL_SWITCH_SEALED_KIND, EXECUTOR, newest["seq"], newest["seq"]),
    )
    return sealed is None


# --- audit helper -------------------------------------------------------------------------


async def audit_refusal(
    conn: aiosqlite.Connection,
    *,
    actor: str,
    operation: str,
    code: Code,
    message: str | None = None,
    proposal_id: str | None = None,
    detail: Mapping[str, Any] | None = None,
) -> None:
    """Append one ``refusal`` audit row: ``{code, message, operation, **detail}``. Inside the
    caller's transaction if one is open, else its own.

    A refusal is about input from outside, so the row never copies an over-long or hidden-
    character value: each detail value passes `shared.store.audit_safe.safe_value` (long text becomes
    its length, a short prefix and a hash), the message is cut (`safe_message`)."""
    body = {
        **safe_value(dict(detail or {})),
        "code": str(code),
        "message": safe_message(message or MEANINGS[code]),
        "operation": safe_value(operation),
    }
    await append_audit(conn, actor=actor, kind="refusal", proposal_id=proposal_id, detail=body)


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """What happened to one proposal, as the store holds it: the proposal, its consumed
    approval (None: not approved), its execution (None: not claimed), and the audit row that
    decided it (``approval``, ``denial`` or ``expiry``: its ``actor``, ``at`` and ``detail``;
    None while pending).

    Who decided, from the recorded rows (`deciders`): ``decided_from`` is ``page`` (the
    approval page: an Approve, or a Deny pressed there), ``command`` (``fleetwatch deny`` or
    ``deny-all``, over approval.sock) or None (nobody: it expired, or nobody decided yet);
    ``decided_uids`` the local accounts that decided, the first of two approvers first (empty
    when not known); ``decided_session`` the page session that pressed the button (None off
    the page)."""

    proposal: ProposalRow
    approval: ApprovalRow | None
    execution: ExecutionRow | None
    decided_by: str | None
    decided_kind: str | None
    decided_detail: dict[str, Any]
    decided_from: str | None = None
    decided_uids: tuple[int, ...] = ()
    decided_session: str | None = None

    def names(self) -> dict[str, str]:
        """The names to call the proposal's rooms by (`ProposalRow.recorded_names`: those
        recorded at Prepare, else what the decided card showed)."""
        shown = self.approval.facts if self.approval else self.decided_detail.get("shown")
        return self.proposal.recorded_names(shown if isinstance(shown, Mapping) else None)


DECIDING_KINDS = ("approval", "denial", "expiry")
PAGE_ACTOR = "page "
"""The prefix of a page session's actor (``page <session ID>``)."""


async def session_uid(conn: aiosqlite.Connection, session_id: str) -> int | None:
    """The uid that signed the page session in (its ``session_start`` row), or None."""
    row = await one_row(
        conn,
        "SELECT json_extract(detail_json, '$.uid') AS uid FROM audit WHERE kind = 'session_start'"
        " AND json_extract(detail_json, '$.session_id') = ? ORDER BY seq LIMIT 1",
        (session_id,),
    )
    uid = row["uid"] if row is not None else None
    return uid if isinstance(uid, int) and uid >= 0 else None


async def decider_detail(conn: aiosqlite.Connection, actor: str) -> dict[str, int]:
    """``{"uid": N}`` for a page session's actor (``page <session ID>``) whose session names its
    uid, so a decision's audit row names its person itself; empty otherwise (a command's actor
    names its uid: ``operator:1001``)."""
    if not actor.startswith(PAGE_ACTOR):
        return {}
    uid = await session_uid(conn, actor.removeprefix(PAGE_ACTOR))
    return {"uid": uid} if uid is not None else {}


async def _deciders(
    conn: aiosqlite.Connection, kind: str | None, actor: str | None, approval: ApprovalRow | None
) -> tuple[str | None, tuple[int, ...], str | None]:
    """(`Decision.decided_from`, `Decision.decided_uids`, `Decision.decided_session`)."""
    if kind == "approval" and approval is not None:
        uids = []
        if approval.first_approval_id is not None:
            first = await one_row(
                conn, "SELECT uid FROM first_approvals WHERE id = ?", (approval.first_approval_id,)
            )
            if first is not None and first["uid"] >= 0:
                uids.append(int(first["uid"]))
        uid = approval.uid if approval.uid is not None and approval.uid >= 0 else None
        if uid is None:
            uid = await session_uid(conn, approval.session_id)
        if uid is not None:
            uids.append(uid)
        return "page", tuple(uids), approval.session_id
    if kind != "denial" or actor is None:
        return None, (), None
    if actor.startswith(PAGE_ACTOR):
        session = actor.removeprefix(PAGE_ACTOR)
        uid = await session_uid(conn, session)
        return "page", (uid,) if uid is not None else (), session
    uid = command_uid(actor)
    return "command", (uid,) if uid is not None else (), None


async def decision(conn: aiosqlite.Connection, proposal_id: str) -> Decision | None:
    """The `Decision` of one proposal, or None when there is no such proposal. Reads only."""
    proposal = await get_proposal(conn, proposal_id)
    if proposal is None:
        return None
    sql = "SELECT * FROM approvals WHERE proposal_id = ? AND used = 1 LIMIT 1"
    approval = await one_as(ApprovalRow, conn, sql, (proposal_id,))
    audit = await one_row(
        conn,
        "SELECT actor, kind, detail_json FROM audit WHERE proposal_id = ? AND kind IN (?, ?, ?)"
        " ORDER BY seq LIMIT 1",
        (proposal_id, *DECIDING_KINDS),
    )
    detail = _json(audit["detail_json"]) if audit else None
    kind, actor = (audit["kind"], audit["actor"]) if audit else (None, None)
    decided_from, uids, session = await _deciders(conn, kind, actor, approval)
    return Decision(
        proposal=proposal,
        approval=approval,
        execution=await execution_for_proposal(conn, proposal_id),
        decided_by=actor,
        decided_kind=kind,
        decided_detail=detail if isinstance(detail, dict) else {},
        decided_from=decided_from,
        decided_uids=uids,
        decided_session=session,
    )


async def recent_decisions(conn: aiosqlite.Connection, *, limit: int = 10) -> list[Decision]:
    """The `limit` proposals decided last (approved, denied, expired, ran or not), newest
    first, each as a `Decision`. Reads only."""
    async with conn.execute(
        "SELECT id FROM proposals WHERE status != 'pending' AND decided_at IS NOT NULL"
        " ORDER BY decided_at DESC, id DESC LIMIT ?",
        (limit,),
    ) as cursor:
        ids = [row["id"] async for row in cursor]
    out = []
    for proposal_id in ids:
        found = await decision(conn, proposal_id)
        if found is not None:
            out.append(found)
    return out
