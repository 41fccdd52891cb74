"""approval.sock's admin job: the operators' operations (``fleetwatch pending``, ``deny``,
``pause``/``resume``, ``status``, ``audit``, ``resume --denials``, ``acknowledge``). Each write
is audited; nothing here approves.

SetKillSwitch records the operator's request, then asks the executor to seal it
(`SealKillSwitch`): the executor trusts only a kill switch state it sealed under its own key,
so a pause holds at once even when the executor is down, and a resume the executor did not
confirm is refused (``kill_switch_not_confirmed`` / ``service_unavailable``; writes stay
paused). AuditVerify verifies the log with approval_web's own key and anchor, then asks the
executor to verify it with its own (`CheckAudit`): each service alone can check its own rows.
LiftDenialPauses and Acknowledge are audited (``denial_lift``, ``acknowledgement``).
"""

from __future__ import annotations

import asyncio
import logging

from services.approval_web import admin, one_change, patterns
from services.approval_web.desk import Desk, Jobs
from services.approval_web.intake import IntakeRefused, proposal_not_found, proposal_not_pending
from services.approval_web.limits import active_pauses, count_last_hour, count_pending, lift_pauses
from shared.errors import Code
from shared.store import approvals
from shared.store.audit_export import export_rows, sink_counts
from shared.store.audit_seal import APPROVAL_WEB, EXECUTOR
from shared.store.db import db_now, verify_audit
from shared.text.catalogue import N_
from shared.text.display import visible
from shared.wire.approval import (
    MAX_AUDIT_EXPORT,
    Acknowledge,
    ApproverReport,
    AuditExport,
    AuditReport,
    AuditRows,
    AuditTail,
    AuditVerify,
    Count,
    Deny,
    DenyAll,
    ExportCount,
    ExportedAudit,
    ExportedAuditRow,
    GetApproverReport,
    GetStatus,
    LiftDenialPauses,
    ListPending,
    PausesLifted,
    PendingList,
    ProposalDetail,
    ProposalState,
    SetKillSwitch,
    ShowProposal,
    Status,
)
from shared.wire.client import CallError
from shared.wire.executor import CheckAudit, Health, HealthReport, SealKillSwitch, WriterCheck
from shared.wire.server import PeerCred

logger = logging.getLogger(__name__)


async def list_pending(desk: Desk, message: ListPending, peer: PeerCred) -> PendingList:
    """The proposals waiting for a person (not yet past their expiry), and those that ended
    without running lately."""
    async with desk.db:
        rows = await approvals.list_pending(desk.conn)
        ended = await approvals.list_recent_not_run(desk.conn)
        now = await db_now(desk.conn)
    fresh = [r for r in rows if r.expires_at is None or r.expires_at > now]
    return PendingList(
        items=tuple(admin.summary_of(r) for r in fresh), not_run=tuple(admin.summary_of(r) for r in ended)
    )


async def show(desk: Desk, message: ShowProposal, peer: PeerCred) -> ProposalDetail:
    """One proposal in full. Raises `IntakeRefused` (``proposal_not_found``)."""
    async with desk.db:
        row = await approvals.get_proposal(desk.conn, message.proposal_id)
        status = await approvals.proposal_state(desk.conn, message.proposal_id)
        decided = await approvals.decision(desk.conn, message.proposal_id) if row and row.decided_at else None
        now = await db_now(desk.conn)
    if row is None:
        raise proposal_not_found(message.proposal_id)
    return admin.detail_of(row, status, now=now, decided=decided)


async def deny(desk: Desk, message: Deny, peer: PeerCred) -> ProposalState:
    """Deny one pending proposal. Raises `IntakeRefused` (``proposal_not_found``,
    ``proposal_not_pending``; audited by the store)."""
    async with desk.db:
        denied = await approvals.deny(desk.conn, message.proposal_id, actor=desk.actor(peer, message.actor))
        status = await approvals.proposal_state(desk.conn, message.proposal_id)
    if status is None:
        raise proposal_not_found(message.proposal_id, audited=True)
    if not denied:
        raise proposal_not_pending(message.proposal_id, status.status)
    return admin.state_of(status)


async def deny_all(desk: Desk, message: DenyAll, peer: PeerCred) -> Count:
    """Deny every pending proposal; how many."""
    async with desk.db:
        count = await approvals.deny_all(desk.conn, actor=desk.actor(peer, message.actor))
    return Count(count=count)


async def set_kill_switch(desk: Desk, message: SetKillSwitch, peer: PeerCred) -> Status:
    """Record the request, then have the executor seal it (see the module doc).

    Raises:
        IntakeRefused: a resume the executor did not seal: ``kill_switch_not_confirmed``
            (its refusal), ``service_unavailable`` / ``service_no_answer`` (not reached).
            A pause holds even then (the executor counts an unsealed request as paused).
    """
    async with desk.db:
        head = await approvals.set_kill_switch(desk.conn, message.on, actor=desk.actor(peer, message.actor))
    try:
        await desk.executor.call(SealKillSwitch(request_seq=head.seq, on=message.on))
    except CallError as exc:
        if not message.on:
            raise IntakeRefused.words(
                exc.code,
                N_(
                    "writes stay paused: the executor did not confirm the resume (%(code)s); run resume again once it answers"
                ),
                code=str(exc.code),
            ) from exc
        logger.warning("the executor did not seal a pause (%s); it counts as paused anyway", exc.code)
    return await status(desk, GetStatus(), peer)


async def status(desk: Desk, message: GetStatus, peer: PeerCred) -> Status:
    """Queue, caps, pauses, changes to settle, the kill switch (the executor's own view when
    it answers Health), the executor, the fence, the autonomy."""
    limits = desk.policy.limits
    async with desk.db:
        pending = await count_pending(desk.conn)
        last_hour = await count_last_hour(desk.conn)
        pauses = await active_pauses(desk.conn, limits)
        unsettled = await one_change.unsettled(desk.conn)
        kill_switch = await approvals.kill_switch(desk.conn)
    health = await _executor_health(desk)
    return Status(
        pending=pending,
        max_pending=limits.max_pending,
        last_hour=last_hour,
        per_hour=limits.per_hour,
        kill_switch=health.kill_switch if health is not None else kill_switch,
        executor_up=health is not None,
        fence_configured=desk.settings.fence_configured,
        autonomy=str(desk.policy.autonomy),
        pauses=pauses,
        unsettled=unsettled,
        audit_export=_export_counts(desk),
    )


def _export_counts(desk: Desk) -> tuple[ExportCount, ...]:
    """Each writing service's continuous export counts, from the files they keep beside the
    store (none when ``FLEETWATCH_AUDIT_EXPORT`` is unset)."""
    if desk.settings.audit_export is None:
        return ()
    found = (sink_counts(desk.settings.db, writer) for writer in (APPROVAL_WEB, EXECUTOR))
    return tuple(ExportCount(c.writer, c.target, c.sent, c.dropped) for c in found if c is not None)


async def _executor_health(desk: Desk) -> HealthReport | None:
    """The executor's Health (its own view of the kill switch), or None when it does not
    answer."""
    try:
        return await desk.executor.call(Health())
    except CallError:
        return None


async def audit_tail(desk: Desk, message: AuditTail, peer: PeerCred) -> AuditRows:
    """The newest audit rows. Raises `IntakeRefused` (``invalid_message``: a limit out of range)."""
    if not 1 <= message.limit <= admin.MAX_AUDIT_TAIL:
        raise IntakeRefused(Code.INVALID_MESSAGE, f"limit must be 1 to {admin.MAX_AUDIT_TAIL}")
    async with desk.db:
        return AuditRows(rows=await admin.audit_tail(desk.conn, message.limit))


async def audit_export(desk: Desk, message: AuditExport, peer: PeerCred) -> ExportedAudit:
    """A page of the audit with each row's chain position and MAC. Raises `IntakeRefused`
    (``invalid_message``: a limit out of range, or a `since` that is no database-clock time)."""
    if not 1 <= message.limit <= MAX_AUDIT_EXPORT:
        raise IntakeRefused(Code.INVALID_MESSAGE, f"limit must be 1 to {MAX_AUDIT_EXPORT}")
    if message.since is not None:
        try:
            admin.parse_db_time(message.since)
        except ValueError as exc:
            raise IntakeRefused(Code.INVALID_MESSAGE, "since must be a UTC time") from exc
    rows = []
    async with desk.db:
        async for row in export_rows(desk.conn, since=message.since, after_seq=message.after_seq):
            rows.append(ExportedAuditRow(**row))
            if len(rows) > message.limit:
                break
    return ExportedAudit(rows=tuple(rows[: message.limit]), more=len(rows) > message.limit)


async def approvers(desk: Desk, message: GetApproverReport, peer: PeerCred) -> ApproverReport:
    """The approvers' report over the last `days` days (`services.approval_web.patterns`).
    Raises `IntakeRefused` (``invalid_message``: days out of range)."""
    if not 1 <= message.days <= patterns.MAX_DAYS:
        raise IntakeRefused(Code.INVALID_MESSAGE, f"days must be 1 to {patterns.MAX_DAYS}")
    threshold = desk.policy.limits.min_read_seconds
    async with desk.db:
        return await patterns.approver_report(desk.conn, days=message.days, threshold_seconds=threshold)


async def audit_verify(desk: Desk, message: AuditVerify, peer: PeerCred) -> AuditReport:
    """The log verified by both writers, each with its own key and anchor."""
    # Each writer walks the chain in its own process: at once, not one after the other.
    checks = tuple(await asyncio.gather(check_audit(desk), _executor_check(desk)))
    bad = [c for c in checks if not c.ok]
    named = [c for c in bad if c.first_bad_seq is not None]
    first = min(named, key=lambda c: c.first_bad_seq or 0) if named else (bad[0] if bad else None)
    return AuditReport(
        ok=not bad,
        rows=max(c.rows for c in checks),
        first_bad_seq=first.first_bad_seq if first else None,
        reason=f"{first.writer}: {first.reason}" if first else None,
        checks=checks,
    )


async def check_audit(desk: Desk) -> WriterCheck:
    """The log verified with approval_web's own key (its rows' MACs) and anchor."""
    witness = desk.witness
    if witness is not None:
        async with desk.db:
            await witness.observe(desk.conn)
    # The walk takes the store lock one chunk at a time: the page keeps serving meanwhile.
    result = await verify_audit(
        desk.conn, anchors=witness.anchors if witness is not None else (), lock=desk.db
    )
    anchor = witness.anchor if witness is not None else None
    return WriterCheck(
        writer=APPROVAL_WEB,
        ok=result.ok,
        rows=result.rows,
        signed=result.signed_by(APPROVAL_WEB),
        first_bad_seq=result.first_bad_seq,
        reason=result.reason,
        anchor_seq=anchor.seq if anchor is not None else None,
    )


async def _executor_check(desk: Desk) -> WriterCheck:
    """The executor's own verification, or a failed check saying why it is missing."""
    try:
        return (await desk.executor.call(CheckAudit())).check
    except CallError as exc:
        why = f"not checked: the executor did not answer ({exc.code}); only it holds its key"
        return WriterCheck(writer=EXECUTOR, ok=False, rows=0, reason=why)


async def lift_denial_pauses(desk: Desk, message: LiftDenialPauses, peer: PeerCred) -> PausesLifted:
    """Lift the denial pauses running now (all, or `tool` on `room`).

    Raises:
        IntakeRefused: ``invalid_message`` (a tool without a room or the other way round),
            ``no_such_pause`` (nothing running matches), ``ambiguous_room`` (two paused
            rooms have that name).
    """
    if (message.tool is None) != (message.room is None):
        raise IntakeRefused(Code.INVALID_MESSAGE, "name both the tool and the room, or neither")
    actor = desk.actor(peer, message.actor)
    limits = desk.policy.limits
    target = None
    if message.tool is not None and message.room is not None:
        async with desk.db:
            running = await active_pauses(desk.conn, limits, tool=message.tool)
        matches = {p.target for p in running if message.room in (p.target, p.target_name)}
        if not matches:
            raise IntakeRefused.said(
                Code.NO_SUCH_PAUSE,
                N_("no denial pause of %(tool)s on %(room)s is running"),
                tool=visible(message.tool, 64),
                room=visible(message.room, 80),
            )
        if len(matches) > 1:
            raise IntakeRefused(
                Code.AMBIGUOUS_ROOM,
                f"{len(matches)} paused rooms are named {visible(message.room, 80)}: "
                f"{', '.join(sorted(matches))}; name one by its device ID",
            )
        (target,) = matches
    async with desk.db:
        lifted = await lift_pauses(desk.conn, limits, actor=actor, tool=message.tool, target=target)
    return PausesLifted(pauses=lifted)


async def acknowledge(desk: Desk, message: Acknowledge, peer: PeerCred) -> ProposalState:
    """An operator acknowledges a change that ended unknown or was not verified.

    Raises:
        IntakeRefused: ``proposal_not_found``, ``nothing_to_acknowledge`` (audited).
    """
    async with desk.db:
        refused = await one_change.acknowledge(
            desk.conn, message.proposal_id, actor=desk.actor(peer, message.actor)
        )
        status = await approvals.proposal_state(desk.conn, message.proposal_id)
    if refused is not None or status is None:
        raise IntakeRefused(refused or Code.PROPOSAL_NOT_FOUND, audited=True)
    return admin.state_of(status)


JOBS: Jobs = {
    ListPending: list_pending,
    ShowProposal: show,
    Deny: deny,
    DenyAll: deny_all,
    SetKillSwitch: set_kill_switch,
    GetStatus: status,
    AuditTail: audit_tail,
    AuditVerify: audit_verify,
    AuditExport: audit_export,
    GetApproverReport: approvers,
    LiftDenialPauses: lift_denial_pauses,
    Acknowledge: acknowledge,
}
