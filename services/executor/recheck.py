"""Recheck: a fresh read that judges again what a change should have left behind; and
`verify_after_write`, the verification straight after a write (one read, and one more after a
bounded wait when the first does not show the change yet).

A change that ended ``unknown`` (the write may or may not have reached Epiphan) or ran without
being verified holds its rooms: approval_web queues no new proposal for them until a fresh read
verifies it or an operator acknowledges it (`services.approval_web.one_change`). This is that
fresh read: the sandbox team's device list and the targets' recorder status, events and system
status, judged by the same rule as the verification straight after a write
(`services.executor.verify.judge`), with the execution's start as the write time. The verdict is
recorded on the execution (`services.executor.executions.record_verification`, audit
``verification`` with ``recheck: true``); the outcome never changes. Nothing is written to Epiphan.

What is judged comes from the stored bound record (tool, arguments, targets). Its seal is not
checked: a restarted executor has a new key, and a recheck decides no write; it can only let
the intake queue a proposal that a person still approves on the page and the executor still
checks in full at Execute.

Refusals (`ErrorReply`): ``proposal_not_found`` (no such proposal, or it never ran); no
sandbox sign-in (``no_sign_in``); ``policy_invalid``. A read that fails is the verdict
``not_observed``, recorded like any other (the change stays unsettled).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from services.executor import ExecutorError
from services.executor.checks import DeviceList
from services.executor.executions import record_verification
from services.executor.runtime import Runtime, db_time
from services.executor.verify import Verdict, judge
from services.executor.world import SandboxReader
from shared.binding import BoundRecord, record_from_bytes
from shared.errors import Code
from shared.store.approvals import execution_for_proposal, get_proposal
from shared.store.db import parse_db_text
from shared.wire.executor import Recheck, Rechecked

STREAM_TOOLS = frozenset({"start_stream_endpoint", "stop_stream_endpoint"})
"""Tools whose verification also reads the stream destinations (``CurrentlyStreaming``)."""
SLOW_TOOLS = frozenset({"batch_firmware_update"})
"""Tools whose change takes minutes: their verification reads once (no second read)."""


async def fresh_verdict(
    reader: SandboxReader, record: BoundRecord, wrote_at: datetime, *, before: DeviceList | None = None
) -> Verdict:
    """Read the record's targets afresh (device list, recorder status, events, system status,
    and the stream destinations for a stream tool) and judge its postcondition
    (`services.executor.verify.judge`); a failed read is ``not_observed``. `before` is the
    device list read before the write (None: unknown, the fresh list stands in: a firmware
    change is then seen only as the device going offline)."""
    try:
        after = await reader.device_list()
        endpoints = await reader.stream_endpoints() if record.tool in STREAM_TOOLS else None
        reads = await reader.targets(record.targets, with_system=True)
    except ExecutorError as exc:
        return Verdict("not_observed", f"the verification read failed ({exc.code})", read_failed=True)
    return judge(
        record.tool,
        record.arguments,
        record.targets,
        before=before or after,
        after=after,
        reads=reads,
        wrote_at=wrote_at,
        endpoints=endpoints,
    )


async def verify_after_write(
    reader: SandboxReader,
    record: BoundRecord,
    wrote_at: datetime,
    *,
    before: DeviceList,
    wait_seconds: float,
    clock: Callable[[], datetime],
) -> tuple[Verdict, datetime]:
    """The verification straight after a write: a fresh read (`fresh_verdict`); when it was read
    and does not show the change yet, **one** more read after `wait_seconds` (Epiphan answers a
    control before the Pearl applies it), never a loop. A read that failed is not repeated (the
    verification stays ``not_observed``, docs/reliability.md), and a firmware update is read
    once: it takes minutes, and is ``not_observed`` until a later recheck. Returns the verdict, its detail
    saying which read decided and how long after the write, and when that read was made (UTC,
    `clock`)."""
    first = await fresh_verdict(reader, record, wrote_at, before=before)
    seen_at = clock()
    if first.verification == "verified" or first.read_failed or record.tool in SLOW_TOOLS:
        return _when(first, "first read", seen_at, wrote_at), seen_at
    await asyncio.sleep(wait_seconds)  # Epiphan applies a control a moment after it answers
    second = await fresh_verdict(reader, record, wrote_at, before=before)
    seen_at = clock()
    decided = _when(second, f"second read, {wait_seconds:g} s after the first", seen_at, wrote_at)
    return Verdict(decided.verification, f"{decided.detail}; the first read saw: {first.detail}"), seen_at


def _when(verdict: Verdict, which: str, seen_at: datetime, wrote_at: datetime) -> Verdict:
    elapsed = max(0.0, (seen_at - wrote_at).total_seconds())
    detail = f"{verdict.detail} ({which}, {elapsed:.1f} s after the write)"
    return Verdict(verdict.verification, detail, verdict.read_failed)


async def record_verdict(
    rt: Runtime, execution_id: str, verdict: Verdict, observed_at: str, *, recheck: bool = False
) -> None:
    """`record_verification` of `verdict` under ``rt.db`` (`recheck`: a later fresh read)."""
    async with rt.db:
        await record_verification(
            rt.conn,
            execution_id,
            verification=verdict.verification,
            detail=verdict.detail,
            observed_at=observed_at,
            recheck=recheck,
        )


async def recheck(rt: Runtime, request: Recheck) -> Rechecked:
    """Judge the change `request` names on a fresh read; see the module doc.

    Raises:
        ExecutorError: a refusal code of `shared.wire.executor.RECHECK_CODES`.
    """
    async with rt.db:
        row = await get_proposal(rt.conn, request.proposal_id)
        execution = await execution_for_proposal(rt.conn, request.proposal_id)
    if row is None or execution is None or execution.outcome in ("refused", "running"):
        raise ExecutorError(Code.PROPOSAL_NOT_FOUND, "no change of that proposal ran; nothing to read again")
    record = record_from_bytes(row.bound_record)
    _policy, tool_policy = await rt.policies()
    async with rt.sandbox() as session:
        verdict = await fresh_verdict(
            rt.reader(session, tool_policy), record, parse_db_text(execution.started_at)
        )
    observed_at = db_time(rt.clock())
    await record_verdict(rt, execution.id, verdict, observed_at, recheck=True)
    return Rechecked(
        proposal_id=request.proposal_id,
        verification=verdict.verification,
        verified_at=observed_at,
        detail=verdict.detail,
    )
