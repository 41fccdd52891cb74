"""Execute: run one consumed approval's proposal once, against a world re-checked an instant
before, or not at all.

Execute carries what the person approved: the approval ID, the proposal ID, the page's card
hash and the executor's own facts hash from the Inspect behind the card. The proposal that runs
is the one Execute names, never the one the approval row names.

The order, each refusal a stable code and one ``refusal`` audit row:

1. the approval exists and names the same proposal, card hash and facts hash as Execute
   (``approval_mismatch``: the row was changed in the store), and the proposal's seal verifies
   (the row agrees with the sealed record) -- refused *before* the claim: the approval is
   ended and the proposal becomes ``not_run``; nothing can run it later;
2. the claim (`services.executor.executions.claim_approval`): the same agreement, in the same statement;
   consumed, its window still open at the claim (database clock), never claimed or ended; for a
   tool whose rule (the executor's own policy, loaded now) asks two people, the first approval of
   another uid for the same card, claimed with it (``approvals_insufficient``); it inserts the ``executions``
   row (``running``). Its refusals write their own row.

   From here a refusal is recorded as the execution's outcome ``refused`` (with the code) and
   the proposal becomes ``not_run``; the approval stays claimed, so it can never run:

3. the policy still proposes the tool at this schema version (autonomy ``propose``), the
   arguments still valid; 4. the fence is set; 5. the kill switch is off; 6. the sandbox
   sign-in; a fresh device list (a failed read fails closed); team ID; membership; allowlist;
   channel; 7. the ``stream_id`` on the sandbox team's list; 8. recorder status and events,
   read last; the fingerprint; the ``event_id`` current or next; the disruptive rule; 9. the
   binding facts (`services.executor.facts`) built from these reads hash to what the card
   showed (``card_facts_changed``, naming what changed); 10. the server's tool list, listed
   afresh on the same session (sent beside the reads of step 8, judged here, after their
   checks: `services.executor.world.Beside`), still holds the tool's reviewed definition
   (``tool_changed``, naming what differs: a tool list can change under a running session).

Then the write tool is called **once**, straight after the last read (`WriteClient`), and the
outcome (ok | error | unknown) recorded; a write Epiphan refused for the team's plan is
recorded as ``refused`` with ``plan_required`` (nothing ran; the proposal becomes ``not_run``)
and is not verified. Then an independent verification read (`services.executor.verify`), kept
apart from the outcome; when it does not show the change yet, one more read after
``FLEETWATCH_VERIFY_REREAD_SECONDS`` (Epiphan applies a control a moment after it answers), and
the verdict and its time are those of the read that decided
(`services.executor.recheck.verify_after_write`). An executor killed between the claim
and the outcome leaves ``running``; its next start records ``unknown`` (never retried).
"""

from __future__ import annotations

import logging
from typing import Any

from services.executor import ExecutorError
from services.executor.checks import (
    Observed,
    Refusal,
    approved_record,
    facts_refusal,
)
from services.executor.executions import claim_approval, finish_execution
from services.executor.inspection import world_facts
from services.executor.recheck import record_verdict, verify_after_write
from services.executor.runtime import Runtime, db_time
from services.executor.verify import Verdict
from services.executor.world import Beside, raise_refusal, read_and_check
from services.executor.write_client import WriteClient
from shared.binding import BoundRecord
from shared.errors import Code
from shared.store.approvals import EXECUTOR_ACTOR, end_unclaimed, get_approval, get_proposal
from shared.wire.executor import Execute, ExecutionReport

log = logging.getLogger(__name__)


async def execute(rt: Runtime, request: Execute) -> ExecutionReport:
    """Run the proposal `request` names, under the approval it names, once, or refuse; see the
    module doc.

    Returns an `ExecutionReport` for every outcome, refusals included.
    """
    async with rt.db:
        approval = await get_approval(rt.conn, request.approval_id)
        row = await get_proposal(rt.conn, request.proposal_id)
    record = approved_record(request, approval, row, rt.key)
    if isinstance(record, Refusal):
        return await _refuse_unclaimed(rt, request, row.id if row is not None else None, record)
    assert approval is not None
    try:
        _, tool_policy = await rt.policies()
    except ExecutorError as exc:
        return await _refuse_unclaimed(rt, request, record.proposal_id, Refusal(exc.code, exc.message))
    rule = tool_policy.propose.get(record.tool)
    async with rt.db:
        claim = await claim_approval(
            rt.conn,
            request.approval_id,
            proposal_id=request.proposal_id,
            card_hash=request.card_hash,
            facts_hash=request.facts_hash,
            approvers=rule.approvers if rule is not None else 1,
        )
    if not claim.ok or claim.execution_id is None:
        assert claim.code is not None
        return _report(
            None, record.proposal_id, "refused", code=claim.code, message=f"{claim.message} Nothing ran."
        )
    return await _run_claimed(rt, record, claim.execution_id, request.facts_hash, approval.facts)


async def _refuse_unclaimed(
    rt: Runtime, request: Execute, proposal_id: str | None, refusal: Refusal
) -> ExecutionReport:
    """Refused before the claim: the approval is ended and the proposal, if approved, becomes
    ``not_run`` (one ``refusal`` audit row); nothing can run it later."""
    async with rt.db:
        await end_unclaimed(
            rt.conn,
            approval_id=request.approval_id,
            proposal_id=request.proposal_id,
            code=refusal.code,
            message=refusal.message,
            actor=EXECUTOR_ACTOR,
            step="before_claim",
        )
    return _report(
        None, proposal_id or request.proposal_id, "refused", code=refusal.code, message=refusal.message
    )


def _report(
    execution_id: str | None,
    proposal_id: str,
    outcome: str,
    *,
    code: Code | None = None,
    message: str = "",
    detail: dict[str, str] | None = None,
    verdict: Verdict | None = None,
    verified_at: str | None = None,
) -> ExecutionReport:
    return ExecutionReport(
        execution_id=execution_id,
        proposal_id=proposal_id,
        outcome=outcome,
        refusal_code=str(code) if code is not None else None,
        message=message,
        detail=detail or {},
        verification=verdict.verification if verdict else None,
        verified_at=verified_at,
    )


async def _run_claimed(
    rt: Runtime,
    record: BoundRecord,
    execution_id: str,
    facts_hash: str,
    shown: dict[str, str] | None,
) -> ExecutionReport:
    """Everything after the claim; the execution row is finished on every path but a crash.
    `facts_hash` is what Execute carried; `shown` the facts the approval recorded (to name what
    changed)."""
    sent = False
    try:
        try:
            standing = await rt.standing(record)
            raise_refusal(standing.refusal)
            assert standing.proposed is not None
            async with rt.sandbox() as session:
                reader = rt.reader(session, standing.tool_policy)
                async with Beside(lambda: reader.definition_check(record.tool)) as tools:
                    world = await read_and_check(
                        reader, standing.proposed, rt.fence, record.targets, beside_last=tools
                    )
                    listed = world.listed
                    seen = Observed(
                        states=world.states, events=world.reads.events, devices=listed.devices, now=rt.clock()
                    )
                    raise_refusal(standing.state_refusal(record, seen))
                    raise_refusal(
                        facts_refusal(
                            world_facts(record, standing.tool_policy, listed, world.endpoints, world.reads),
                            facts_hash,
                            shown,
                        )
                    )
                    await tools.result()  # listed beside the last reads, judged after their checks
                wrote_at, sent = rt.clock(), True
                outcome = await WriteClient(reader.last_used).write_once(record.tool, record.arguments)
                if outcome.code is not None:  # Epiphan refused before acting (plan): nothing ran, a refusal
                    sent = False
                    raise ExecutorError(outcome.code, outcome.message)
                await _finish(
                    rt, execution_id, outcome.outcome, message=outcome.message, detail=outcome.detail
                )
                verdict, seen_at = await verify_after_write(
                    reader,
                    record,
                    wrote_at,
                    before=listed,
                    wait_seconds=rt.settings.verify_reread_seconds,
                    clock=rt.clock,
                )
                verified_at = db_time(seen_at)
        except ExecutorError as exc:
            if sent:
                raise
            await _finish(rt, execution_id, "refused", refusal_code=exc.code, message=exc.message)
            return _report(execution_id, record.proposal_id, "refused", code=exc.code, message=exc.message)
        await record_verdict(rt, execution_id, verdict, verified_at)
        return _report(
            execution_id,
            record.proposal_id,
            outcome.outcome,
            message=outcome.message,
            detail=outcome.detail,
            verdict=verdict,
            verified_at=verified_at,
        )
    except Exception:  # the boundary of one claimed execution: logged, then recorded, never retried
        log.exception("execution %s failed", execution_id)
        if sent:
            await _finish(
                rt,
                execution_id,
                "unknown",
                message="The executor failed after sending the write; outcome unknown.",
            )
        else:
            message = "The executor failed before the write; nothing ran."
            await _finish(rt, execution_id, "refused", refusal_code=Code.INTERNAL_ERROR, message=message)
        raise


async def _finish(rt: Runtime, execution_id: str, outcome: str, **recorded: Any) -> None:
    """`finish_execution` under ``rt.db``: `outcome` and what else it records (keywords)."""
    async with rt.db:
        await finish_execution(rt.conn, execution_id, outcome=outcome, **recorded)
