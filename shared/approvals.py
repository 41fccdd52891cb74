"""The approval state in the store: proposals, approvals, executions, the kill switch.

The public face: import from here. Rows and reads live in `shared.approval_rows`, the
executor's claim/outcome/verification in `shared.executions`; both are re-exported.

Every function takes an `aiosqlite.Connection` from `shared.store.open_store` and is either a
single statement or one `write_tx` (``BEGIN IMMEDIATE``); every change writes its audit row in
the same transaction, and every time that decides anything comes from SQLite's clock.

Life of a proposal (``proposals.status``)::

    pending ──deny / deny_all──────────▶ denied
       │    ──expire_due / _all / _turn─▶ expired
       └─consume_approval──▶ approved ──finish_execution(ok | error | unknown)──▶ executed
                                 │       (a refusal after the claim leaves it approved,
                                 │        status_code = the code; it can never run)
                                 └─recover_running (the executor crashed mid-write)──▶ executed

An approval (a card shown in a browser session) is made by `create_approval`, consumed once by
`consume_approval` (the one statement `CONSUME_SQL`) and claimed once by the executor
(`claim_approval`), which inserts the ``executions`` row (``running``) in the same transaction.

Refusals (`create_approval`, `consume_approval`, `claim_approval`, `deny`) change nothing but
one audit row (kind ``refusal``, detail ``{code, message, operation, ...}``); `audit_refusal`
writes the same row for refusals decided elsewhere (the executor's checks, the intake).

Audit kinds written here: proposal, denial, expiry, card_shown, approval, refusal,
execution_start, outcome, verification, kill_switch.

Errors: `ApprovalError` (``proposal_not_found``, ``proposal_not_pending``) from
`create_approval`; `StoreError` (``store_busy``) from any write.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import aiosqlite
import msgspec

from shared import binding
from shared.approval_rows import (
    EXECUTOR_ACTOR,
    KILL_SWITCH_KEY,
    OUTCOMES,
    VERIFICATIONS,
    ApprovalError,
    ApprovalRow,
    ClaimResult,
    ConsumeResult,
    ExecutionRow,
    ProposalRow,
    ProposalStatus,
    audit_refusal,
    execution_for_approval,
    execution_for_proposal,
    get_approval,
    get_execution,
    get_proposal,
    kill_switch,
    list_pending,
    new_id,
    new_proposal_id,
    one_row,
    proposal_state,
)
from shared.binding import BoundRecord
from shared.canonical import canonical_json
from shared.errors import MEANINGS, Code
from shared.executions import claim_approval, finish_execution, record_verification, recover_running
from shared.store import append_audit, db_now, write_tx

__all__ = [
    "CONSUME_SQL",
    "EXECUTOR_ACTOR",
    "KILL_SWITCH_KEY",
    "OUTCOMES",
    "VERIFICATIONS",
    "ApprovalError",
    "ApprovalRow",
    "ClaimResult",
    "ConsumeResult",
    "ExecutionRow",
    "ProposalRow",
    "ProposalStatus",
    "audit_refusal",
    "claim_approval",
    "consume_approval",
    "create_approval",
    "deny",
    "deny_all",
    "execution_for_approval",
    "execution_for_proposal",
    "expire_all_pending",
    "expire_due",
    "expire_turn",
    "finish_execution",
    "get_approval",
    "get_execution",
    "get_proposal",
    "insert_proposal",
    "kill_switch",
    "list_pending",
    "new_proposal_id",
    "proposal_state",
    "recover_running",
    "record_verification",
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
) -> ProposalRow:
    """Store a prepared proposal as pending, ``expires_at = db now + ttl_seconds``, with its
    ``proposal_targets`` rows and a ``proposal`` audit row (actor `proposed_by`), in one
    transaction. `record_bytes` and `seal` are stored exactly as the executor returned them.

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
            " expires_at, session_turn) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
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
            ),
        )
        await conn.executemany(
            "INSERT INTO proposal_targets (proposal_id, master_id) VALUES (?, ?)",
            [(record.proposal_id, target) for target in record.targets],
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


async def deny(conn: aiosqlite.Connection, proposal_id: str, *, actor: str) -> bool:
    """Deny a pending proposal (audit ``denial``); True. False, with a ``refusal`` audit row
    (``proposal_not_found`` or ``proposal_not_pending``) and nothing else changed, otherwise."""
    async with write_tx(conn):
        now = await db_now(conn)
        cursor = await conn.execute(
            "UPDATE proposals SET status = 'denied', decided_at = ? WHERE id = ? AND status = 'pending'",
            (now, proposal_id),
        )
        if cursor.rowcount == 1:
            await append_audit(conn, actor=actor, kind="denial", proposal_id=proposal_id, detail={})
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
            await append_audit(conn, actor=actor, kind=kind, proposal_id=proposal_id, detail=detail)
    return len(ids)


async def deny_all(conn: aiosqlite.Connection, *, actor: str) -> int:
    """Deny every pending proposal ("Deny all pending"; there is no approve-all); one
    ``denial`` audit row each (``all: true``); the count."""
    return await _close_pending(
        conn, "all", None, status="denied", kind="denial", actor=actor, detail={"all": True}
    )


async def expire_due(conn: aiosqlite.Connection, *, actor: str = "approval_web") -> int:
    """Expire every pending proposal whose ``expires_at`` has passed on the DB clock; one
    ``expiry`` audit row each (``reason: unreviewed``); the count."""
    return await _close_pending(
        conn, "due", None, status="expired", kind="expiry", actor=actor, detail={"reason": "unreviewed"}
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


async def create_approval(
    conn: aiosqlite.Connection,
    *,
    proposal_id: str,
    session_id: str,
    card_hash: str,
    ttl_seconds: int = 300,
    actor: str = "approval_web",
) -> ApprovalRow:
    """A card was shown: a new unused approval bound to `session_id` and `card_hash`,
    ``expires_at = db now + ttl_seconds`` (audit ``card_shown``). Only for a pending proposal
    not past its ``expires_at``.

    Raises:
        ApprovalError: ``proposal_not_found`` / ``proposal_not_pending`` (after writing one
            ``refusal`` audit row; nothing else changes).
        StoreError: ``store_busy``.
    """
    approval_id = new_id("a-")
    refusal: Code | None = None
    async with write_tx(conn):
        now = await db_now(conn)
        row = await one_row(conn, "SELECT status, expires_at FROM proposals WHERE id = ?", (proposal_id,))
        if row is None:
            refusal = Code.PROPOSAL_NOT_FOUND
        elif row["status"] != "pending" or (row["expires_at"] is not None and row["expires_at"] <= now):
            refusal = Code.PROPOSAL_NOT_PENDING
        if refusal is not None:
            await audit_refusal(
                conn,
                actor=actor,
                operation="create_approval",
                code=refusal,
                proposal_id=proposal_id if row else None,
                detail={"proposal_id": proposal_id, "session_id": session_id},
            )
        else:
            await conn.execute(
                "INSERT INTO approvals (id, proposal_id, session_id, card_hash, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    approval_id,
                    proposal_id,
                    session_id,
                    card_hash,
                    now,
                    await db_now(conn, plus_seconds=ttl_seconds),
                ),
            )
            await append_audit(
                conn,
                actor=actor,
                kind="card_shown",
                proposal_id=proposal_id,
                detail={"approval_id": approval_id, "session_id": session_id, "card_hash": card_hash},
            )
    if refusal is not None:
        raise ApprovalError(refusal)
    approval = await get_approval(conn, approval_id)
    assert approval is not None
    return approval


CONSUME_SQL = """
UPDATE approvals SET used = 1, used_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE id = ? AND used = 0 AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  AND EXISTS (SELECT 1 FROM proposals p WHERE p.id = approvals.proposal_id AND p.status = 'pending'
              AND (p.expires_at IS NULL OR p.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
"""
"""Consuming an approval: THE one statement (``used=1 WHERE used=0 AND expires_at > <db now>``,
its proposal still pending and unexpired). No changed row means refused."""


async def consume_approval(
    conn: aiosqlite.Connection,
    approval_id: str,
    *,
    session_id: str | None = None,
    actor: str = "approval_web",
) -> ConsumeResult:
    """A person pressed Approve: consume the approval once (`CONSUME_SQL`), then in the same
    transaction the proposal becomes ``approved``, the session's ``approvals_count`` goes up,
    and an ``approval`` audit row is written.

    With `session_id`, an approval shown in another browser session is refused as
    ``approval_not_found``. Refusals (``approval_not_found``, ``approval_expired``,
    ``approval_already_used``, ``proposal_not_pending``) write one ``refusal`` audit row and
    change nothing else. Any number of concurrent callers, in any processes: exactly one wins.
    """
    async with write_tx(conn):
        row = await one_row(conn, "SELECT * FROM approvals WHERE id = ?", (approval_id,))
        wrong_session = row is not None and session_id is not None and row["session_id"] != session_id
        if (
            row is not None
            and not wrong_session
            and (await conn.execute(CONSUME_SQL, (approval_id,))).rowcount == 1
        ):
            proposal_id = row["proposal_id"]
            await conn.execute(
                "UPDATE proposals SET status = 'approved', decided_at = ? WHERE id = ?",
                (await db_now(conn), proposal_id),
            )
            await conn.execute(
                "UPDATE sessions SET approvals_count = approvals_count + 1 WHERE id = ?", (row["session_id"],)
            )
            await append_audit(
                conn,
                actor=actor,
                kind="approval",
                proposal_id=proposal_id,
                detail={
                    "approval_id": approval_id,
                    "session_id": row["session_id"],
                    "card_hash": row["card_hash"],
                },
            )
            return ConsumeResult(True, approval_id, proposal_id, message="approved")
        code = _consume_refusal(row, wrong_session, await db_now(conn))
        proposal_id = row["proposal_id"] if row is not None and not wrong_session else None
        await audit_refusal(
            conn,
            actor=actor,
            operation="consume_approval",
            code=code,
            proposal_id=proposal_id,
            detail={"approval_id": approval_id},
        )
        return ConsumeResult(False, approval_id, proposal_id, code=code, message=MEANINGS[code])


def _consume_refusal(row: sqlite3.Row | None, wrong_session: bool, now: str) -> Code:
    if row is None or wrong_session:
        return Code.APPROVAL_NOT_FOUND
    if row["used"]:
        return Code.APPROVAL_ALREADY_USED
    if row["expires_at"] <= now:
        return Code.APPROVAL_EXPIRED
    return Code.PROPOSAL_NOT_PENDING


# --- kill switch --------------------------------------------------------------------------


async def set_kill_switch(conn: aiosqlite.Connection, on: bool, *, actor: str) -> None:
    """Pause (`on`) or resume every write; the executor checks it before each write, after the
    claim. Writes a ``kill_switch`` audit row ``{on}``."""
    async with write_tx(conn):
        await conn.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (KILL_SWITCH_KEY, "on" if on else "off", await db_now(conn)),
        )
        await append_audit(conn, actor=actor, kind="kill_switch", detail={"on": bool(on)})
