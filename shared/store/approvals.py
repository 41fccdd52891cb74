"""The approval state in the store: proposals, approvals, executions, the kill switch.

The public face: import from here. Rows and reads live in `shared.store.approval_rows`, the
executor's claim/outcome/verification in `services.executor.executions` (the executor's own).

Every function takes an `aiosqlite.Connection` from `shared.store.db.open_store` and is either a
single statement or one `write_tx` (``BEGIN IMMEDIATE``); every change writes its audit row in
the same transaction, and every time that decides anything comes from SQLite's clock.

Life of a proposal (``proposals.status``)::

    pending ──deny / deny_all──────────▶ denied
       │    ──expire_due / _all / _turn─▶ expired   (nobody approved or denied it in time)
       └─approve──▶ approved ──finish_execution(ok | error | unknown)──▶ executed
                       │  ──recover_running (the executor stopped mid-write)──▶ executed (unknown)
                       │  ──finish_execution(refused) (a check after the claim)──▶ not_run
                       └─end_unclaimed / end_stranded (refused before the claim, the executor
                          not reached or silent before its claim, a stop)──▶ not_run

Every state but pending and approved is final; ``status_code`` says why for not_run.

A change whose rule asks two people (``approvers: 2``) stays pending after the first Approve
(a ``first_approvals`` row, bound like an approval, with the uid that signed its session in);
only a second Approve from another uid, of the same card, makes it approved, and the executor
claims both together (`services.executor.executions.claim_approval`). A Deny by either person,
an expiry, or a card that changed between the two ends the first approval.

Nothing is written when a card is shown (a GET changes nothing). Approve (`approve`, the one
statement `APPROVE_SQL`) records the approval already consumed, bound to the session, the
proposal, the card's hash, the executor's facts hash and the shown-at time from the page's
signed form token. The executor claims it once (`claim_approval`, which checks the proposal,
card hash and facts hash Execute carries in the same statement) and inserts the
``executions`` row (``running``) in the same transaction. An approval that ends before its
claim can never be claimed; `end_unclaimed` is the one place that ends one (the executor's
refused claim inside its transaction, the page, `end_stranded`).

Refusals (`approve`, `claim_approval`, `deny`) change nothing but one audit row (kind
``refusal``, detail ``{code, message, operation, ...}``); `audit_refusal` writes the same row
for refusals decided elsewhere (the executor's checks, the intake).

Audit kinds written here: proposal, denial, expiry, approval, refusal, execution_start,
outcome, verification, kill_switch.

Errors: `StoreError` (``store_busy``) from any write.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Mapping
from typing import Any

import aiosqlite
import msgspec

from shared import binding
from shared.binding import BoundRecord
from shared.canonical import canonical_json
from shared.errors import MEANINGS, Code
from shared.store.approval_rows import (
    EXECUTOR_ACTOR,
    KILL_SWITCH_KIND,
    KILL_SWITCH_SEALED_KIND,
    OUTCOMES,
    VERIFICATIONS,
    ApprovalRow,
    ClaimResult,
    ConsumeResult,
    Decision,
    ExecutionRow,
    FirstApprovalRow,
    HistoryItem,
    ProposalRow,
    ProposalStatus,
    audit_refusal,
    decider_detail,
    decision,
    execution_for_approval,
    execution_for_proposal,
    from_row,
    get_approval,
    get_execution,
    get_proposal,
    kill_switch,
    list_pending,
    list_recent_not_run,
    live_first_approval,
    new_id,
    new_proposal_id,
    one_row,
    proposal_history,
    proposal_state,
    recent_decisions,
)
from shared.store.audit_safe import safe_value
from shared.store.db import AuditHead, append_audit, db_now, write_tx

__all__ = [
    "CONSUME_SQL",
    "EXECUTOR_ACTOR",
    "KILL_SWITCH_KIND",
    "KILL_SWITCH_SEALED_KIND",
    "OUTCOMES",
    "VERIFICATIONS",
    "ApprovalRow",
    "ClaimResult",
    "ConsumeResult",
    "Decision",
    "ExecutionRow",
    "FirstApprovalRow",
    "HistoryItem",
    "ProposalRow",
    "ProposalStatus",
    "audit_refusal",
    "APPROVE_SQL",
    "FIRST_APPROVE_SQL",
    "approve",
    "card_window_end",
    "decision",
    "deny",
    "end_stranded",
    "end_unclaimed",
    "deny_all",
    "execution_for_approval",
    "execution_for_proposal",
    "expire_all_pending",
    "expire_due",
    "expire_turn",
    "from_row",
    "get_approval",
    "get_execution",
    "get_proposal",
    "insert_proposal",
    "kill_switch",
    "list_pending",
    "list_recent_not_run",
    "live_first_approval",
    "new_proposal_id",
    "proposal_history",
    "proposal_state",
    "recent_decisions",
    "set_kill_switch",
]

# --- proposals ----------------------------------------------------------------------------


async def insert_proposal(
    conn: aiosqlite.Connection,
    *,
    record: BoundRecord,
    record_bytes: bytes,
    seal: str,
    fingerprint_hash: str,
    proposed_by: str,
    turn_id: str | None,
    ttl_seconds: int,
    target_names: Mapping[str, str] | None = None,
    names: Mapping[str, str] | None = None,
) -> ProposalRow:
    """Store a prepared proposal as pending, ``expires_at = db now + ttl_seconds``, with its
    ``proposal_targets`` rows and a ``proposal`` audit row (actor `proposed_by`), in one
    transaction. `record_bytes` and `seal` are stored exactly as the executor returned them;
    `target_names` (master ID -> the room's name as the executor read it) only for display;
    `names` (the rooms' and channels' names read at Prepare, binding-fact keys: display text)
    recorded as ``names_json``, what every surface names the proposal's rooms by.

    Raises:
        ValueError: `record_bytes` is not the canonical bytes of `record`.
        sqlite3.IntegrityError: a proposal with that ID exists.
        StoreError: ``store_busy``.
    """
    if binding.record_bytes(record) != bytes(record_bytes):
        raise ValueError("record_bytes is not the canonical form of record")
    record = binding.record_from_bytes(record_bytes)  # the columns copy exactly what is sealed (NFC)
    fingerprint = canonical_json(msgspec.to_builtins(record.fingerprint)).decode()
    async with write_tx(conn):
        now = await db_now(conn)
        expires_at = await db_now(conn, plus_seconds=ttl_seconds)
        await conn.execute(
            "INSERT INTO proposals (id, created_at, tool, arguments_json, targets_json, fingerprint_json,"
            " fingerprint_hash, schema_version, slot, reason, proposed_by, status, bound_record, seal,"
            " expires_at, session_turn, names_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
            (
                record.proposal_id,
                now,
                record.tool,
                canonical_json(record.arguments).decode(),
                canonical_json(list(record.targets)).decode(),
                fingerprint,
                fingerprint_hash,
                record.schema_version,
                record.slot,
                record.reason,
                proposed_by,
                bytes(record_bytes),
                seal,
                expires_at,
                turn_id,
                canonical_json(dict(names)).decode() if names else None,
            ),
        )
        read = dict(target_names or {})
        await conn.executemany(
            "INSERT INTO proposal_targets (proposal_id, master_id, name) VALUES (?, ?, ?)",
            [(record.proposal_id, target, read.get(target)) for target in record.targets],
        )
        await append_audit(
            conn,
            actor=proposed_by,
            kind="proposal",
            proposal_id=record.proposal_id,
            detail={
                "tool": record.tool,
                "targets": list(record.targets),
                "fingerprint_hash": fingerprint_hash,
                "turn_id": turn_id,
            },
        )
    row = await get_proposal(conn, record.proposal_id)
    assert row is not None
    return row


async def deny(
    conn: aiosqlite.Connection,
    proposal_id: str,
    *,
    actor: str,
    shown: Mapping[str, str] | None = None,
) -> bool:
    """Deny a pending proposal (audit ``denial``); True. False, with a ``refusal`` audit row
    (``proposal_not_found`` or ``proposal_not_pending``) and nothing else changed, otherwise.

    `shown`: the names the denied card showed (binding-fact keys such as ``device <id> name``,
    display text), kept in the denial's audit row so a list of decisions names the room."""
    async with write_tx(conn):
        now = await db_now(conn)
        cursor = await conn.execute(
            "UPDATE proposals SET status = 'denied', decided_at = ? WHERE id = ? AND status = 'pending'",
            (now, proposal_id),
        )
        if cursor.rowcount == 1:
            await _end_firsts_of(conn, proposal_id)
            detail = {"shown": safe_value(dict(shown))} if shown else {}
            detail |= await decider_detail(conn, actor)
            await append_audit(conn, actor=actor, kind="denial", proposal_id=proposal_id, detail=detail)
            return True
        exists = await one_row(conn, "SELECT 1 FROM proposals WHERE id = ?", (proposal_id,)) is not None
        await audit_refusal(
            conn,
            actor=actor,
            operation="deny",
            code=Code.PROPOSAL_NOT_PENDING if exists else Code.PROPOSAL_NOT_FOUND,
            proposal_id=proposal_id if exists else None,
            detail={"proposal_id": proposal_id},
        )
        return False


async def _end_firsts_of(conn: aiosqlite.Connection, proposal_id: str) -> None:
    """A proposal that stops waiting ends its first approval (a Deny by either person ends it)."""
    await conn.execute(
        "UPDATE first_approvals SET ended_code = ? WHERE proposal_id = ? AND ended_code IS NULL AND claimed = 0",
        (str(Code.PROPOSAL_NOT_PENDING), proposal_id),
    )


_PENDING_SQL = {
    "all": "SELECT id FROM proposals WHERE status = 'pending' ORDER BY created_at, id",
    "due": "SELECT id FROM proposals WHERE status = 'pending' AND expires_at <= ? ORDER BY created_at, id",
    "turn": "SELECT id FROM proposals WHERE status = 'pending' AND session_turn = ? ORDER BY created_at, id",
}


async def _close_pending(
    conn: aiosqlite.Connection,
    which: str,
    param: str | None,
    *,
    status: str,
    kind: str,
    actor: str,
    detail: dict[str, Any],
) -> int:
    """Move the selected pending proposals to `status`, one `kind` audit row each; the count."""
    async with write_tx(conn):
        now = await db_now(conn)
        params = () if which == "all" else (now if which == "due" else param,)
        async with conn.execute(_PENDING_SQL[which], params) as cursor:
            ids = [row["id"] async for row in cursor]
        for proposal_id in ids:
            await conn.execute(
                "UPDATE proposals SET status = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
                (status, now, proposal_id),
            )
            await _end_firsts_of(conn, proposal_id)
            await append_audit(conn, actor=actor, kind=kind, proposal_id=proposal_id, detail=detail)
    return len(ids)


async def deny_all(conn: aiosqlite.Connection, *, actor: str) -> int:
    """Deny every pending proposal ("Deny all pending"; there is no approve-all); one
    ``denial`` audit row each (``all: true``); the count."""
    detail = {"all": True, **await decider_detail(conn, actor)}
    return await _close_pending(conn, "all", None, status="denied", kind="denial", actor=actor, detail=detail)


async def expire_due(conn: aiosqlite.Connection, *, actor: str = "approval_web") -> int:
    """Expire every pending proposal whose ``expires_at`` (its own life, the policy's
    ``proposal_ttl_seconds``) has passed on the DB clock; one ``expiry`` audit row each
    (``reason: undecided``: nobody approved or denied it in time); the count."""
    return await _close_pending(
        conn, "due", None, status="expired", kind="expiry", actor=actor, detail={"reason": "undecided"}
    )


async def expire_all_pending(conn: aiosqlite.Connection, *, actor: str, reason: str) -> int:
    """Expire every pending proposal (on a service's start: a new executor key means no
    earlier seal verifies); one ``expiry`` audit row each naming `reason`; the count."""
    return await _close_pending(
        conn, "all", None, status="expired", kind="expiry", actor=actor, detail={"reason": reason}
    )


async def expire_turn(conn: aiosqlite.Connection, turn_id: str, *, actor: str) -> int:
    """Expire the pending proposals of a model turn that failed partway; the count."""
    return await _close_pending(
        conn, "turn", turn_id, status="expired", kind="expiry", actor=actor, detail={"reason": "turn_failed"}
    )


# --- approvals ----------------------------------------------------------------------------

APPROVE_SQL = """
INSERT INTO approvals (id, proposal_id, session_id, card_hash, facts_hash, facts_json, shown_at,
                       created_at, expires_at, used, used_at, uid, first_approval_id)
SELECT :approval_id, p.id, :session_id, :card_hash, :facts_hash, :facts_json, :shown_at,
       strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
       strftime('%Y-%m-%dT%H:%M:%fZ', :shown_at, :ttl),
       1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), :uid, :first_approval_id
FROM proposals p
WHERE p.id = :proposal_id AND p.status = 'pending'
  AND (p.expires_at IS NULL OR p.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  AND :shown_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  AND strftime('%Y-%m-%dT%H:%M:%fZ', :shown_at, :ttl) > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
"""
"""Approving: THE one statement. It records the approval already consumed (``used=1``), bound
to the browser session, the proposal, the card's hash, the executor's facts hash and the time
the card was shown, only while that proposal is pending and unexpired and the card's window
(``shown_at`` + ttl) is open on the database clock. No inserted row means refused.
``approvals_one_used_per_proposal`` makes a second approval of one proposal impossible."""

FIRST_APPROVE_SQL = """
INSERT INTO first_approvals (id, proposal_id, session_id, uid, card_hash, facts_hash, shown_at,
                             expires_at)
SELECT :approval_id, p.id, :session_id, :uid, :card_hash, :facts_hash, :shown_at,
       strftime('%Y-%m-%dT%H:%M:%fZ', :shown_at, :ttl)
FROM proposals p
WHERE p.id = :proposal_id AND p.status = 'pending' AND :uid >= 0
  AND (p.expires_at IS NULL OR p.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  AND :shown_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  AND strftime('%Y-%m-%dT%H:%M:%fZ', :shown_at, :ttl) > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
"""
"""The first of two approvals (a rule with ``approvers: 2``): the same conditions as
`APPROVE_SQL`, a known uid, and the proposal stays pending. ``first_approvals_one_live`` makes
a second live first approval of one proposal impossible."""

CONSUME_SQL = APPROVE_SQL
"""The consume statement of DESIGN §5 (the approval is created consumed: nothing is written
when a card is shown, so there is no unused approval to consume)."""


def card_window_end(shown_at: str, proposal_expires_at: str | None, ttl_seconds: int) -> str:
    """When Approve stops working for a card shown at `shown_at` (DB-clock text): the card's
    own window (`ttl_seconds` after it was shown) or the proposal's expiry, whichever comes
    first. The card states this time; `approve` refuses after it."""
    moment = dt.datetime.fromisoformat(shown_at.replace("Z", "+00:00")) + dt.timedelta(seconds=ttl_seconds)
    window = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return window if proposal_expires_at is None else min(window, proposal_expires_at)


async def approve(
    conn: aiosqlite.Connection,
    *,
    proposal_id: str,
    session_id: str,
    card_hash: str,
    facts_hash: str,
    facts: Mapping[str, str] | None,
    shown_at: str,
    ttl_seconds: int,
    actor: str = "approval_web",
    uid: int | None = None,
    approvers: int = 1,
) -> ConsumeResult:
    """A person pressed Approve on the card of `proposal_id` shown at `shown_at` (DB-clock
    text, from the page's signed form token): record the approval consumed (`APPROVE_SQL`),
    then in the same transaction the proposal becomes ``approved``, the session's
    ``approvals_count`` goes up, and one ``approval`` audit row is written (approval ID,
    session, uid, card hash, facts hash, shown at).

    `facts` are the card's binding facts as the executor returned them at Inspect (display
    text; `facts_hash` covers them and the secrets they stand for), or None when the page no
    longer has them; they are stored so the executor can name what changed. `uid`: the uid
    that signed the page session in (None: not known).

    `approvers` 2 (the tool's rule asks two people): with no live first approval, this Approve
    is recorded as the first (`FIRST_APPROVE_SQL`, one ``first_approval`` audit row; the
    proposal stays pending; ``first`` in the result); with one, it completes it only from
    another known uid and for the same card hash and facts hash, and the approval row names the
    first. A first approval whose window passed is ended (``approval_expired``) and this Approve
    becomes the new first.

    Refusals change nothing but one ``refusal`` audit row: ``proposal_not_found``;
    ``approval_already_used`` (the proposal was already approved); ``proposal_not_pending``
    (denied, expired); ``approval_expired`` (the card's window closed); with two approvers,
    ``approver_not_distinct`` (the uid of the first, or no known uid: the first stays) and
    ``approvals_card_changed`` (the card changed since the first: the first is ended too, so
    both people approve again). Any number of concurrent callers, in any processes: at most one
    wins per proposal.
    """
    approval_id = new_id("a-")
    params = {
        "approval_id": approval_id,
        "proposal_id": proposal_id,
        "session_id": session_id,
        "card_hash": card_hash,
        "facts_hash": facts_hash,
        "facts_json": canonical_json(dict(facts)).decode() if facts is not None else None,
        "shown_at": shown_at,
        "ttl": f"+{int(ttl_seconds)} seconds",
        "uid": -1 if uid is None else int(uid),
        "first_approval_id": None,
    }
    async with write_tx(conn):
        if approvers >= 2:
            first = await _second_of(conn, params)
            if isinstance(first, Code):
                return await _refuse_approve(conn, params, first, actor)
            if first is None:
                return await _record_first(conn, params, actor)
            params["first_approval_id"] = first
        try:
            inserted = (await conn.execute(APPROVE_SQL, params)).rowcount == 1
        except sqlite3.IntegrityError:  # approvals_one_used_per_proposal: approved meanwhile
            inserted = False
        if inserted:
            await conn.execute(
                "UPDATE proposals SET status = 'approved', decided_at = ? WHERE id = ?",
                (await db_now(conn), proposal_id),
            )
            await conn.execute(
                "UPDATE sessions SET approvals_count = approvals_count + 1 WHERE id = ?", (session_id,)
            )
            detail = {key: params[key] for key in ("approval_id", "session_id", "card_hash", "facts_hash")}
            detail.update(shown_at=shown_at, uid=params["uid"])
            if params["first_approval_id"] is not None:
                detail["first_approval_id"] = params["first_approval_id"]
            await append_audit(conn, actor=actor, kind="approval", proposal_id=proposal_id, detail=detail)
            return ConsumeResult(True, approval_id, proposal_id, message="approved")
        row = await one_row(conn, "SELECT status, expires_at FROM proposals WHERE id = ?", (proposal_id,))
        return await _refuse_approve(conn, params, _approve_refusal(row, await db_now(conn)), actor)


async def _second_of(conn: aiosqlite.Connection, params: Mapping[str, Any]) -> str | Code | None:
    """For a change that needs two people: the ID of the live first approval this Approve
    completes; None when this Approve is to be the first; or the refusal's code. Inside the
    caller's transaction; a first whose window passed, or whose card changed, is ended here."""
    if params["uid"] < 0:
        return Code.APPROVER_NOT_DISTINCT
    first = await live_first_approval(conn, params["proposal_id"])
    if first is None:
        return None
    if first.expires_at <= await db_now(conn):
        await _end_first(conn, first.id, Code.APPROVAL_EXPIRED)
        return None
    if first.uid == params["uid"]:
        return Code.APPROVER_NOT_DISTINCT
    if (first.card_hash, first.facts_hash) != (params["card_hash"], params["facts_hash"]):
        await _end_first(conn, first.id, Code.APPROVALS_CARD_CHANGED)
        return Code.APPROVALS_CARD_CHANGED
    return first.id


async def _end_first(conn: aiosqlite.Connection, first_id: str, code: Code) -> None:
    await conn.execute(
        "UPDATE first_approvals SET ended_code = coalesce(ended_code, ?) WHERE id = ? AND claimed = 0",
        (str(code), first_id),
    )


async def _record_first(conn: aiosqlite.Connection, params: Mapping[str, Any], actor: str) -> ConsumeResult:
    """Record this Approve as the first of two (`FIRST_APPROVE_SQL`) with its audit row, or
    refuse it as `approve` would."""
    try:
        inserted = (await conn.execute(FIRST_APPROVE_SQL, params)).rowcount == 1
    except sqlite3.IntegrityError:  # first_approvals_one_live: a first was recorded meanwhile
        inserted = False
    proposal_id = params["proposal_id"]
    if not inserted:
        row = await one_row(conn, "SELECT status, expires_at FROM proposals WHERE id = ?", (proposal_id,))
        return await _refuse_approve(conn, params, _approve_refusal(row, await db_now(conn)), actor)
    detail = {key: params[key] for key in ("session_id", "uid", "card_hash", "facts_hash", "shown_at")}
    await append_audit(
        conn,
        actor=actor,
        kind="first_approval",
        proposal_id=proposal_id,
        detail={"first_approval_id": params["approval_id"], **detail},
    )
    return ConsumeResult(True, params["approval_id"], proposal_id, message="first approval", first=True)


async def _refuse_approve(
    conn: aiosqlite.Connection, params: Mapping[str, Any], code: Code, actor: str
) -> ConsumeResult:
    """One ``refusal`` audit row for a refused Approve; the result naming `code`."""
    proposal_id = params["proposal_id"]
    exists = await one_row(conn, "SELECT 1 FROM proposals WHERE id = ?", (proposal_id,)) is not None
    await audit_refusal(
        conn,
        actor=actor,
        operation="approve",
        code=code,
        proposal_id=proposal_id if exists else None,
        detail={"session_id": params["session_id"], "shown_at": params["shown_at"], "uid": params["uid"]},
    )
    return ConsumeResult(
        False, params["approval_id"], proposal_id if exists else None, code=code, message=MEANINGS[code]
    )


def _approve_refusal(row: sqlite3.Row | None, now: str) -> Code:
    if row is None:
        return Code.PROPOSAL_NOT_FOUND
    if row["status"] in ("approved", "executed", "not_run"):
        return Code.APPROVAL_ALREADY_USED
    if row["status"] != "pending" or (row["expires_at"] is not None and row["expires_at"] <= now):
        return Code.PROPOSAL_NOT_PENDING
    return Code.APPROVAL_EXPIRED


async def end_unclaimed(
    conn: aiosqlite.Connection,
    *,
    approval_id: str | None,
    proposal_id: str,
    code: Code,
    actor: str,
    step: str,
    operation: str = "execute",
    message: str | None = None,
) -> bool:
    """Nothing ran: end an approval the executor has not claimed, and its approved proposal.
    THE one place this is written: the executor's refused claim, its refusals before the claim,
    the page (Execute not delivered, or no answer) and `end_stranded` all call it.

    Unless the approval was claimed, it gets ``ended_code`` = `code` (it can never be claimed
    after this; an approval already ended keeps its first code) and the proposal, if
    ``approved``, becomes ``not_run`` with ``status_code`` = `code`. One ``refusal`` audit row
    ``{code, message, operation, step, approval_id, not_run, claimed}`` is written either way
    (`audit_refusal`; `message` None: the code's meaning). `approval_id` None: the proposal has
    no approval row. Returns False, writing only that row, when the executor had already
    claimed the approval: its execution decides the outcome.

    Inside the caller's open transaction it is part of it (the caller's reads and this are one
    decision, and roll back together); on a connection with none it opens its own `write_tx`.

    Raises:
        StoreError: ``store_busy`` as in `write_tx`.
    """
    if not conn.in_transaction:
        async with write_tx(conn):
            return await end_unclaimed(
                conn,
                approval_id=approval_id,
                proposal_id=proposal_id,
                code=code,
                actor=actor,
                step=step,
                operation=operation,
                message=message,
            )
    row = await one_row(conn, "SELECT claimed FROM approvals WHERE id = ?", (approval_id,))
    claimed = row is not None and bool(row["claimed"])
    ended = False
    if not claimed:
        await conn.execute(
            "UPDATE approvals SET ended_code = coalesce(ended_code, ?) WHERE id = ?", (str(code), approval_id)
        )
        ended = (
            await conn.execute(
                "UPDATE proposals SET status = 'not_run', status_code = ?, decided_at = coalesce(decided_at, ?)"
                " WHERE id = ? AND status = 'approved'",
                (str(code), await db_now(conn), proposal_id),
            )
        ).rowcount == 1
    exists = await one_row(conn, "SELECT 1 FROM proposals WHERE id = ?", (proposal_id,)) is not None
    await audit_refusal(
        conn,
        actor=actor,
        operation=operation,
        code=code,
        message=message,
        proposal_id=proposal_id if exists else None,
        detail={"approval_id": approval_id, "step": step, "not_run": ended, "claimed": claimed},
    )
    return not claimed


async def end_stranded(conn: aiosqlite.Connection, *, actor: str, reason: Code) -> int:
    """At a service's start: every ``approved`` proposal whose approval the executor never
    claimed ends ``not_run`` (`reason`), its approval ended (`end_unclaimed`, step and
    operation ``start``). A stop between Approve and the executor's claim leaves such a
    proposal; nothing can run it now (a restarted executor has a new key). The count."""
    async with write_tx(conn):
        async with conn.execute(
            "SELECT p.id AS proposal_id, a.id AS approval_id FROM proposals p"
            " LEFT JOIN approvals a ON a.proposal_id = p.id AND a.used = 1"
            " WHERE p.status = 'approved' AND (a.id IS NULL OR a.claimed = 0)"
        ) as cursor:
            rows = [(r["proposal_id"], r["approval_id"]) async for r in cursor]
        for proposal_id, approval_id in rows:
            await end_unclaimed(
                conn,
                approval_id=approval_id,
                proposal_id=proposal_id,
                code=reason,
                actor=actor,
                operation="start",
                step="start",
            )
    return len(rows)


# --- kill switch --------------------------------------------------------------------------


async def set_kill_switch(conn: aiosqlite.Connection, on: bool, *, actor: str) -> AuditHead:
    """Record an operator's request to pause (`on`) or resume every write: one ``kill_switch``
    audit row ``{on}``, whose seq and hash are returned. The executor trusts only what it sealed
    itself (``SealKillSwitch`` with this row; `services.executor.kill_switch`): until it does, a
    newer request counts as paused, and `kill_switch` shows it so."""
    return await append_audit(conn, actor=actor, kind=KILL_SWITCH_KIND, detail={"on": bool(on)})
