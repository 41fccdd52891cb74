"""approval.sock's intake job: proposals in (`SubmitProposal`), and the assistant's reads and
expiries of them (`GetProposalState`, `ExpireTurn`, `ListProposalHistory`).

SubmitProposal runs under one lock (`Desk.submitting`): checks, limits, Prepare and the insert,
so two submissions at once cannot both take the last place in the queue (only this process
stores proposals). In order (each refusal: a stable code, one ``refusal`` audit row written by
the service, nothing else changed): the policy checks of
`services.approval_web.intake.check_submission`, then what the store says about the rooms
(`services.approval_web.one_change`): an identical proposal still pending is the answer
(`ProposalExists`, one ``proposal_repeated`` audit row; nothing queued), another change in the
way is ``target_busy``, an unsettled last change is ``target_unverified`` unless the
executor's fresh read (``Recheck``) verifies it now; then the limits of
`services.approval_web.limits`, then Prepare on executor.sock (its refusal codes pass through
unchanged; the executor not running: ``service_unavailable``; no answer:
``service_no_answer``), then `shared.store.approvals.insert_proposal` (with the rooms' names the
executor read). The answer is the new proposal's ID and when it expires unreviewed.

ListProposalHistory (the assistant's watch, and operators) lists the proposals made since a
time with their outcomes, and the page's address (`Desk.page_url`, set once the page serves).
"""

from __future__ import annotations

import logging
from typing import Final

from services.approval_web import admin, one_change
from services.approval_web.desk import Desk, Jobs
from services.approval_web.intake import (
    CheckedProposal,
    IntakeRefused,
    check_prepared,
    check_submission,
    proposal_not_found,
)
from services.approval_web.limits import check_limits, read_counts
from shared.errors import Code, FleetwatchError
from shared.store import approvals
from shared.store.db import append_audit, db_now
from shared.text.catalogue import N_
from shared.text.display import visible
from shared.wire.approval import (
    MAX_PROPOSAL_HISTORY,
    Count,
    ExpireTurn,
    GetProposalState,
    ListProposalHistory,
    ProposalAccepted,
    ProposalExists,
    ProposalHistory,
    ProposalState,
    SubmitProposal,
)
from shared.wire.client import CallError
from shared.wire.executor import Prepare, Recheck, Rechecked
from shared.wire.server import PeerCred

logger = logging.getLogger(__name__)

BUSY: Final = {
    "pending": N_(
        "another change for %(target)s (%(id)s) is waiting for a person; decide or wait for it first"
    ),
    "approved": N_(
        "another change for %(target)s (%(id)s) was approved and has not run yet; decide or wait for it first"
    ),
    "running": N_("another change for %(target)s (%(id)s) is running; decide or wait for it first"),
}
"""``target_busy``'s sentence by why the other proposal holds the room (`one_change.Busy.why`)."""


async def submit(desk: Desk, submit: SubmitProposal, peer: PeerCred) -> ProposalAccepted | ProposalExists:
    """Store a proposal the executor prepared; see the module doc.

    Raises:
        IntakeRefused: the first refusal, with the request's tool and author for its audit row.
    """
    detail = {"tool": visible(submit.tool, 80), "proposed_by": visible(submit.proposed_by, 40)}
    async with desk.submitting:
        try:
            checked = check_submission(
                submit,
                policy=desk.policy,
                tool_policy=desk.tool_policy,
                fence_configured=desk.settings.fence_configured,
            )
            existing = await _rooms_free(desk, checked, submit, peer)
            if existing is not None:
                return existing
            async with desk.db:
                counts = await read_counts(
                    desk.conn, tool=checked.tool, targets=checked.targets, limits=desk.policy.limits
                )
            check_limits(counts, desk.policy.limits, tool=checked.tool)
            proposal_id = approvals.new_proposal_id()
            prepare = Prepare(
                proposal_id=proposal_id, tool=checked.tool, arguments=checked.arguments, reason=submit.reason
            )
            prepared = await desk.relay(prepare)
            record = check_prepared(prepared, proposal_id=proposal_id, checked=checked, reason=submit.reason)
        except FleetwatchError as exc:
            raise IntakeRefused(exc.code, exc.message, detail=detail) from exc
        async with desk.db:
            row = await approvals.insert_proposal(
                desk.conn,
                record=record,
                record_bytes=prepared.record,
                seal=prepared.seal,
                fingerprint_hash=prepared.fingerprint_hash,
                proposed_by=submit.proposed_by,
                turn_id=submit.turn_id,
                ttl_seconds=desk.policy.limits.proposal_ttl_seconds,
                target_names={k: visible(v, 200) for k, v in prepared.target_names.items()},
                names={visible(k, 200): visible(v, 200) for k, v in prepared.names.items()},
            )
    assert row.expires_at is not None
    return ProposalAccepted(proposal_id=row.id, expires_at=row.expires_at)


async def _rooms_free(
    desk: Desk, checked: CheckedProposal, submit: SubmitProposal, peer: PeerCred
) -> ProposalExists | None:
    """What the store says about the new proposal's rooms (`one_change`): the identical
    pending proposal (the answer), or None when nothing is in the way.

    Raises:
        IntakeRefused: ``target_busy``; ``target_unverified`` (after a fresh read that did
            not verify the last change, or could not be made).
    """
    async with desk.db:
        state = await one_change.read_room_state(
            desk.conn, tool=checked.tool, arguments=checked.arguments, targets=checked.targets
        )
    found = one_change.judge(state)
    if isinstance(found, one_change.Identical):
        async with desk.db:
            await append_audit(
                desk.conn,
                actor=desk.actor(peer, submit.proposed_by),
                kind="proposal_repeated",
                proposal_id=found.proposal_id,
                detail={"tool": checked.tool, "turn_id": submit.turn_id},
            )
        return ProposalExists(proposal_id=found.proposal_id, status=found.status, expires_at=found.expires_at)
    if isinstance(found, one_change.Busy):
        raise IntakeRefused.words(
            Code.TARGET_BUSY,
            BUSY.get(found.why, BUSY["running"]),
            target=visible(found.target, 40),
            id=visible(found.proposal_id, 40),
        )
    for change in found or ():
        verdict = await _recheck(desk, change.proposal_id)
        if verdict is None or verdict.verification != "verified":
            seen = (
                "could not be read again" if verdict is None else f"is {verdict.verification} on a fresh read"
            )
            raise IntakeRefused(
                Code.TARGET_UNVERIFIED,
                f"the last change on {change.target} ({change.proposal_id}) ended {change.outcome} and {seen}; "
                f"check the room, then acknowledge it (fleetwatch acknowledge {change.proposal_id})",
            )
    return None


async def _recheck(desk: Desk, proposal_id: str) -> Rechecked | None:
    """The executor's fresh read of a change's rooms (it records the verdict), or None
    when it could not be made (the executor down or refusing; logged with its code)."""
    try:
        return await desk.executor.call(Recheck(proposal_id=proposal_id))
    except CallError as exc:
        logger.warning("recheck of %s not made (%s)", proposal_id, exc.code)
        return None


async def state(desk: Desk, message: GetProposalState, peer: PeerCred) -> ProposalState:
    """A proposal's recorded state. Raises `IntakeRefused` (``proposal_not_found``)."""
    async with desk.db:
        status = await approvals.proposal_state(desk.conn, message.proposal_id)
    if status is None:
        raise proposal_not_found(message.proposal_id)
    return admin.state_of(status)


async def expire_turn(desk: Desk, message: ExpireTurn, peer: PeerCred) -> Count:
    """Expire every pending proposal of a model turn that failed partway; how many."""
    async with desk.db:
        count = await approvals.expire_turn(desk.conn, message.turn_id, actor=desk.actor(peer))
    return Count(count=count)


async def history(desk: Desk, message: ListProposalHistory, peer: PeerCred) -> ProposalHistory:
    """Proposals made since a time, with their outcomes, and the page's address (the
    watch's notices and history; read-only)."""
    async with desk.db:
        items, more = await approvals.proposal_history(desk.conn, message.since, MAX_PROPOSAL_HISTORY)
        now = await db_now(desk.conn)
    return ProposalHistory(
        items=tuple(admin.event_of(i) for i in items), read_at=now, page_url=desk.page_url, more=more
    )


JOBS: Jobs = {
    SubmitProposal: submit,
    GetProposalState: state,
    ExpireTurn: expire_turn,
    ListProposalHistory: history,
}
