"""Executions in the store: the executor's claim of a consumed approval, the outcome, the
independent verification, and recovery after a crash.

Used by the executor only. Each function is one `write_tx` that writes its audit row in the
same transaction (`mark_executed` runs inside its caller's); times come from SQLite's clock.
An approval refused at its claim is ended by the store's `end_unclaimed`, as the page's.

An execution is ``running`` from the claim until `finish_execution` records ok | error |
unknown | refused. An executor that dies in between leaves ``running``; its next start turns
it into ``unknown`` (`recover_running`): the write may or may not have reached Epiphan, and it
is never retried.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

import aiosqlite

from shared.canonical import canonical_json
from shared.errors import MEANINGS, Code
from shared.store.approval_rows import (
    EXECUTOR_ACTOR,
    OUTCOMES,
    VERIFICATIONS,
    ClaimResult,
    audit_refusal,
    new_id,
    one_row,
)
from shared.store.approvals import end_unclaimed
from shared.store.db import StoreError, append_audit, db_now, write_tx

CLAIM_SQL = """
UPDATE approvals SET claimed = 1, claimed_at = :now
WHERE id = :approval_id AND proposal_id = :proposal_id AND card_hash = :card_hash
  AND facts_hash = :facts_hash
  AND used = 1 AND claimed = 0 AND ended_code IS NULL
  AND used_at IS NOT NULL AND used_at < expires_at
  AND :now < expires_at
  AND EXISTS (SELECT 1 FROM proposals p WHERE p.id = :proposal_id AND p.status = 'approved')
"""
"""The claim: one statement, run under ``BEGIN IMMEDIATE`` with ``:now`` = the DB clock's now.
It checks, in the same statement, that the approval still names the proposal, card hash and
facts hash that Execute carries (what the page showed and the person approved), and that the
approval's window is still open *now*: consumed in time is not enough, an executor frozen or
queued past the window claims nothing (``approval_expired``)."""


TWO_PEOPLE_SQL = """
SELECT f.id FROM approvals a JOIN first_approvals f ON f.id = a.first_approval_id
WHERE a.id = :approval_id AND f.proposal_id = :proposal_id
  AND f.card_hash = :card_hash AND f.facts_hash = :facts_hash
  AND a.uid IS NOT NULL AND a.uid >= 0 AND f.uid >= 0 AND f.uid != a.uid
  AND f.claimed = 0 AND f.ended_code IS NULL
  AND :now < f.expires_at
"""
"""A change that needs two people: the approval completes a first approval of the same
proposal, card hash and facts hash, by another known uid, never claimed nor ended, whose own
window is still open *now*. Run in the claim's transaction; the first is claimed with it."""


async def claim_approval(
    conn: aiosqlite.Connection,
    approval_id: str,
    *,
    proposal_id: str,
    card_hash: str,
    facts_hash: str,
    approvers: int = 1,
) -> ClaimResult:
    """The executor claims a consumed approval, once (`CLAIM_SQL`), and inserts the
    ``executions`` row (outcome ``running``) with an ``execution_start`` audit row, in one
    transaction. `proposal_id`, `card_hash` and `facts_hash` are what Execute carries.

    Refusals write one ``refusal`` audit row and change nothing else, except that an approval
    not yet claimed is ended and its approved proposal becomes ``not_run`` (nothing can ever
    run it): ``approval_not_found``; ``approval_mismatch`` (the row names another proposal,
    card or facts: it was changed in the store); ``approval_not_consumed``;
    ``approval_expired`` (its window closed before this claim on the database clock: the
    executor was frozen, busy or reached late; or consumed at or after its expiry, i.e. edited
    in the store);
    ``approval_already_used`` (already claimed or ended); ``proposal_not_pending`` (the
    proposal is not ``approved``); with `approvers` 2 (the executor's own policy for the tool),
    ``approvals_insufficient`` unless `TWO_PEOPLE_SQL` finds the first approval this one
    completes (distinct uids, the same card, both windows open): both are claimed together.
    """
    execution_id = new_id("x-")
    params = {
        "approval_id": approval_id,
        "proposal_id": proposal_id,
        "card_hash": card_hash,
        "facts_hash": facts_hash,
    }
    async with write_tx(conn):
        now = await db_now(conn)
        row = await one_row(conn, "SELECT * FROM approvals WHERE id = ?", (approval_id,))
        changed = 0
        first = None
        if row is not None and approvers >= 2:
            first = await one_row(conn, TWO_PEOPLE_SQL, {**params, "now": now})
        if row is not None and (approvers < 2 or first is not None):
            changed = (await conn.execute(CLAIM_SQL, {**params, "now": now})).rowcount
        if changed == 1 and first is not None:
            await conn.execute(
                "UPDATE first_approvals SET claimed = 1, claimed_at = ? WHERE id = ?", (now, first["id"])
            )
        if changed == 1:
            await conn.execute(
                "INSERT INTO executions (id, approval_id, proposal_id, started_at, outcome)"
                " VALUES (?, ?, ?, ?, 'running')",
                (execution_id, approval_id, proposal_id, now),
            )
            await append_audit(
                conn,
                actor=EXECUTOR_ACTOR,
                kind="execution_start",
                proposal_id=proposal_id,
                detail={"approval_id": approval_id, "execution_id": execution_id, "card_hash": card_hash},
            )
            return ClaimResult(True, approval_id, proposal_id, execution_id=execution_id, message="claimed")
        code = _claim_refusal(row, params, now)
        if code is Code.PROPOSAL_NOT_PENDING and approvers >= 2 and first is None:
            status = await one_row(conn, "SELECT status FROM proposals WHERE id = ?", (proposal_id,))
            if status is not None and status["status"] == "approved":
                code = Code.APPROVALS_INSUFFICIENT
        await end_unclaimed(
            conn,
            approval_id=approval_id,
            proposal_id=proposal_id,
            code=code,
            actor=EXECUTOR_ACTOR,
            operation="execute",
            step="claim",
        )
        return ClaimResult(False, approval_id, proposal_id, code=code, message=MEANINGS[code])


def _claim_refusal(row: sqlite3.Row | None, wanted: Mapping[str, str], now: str) -> Code:
    if row is None:
        return Code.APPROVAL_NOT_FOUND
    if any(row[k] != wanted[k] for k in ("proposal_id", "card_hash", "facts_hash")):
        return Code.APPROVAL_MISMATCH
    if row["claimed"] or row["ended_code"] is not None:
        return Code.APPROVAL_ALREADY_USED
    if not row["used"]:
        return Code.APPROVAL_EXPIRED if row["expires_at"] <= now else Code.APPROVAL_NOT_CONSUMED
    if row["used_at"] is None or row["used_at"] >= row["expires_at"] or row["expires_at"] <= now:
        return Code.APPROVAL_EXPIRED
    return Code.PROPOSAL_NOT_PENDING


async def finish_execution(
    conn: aiosqlite.Connection,
    execution_id: str,
    *,
    outcome: str,
    refusal_code: Code | None = None,
    message: str = "",
    detail: Mapping[str, Any] | None = None,
) -> bool:
    """Record a running execution's final `outcome` (ok | error | unknown | refused), once.

    ok / error / unknown (the write tool was called): the proposal becomes ``executed`` and an
    ``outcome`` audit row ``{execution_id, outcome, message, detail}`` is written. refused (a
    check after the claim failed, nothing ran): the proposal becomes ``not_run`` with
    ``status_code`` = the code, its approval stays claimed (so it can never run), and the audit
    row is a ``refusal``. `detail` (e.g. the redacted per-device error map) is stored as JSON.
    Returns False, changing nothing, when the execution is not ``running``.

    Raises:
        ValueError: an unknown outcome, refused without a code, or a code without refused.
    """
    if outcome not in OUTCOMES or (outcome == "refused") != (refusal_code is not None):
        raise ValueError(f"bad outcome {outcome!r} with refusal code {refusal_code!r}")
    detail_map = dict(detail or {})
    async with write_tx(conn):
        now = await db_now(conn)
        row = await one_row(
            conn, "SELECT proposal_id FROM executions WHERE id = ? AND outcome = 'running'", (execution_id,)
        )
        if row is None:
            return False
        proposal_id = row["proposal_id"]
        if refusal_code is None:
            await mark_executed(
                conn,
                execution_id,
                proposal_id,
                outcome,
                detail_map,
                now,
                {"message": message, "detail": detail_map},
            )
            return True
        await conn.execute(
            "UPDATE executions SET outcome = ?, refusal_code = ?, detail_json = ?, finished_at = ? WHERE id = ?",
            (outcome, str(refusal_code), canonical_json(detail_map).decode(), now, execution_id),
        )
        await conn.execute(
            "UPDATE proposals SET status = 'not_run', status_code = ? WHERE id = ? AND status = 'approved'",
            (str(refusal_code), proposal_id),
        )
        await audit_refusal(
            conn,
            actor=EXECUTOR_ACTOR,
            operation="execute",
            code=refusal_code,
            message=message or None,
            proposal_id=proposal_id,
            detail={"execution_id": execution_id, "step": "after_claim"},
        )
    return True


async def record_verification(
    conn: aiosqlite.Connection,
    execution_id: str,
    *,
    verification: str,
    detail: str,
    observed_at: str | None = None,
    recheck: bool = False,
) -> None:
    """Record the independent post-write observation (verified | not_observed | contradicted),
    made at `observed_at` (DB-clock text; default: now), with a ``verification`` audit row.
    It is kept apart from the outcome and never changes it. `recheck`: a later fresh read
    (`services.executor.recheck`), said so in the audit row; it replaces the earlier verdict.

    Raises:
        ValueError: an unknown verification value.
    """
    if verification not in VERIFICATIONS:
        raise ValueError(f"bad verification {verification!r}")
    async with write_tx(conn):
        at = observed_at or await db_now(conn)
        row = await one_row(conn, "SELECT proposal_id FROM executions WHERE id = ?", (execution_id,))
        await conn.execute(
            "UPDATE executions SET verification = ?, verified_at = ?, verification_detail = ? WHERE id = ?",
            (verification, at, detail, execution_id),
        )
        await append_audit(
            conn,
            actor=EXECUTOR_ACTOR,
            kind="verification",
            proposal_id=row["proposal_id"] if row else None,
            detail={
                "execution_id": execution_id,
                "verification": verification,
                "observed_at": at,
                "detail": detail,
                **({"recheck": True} if recheck else {}),
            },
        )


async def mark_executed(
    conn: aiosqlite.Connection,
    execution_id: str,
    proposal_id: str,
    outcome: str,
    detail: Mapping[str, Any],
    now: str,
    audit_detail: Mapping[str, Any],
) -> None:
    """Inside the caller's open write transaction: the write tool was called (or may have
    been), so the execution ends with `outcome` (ok | error | unknown), `detail` stored as JSON
    and ``finished_at`` `now`; its proposal becomes ``executed``; one ``outcome`` audit row
    ``{execution_id, outcome, **audit_detail}``. THE one place this is written.

    Raises:
        ValueError: `outcome` is ``refused`` or not an outcome.
        StoreError: ``internal_error`` when no transaction is open.
    """
    if outcome not in OUTCOMES - {"refused"}:
        raise ValueError(f"not an outcome of a write: {outcome!r}")
    if not conn.in_transaction:
        raise StoreError(Code.INTERNAL_ERROR, "mark_executed runs inside the caller's write_tx")
    await conn.execute(
        "UPDATE executions SET outcome = ?, detail_json = ?, finished_at = ? WHERE id = ?",
        (outcome, canonical_json(dict(detail)).decode(), now, execution_id),
    )
    await conn.execute("UPDATE proposals SET status = 'executed' WHERE id = ?", (proposal_id,))
    await append_audit(
        conn,
        actor=EXECUTOR_ACTOR,
        kind="outcome",
        proposal_id=proposal_id,
        detail={"execution_id": execution_id, "outcome": outcome, **audit_detail},
    )


RECOVERED_DETAIL = {"reason": "the executor stopped while this write was in flight; it is never retried"}


async def recover_running(conn: aiosqlite.Connection) -> int:
    """On the executor's start: every execution still ``running`` becomes ``unknown`` (its
    proposal ``executed``), one ``outcome`` audit row each (``recovered: true``); the count."""
    async with write_tx(conn):
        now = await db_now(conn)
        async with conn.execute("SELECT id, proposal_id FROM executions WHERE outcome = 'running'") as cursor:
            rows = [(row["id"], row["proposal_id"]) async for row in cursor]
        for execution_id, proposal_id in rows:
            extra = {"recovered": True, **RECOVERED_DETAIL}
            await mark_executed(conn, execution_id, proposal_id, "unknown", RECOVERED_DETAIL, now, extra)
    return len(rows)
