"""Replies of approval.sock's admin operations, built from store rows. Pure builders plus the
one SQL read that `shared.store.approvals` does not offer (the audit tail).

Times are the database clock's text (``YYYY-MM-DDTHH:MM:SS.SSSZ``, UTC); ages and times to
expiry are whole seconds computed from two such texts, never from this process's clock.
"""

from __future__ import annotations

from typing import Final

import aiosqlite

from shared.store.approvals import Decision, HistoryItem, ProposalRow, ProposalStatus, from_row
from shared.store.db import parse_db_text
from shared.wire.approval import AuditRow, ProposalDetail, ProposalEvent, ProposalState, ProposalSummary

MAX_AUDIT_TAIL: Final = 1000
"""Most audit rows one `AuditTail` returns."""


parse_db_time = parse_db_text
"""A database-clock text as an aware UTC datetime (`shared.store.db.parse_db_text`)."""


def seconds_between(earlier: str, later: str) -> int:
    """Whole seconds from `earlier` to `later` (both database-clock texts), rounded down;
    negative when `later` is earlier."""
    delta = parse_db_time(later) - parse_db_time(earlier)
    return int(delta.total_seconds() // 1)


def summary_of(row: ProposalRow) -> ProposalSummary:
    """The list line of a proposal."""
    return ProposalSummary(
        proposal_id=row.id,
        tool=row.tool,
        targets=tuple(row.targets),
        created_at=row.created_at,
        expires_at=row.expires_at,
        proposed_by=row.proposed_by,
        status=row.status,
        status_code=row.status_code,
        action=action if isinstance(action := row.arguments.get("action"), str) else None,
        names=dict(row.names or {}),
    )


def event_of(item: HistoryItem) -> ProposalEvent:
    """A proposal as the watch's history and notices see it (no reason, no seal)."""
    row = item.proposal
    return ProposalEvent(
        proposal_id=row.id,
        tool=row.tool,
        arguments=row.arguments,
        targets=tuple(row.targets),
        proposed_by=row.proposed_by,
        created_at=row.created_at,
        status=row.status,
        status_code=row.status_code,
        expires_at=row.expires_at,
        decided_at=row.decided_at,
        outcome=item.outcome,
        verification=item.verification,
        finished_at=item.finished_at,
        names=dict(row.names or {}),
    )


def detail_of(
    row: ProposalRow, status: ProposalStatus | None, *, now: str, decided: Decision | None = None
) -> ProposalDetail:
    """Everything about one proposal at `now` (database clock): every argument, its age,
    seconds to expiry (pending only, never below 0), the fingerprint hash, who proposed, its
    execution's outcome, refusal code, verification and detail when it ran, and who decided
    it and when (`decided`, once someone did)."""
    expires_in = None
    if row.status == "pending" and row.expires_at is not None:
        expires_in = max(0, seconds_between(now, row.expires_at))
    detail: dict[str, object] = {}
    if status is not None:
        detail = dict(status.detail or {})
        if status.verified_at is not None:
            detail["verified_at"] = status.verified_at
    if row.turn_id is not None:
        detail["turn_id"] = row.turn_id
    if row.status_code is not None:
        detail["status_code"] = row.status_code
    return ProposalDetail(
        summary=summary_of(row),
        arguments=dict(row.arguments),
        reason=row.reason,
        fingerprint_hash=row.fingerprint_hash,
        schema_version=row.schema_version,
        age_seconds=max(0, seconds_between(row.created_at, now)),
        expires_in_seconds=expires_in,
        outcome=status.outcome if status else None,
        refusal_code=status.refusal_code if status else None,
        verification=status.verification if status else None,
        detail=detail,
        decided_kind=decided.decided_kind if decided else None,
        decided_at=row.decided_at if decided and decided.decided_kind else None,
        decided_from=decided.decided_from if decided else None,
        decided_uids=decided.decided_uids if decided else (),
    )


def state_of(status: ProposalStatus) -> ProposalState:
    """A proposal's recorded state for the assistant (from code, never from the model)."""
    return ProposalState(
        proposal_id=status.proposal_id,
        tool=status.tool,
        status=status.status,
        outcome=status.outcome,
        verification=status.verification,
        status_code=status.status_code or status.refusal_code,
        action=status.action,
        targets=status.targets,
        target_names=status.target_names,
        acknowledged=status.acknowledged,
    )


async def audit_tail(conn: aiosqlite.Connection, limit: int) -> tuple[AuditRow, ...]:
    """The newest `limit` audit rows, oldest of them first."""
    sql = (
        "SELECT seq, at, actor, kind, proposal_id, detail_json FROM"
        " (SELECT * FROM audit ORDER BY seq DESC LIMIT ?) ORDER BY seq"
    )
    async with conn.execute(sql, (int(limit),)) as cursor:
        return tuple([from_row(AuditRow, row) async for row in cursor])
