"""Execute: run one consumed approval's proposal once, against a world re-checked an instant
before, or not at all.

The order (issue 3, Build 1), each refusal a stable code and one ``refusal`` audit row:

1. the approval exists, and its proposal's seal verifies (and the row agrees with the sealed
   record) -- refused *before* the claim: nothing is claimed, nothing changes;
2. the claim (`shared.approvals.claim_approval`): consumed, unexpired at consumption, never
   claimed; it inserts the ``executions`` row (``running``). Its refusals write their own row.

   From here a refusal is recorded as the execution's outcome ``refused`` (with the code); the
   approval stays claimed, so the proposal can never run:

3. the policy still proposes the tool at this schema version (autonomy ``propose``), the
   arguments still valid; 4. the fence is set; 5. the kill switch is off; 6. the sandbox
   sign-in; a fresh device list (a failed read fails closed); team ID; membership; allowlist;
   channel; 7. the ``stream_id`` on the sandbox team's list; 8. recorder status and events,
   read last; the fingerprint; the ``event_id`` current or next; the disruptive rule.

Then the write tool is called **once**, straight after the last read (`WriteClient`), and the
outcome (ok | error | unknown) recorded. Then an independent verification read
(`services.executor.verify`), kept apart from the outcome. An executor killed between the claim
and the outcome leaves ``running``; its next start records ``unknown`` (never retried).
"""

from __future__ import annotations

import logging
from datetime import datetime

from services.executor import ExecutorError
from services.executor.checks import DeviceList, Observed, Refusal, sealed_proposal, state_refusal
from services.executor.runtime import Runtime, db_time
from services.executor.verify import Verdict, judge
from services.executor.world import SandboxReader, raise_refusal, read_and_check
from services.executor.write_client import WriteClient
from shared.approvals import (
    EXECUTOR_ACTOR,
    audit_refusal,
    claim_approval,
    finish_execution,
    get_approval,
    get_proposal,
    record_verification,
)
from shared.binding import BoundRecord
from shared.errors import Code
from shared.messages import ExecutionReport

log = logging.getLogger(__name__)


async def execute(rt: Runtime, approval_id: str) -> ExecutionReport:
    """Run the proposal approval `approval_id` approves, once, or refuse; see the module doc.

    Returns an `ExecutionReport` for every outcome, refusals included.
    """
    async with rt.db:
        approval = await get_approval(rt.conn, approval_id)
        row = await get_proposal(rt.conn, approval.proposal_id) if approval is not None else None
    if approval is None or row is None:
        refusal = Refusal(Code.APPROVAL_NOT_FOUND, f"No approval {approval_id}: nothing ran.")
        return await _refuse_unclaimed(rt, approval_id, None, refusal)
    record = sealed_proposal(row, rt.key)
    if isinstance(record, Refusal):
        return await _refuse_unclaimed(rt, approval_id, row.id, record)
    async with rt.db:
        claim = await claim_approval(rt.conn, approval_id)
    if not claim.ok or claim.execution_id is None:
        assert claim.code is not None
        return _report(None, row.id, "refused", code=claim.code, message=f"{claim.message} Nothing ran.")
    return await _run_claimed(rt, record, claim.execution_id)


async def _refuse_unclaimed(
    rt: Runtime, approval_id: str, proposal_id: str | None, refusal: Refusal
) -> ExecutionReport:
    async with rt.db:
        await audit_refusal(
            rt.conn,
            actor=EXECUTOR_ACTOR,
            operation="execute",
            code=refusal.code,
            message=refusal.message,
            proposal_id=proposal_id,
            detail={"approval_id": approval_id, "step": "before_claim"},
        )
    return _report(None, proposal_id or "", "refused", code=refusal.code, message=refusal.message)


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


async def _run_claimed(rt: Runtime, record: BoundRecord, execution_id: str) -> ExecutionReport:
    """Everything after the claim; the execution row is finished on every path but a crash."""
    sent = False
    try:
        try:
            standing = await rt.standing(record)
            raise_refusal(standing.refusal)
            assert standing.proposed is not None
            async with await rt.sandbox() as connection:
                reader = rt.reader(connection, standing.tool_policy)
                listed, reads, states = await read_and_check(
                    reader, standing.proposed, rt.fence, record.targets
                )
                seen = Observed(states=states, events=reads.events, devices=listed.devices, now=rt.clock())
                raise_refusal(
                    state_refusal(
                        record,
                        standing.proposed,
                        tool_policy=standing.tool_policy,
                        lead_minutes=standing.policy.lead_minutes,
                        seen=seen,
                    )
                )
                wrote_at, sent = rt.clock(), True
                outcome = await WriteClient(connection).write_once(record.tool, record.arguments)
                async with rt.db:
                    await finish_execution(
                        rt.conn,
                        execution_id,
                        outcome=outcome.outcome,
                        message=outcome.message,
                        detail=outcome.detail,
                    )
                verdict = await _verify(reader, record, listed, wrote_at)
                verified_at = db_time(rt.clock())
        except ExecutorError as exc:
            if sent:
                raise
            async with rt.db:
                await finish_execution(
                    rt.conn, execution_id, outcome="refused", refusal_code=exc.code, message=exc.message
                )
            return _report(execution_id, record.proposal_id, "refused", code=exc.code, message=exc.message)
        async with rt.db:
            await record_verification(
                rt.conn,
                execution_id,
                verification=verdict.verification,
                detail=verdict.detail,
                observed_at=verified_at,
            )
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
        async with rt.db:
            if sent:
                message = "The executor failed after sending the write; outcome unknown."
                await finish_execution(rt.conn, execution_id, outcome="unknown", message=message)
            else:
                message = "The executor failed before the write; nothing ran."
                await finish_execution(
                    rt.conn,
                    execution_id,
                    outcome="refused",
                    refusal_code=Code.INTERNAL_ERROR,
                    message=message,
                )
        raise


async def _verify(
    reader: SandboxReader, record: BoundRecord, before: DeviceList, wrote_at: datetime
) -> Verdict:
    """The independent read after the write; a failed read is ``not_observed``."""
    try:
        after = await reader.device_list()
        reads = await reader.targets(record.targets, with_system=True)
    except ExecutorError as exc:
        return Verdict("not_observed", f"the verification read failed ({exc.code})")
    return judge(
        record.tool,
        record.arguments,
        record.targets,
        before=before,
        after=after,
        reads=reads,
        wrote_at=wrote_at,
    )
