"""The approval's window is checked at the claim, on the database clock (issue 24, item 5).

An approval consumed in time but claimed after its window (the executor frozen with SIGSTOP
while the Execute frame waits in its socket) is refused ``approval_expired`` by the claim
itself: nothing is written at the lab, the proposal ends ``not_run`` with the code, and one
``refusal`` audit row says why.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from shared.errors import Code
from shared.store.approvals import execution_for_approval, get_approval, get_proposal
from shared.store.db import db_now
from tests.executor.harness import IDLE, TIMEOUT, Harness
from tests.support import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

REBOOT = ("batch_reboot", {"device_ids": [IDLE]})
WINDOW_SECONDS = 2
"""The card's window of these tests (the page's approval ttl, here short)."""


async def window_closed(harness: Harness, approval_id: str) -> None:
    """Until the approval's window has closed on the database clock (bounded)."""

    async def closed() -> bool:
        approval = await get_approval(harness.conn, approval_id)
        assert approval is not None
        return approval.expires_at <= await db_now(harness.conn)

    await wait_until(closed, what="the approval's window closed", seconds=WINDOW_SECONDS + TIMEOUT)


async def test_a_frozen_executor_resumed_after_the_window_claims_nothing(harness: Harness) -> None:
    proposal_id = await harness.propose(*REBOOT)
    approval_id = await harness.approve(proposal_id, ttl_seconds=WINDOW_SECONDS)
    seq = await harness.audit_seq()
    pid = harness.executor.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        sent = asyncio.ensure_future(harness.execute(approval_id))  # the frame waits unread
        await window_closed(harness, approval_id)
    finally:
        os.kill(pid, signal.SIGCONT)
    report = await asyncio.wait_for(sent, TIMEOUT)
    assert (report.outcome, report.refusal_code, report.execution_id) == (
        "refused",
        Code.APPROVAL_EXPIRED,
        None,
    ), report
    assert harness.lab.writes() == []
    assert await execution_for_approval(harness.conn, approval_id) is None
    proposal = await get_proposal(harness.conn, proposal_id)
    assert proposal is not None and (proposal.status, proposal.status_code) == (
        "not_run",
        Code.APPROVAL_EXPIRED,
    )
    approval = await get_approval(harness.conn, approval_id)
    assert approval is not None and not approval.claimed and approval.ended_code == Code.APPROVAL_EXPIRED
    (row,) = await harness.audit(seq)
    assert row["kind"] == "refusal" and row["proposal_id"] == proposal_id
    assert '"code":"approval_expired"' in row["detail_json"] and '"not_run":true' in row["detail_json"]
    assert '"step":"claim"' in row["detail_json"]
    again = await harness.execute(approval_id)
    assert (again.outcome, again.refusal_code) == ("refused", Code.APPROVAL_ALREADY_USED)
    assert harness.lab.writes() == []
