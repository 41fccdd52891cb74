"""A row the executor appended cannot disappear unseen (issue 24, item 6).

A store writer watches the store file and, milliseconds after the executor commits a row of
the kind it waits for, drops the guard trigger, deletes that row and puts the trigger back.
The executor's own audit check (``CheckAudit``, what ``fleetwatch audit verify`` asks it) names
the deleted row: its anchor moved with the row before Execute was answered, and the next row
does not reuse the number. Each test has its own executor and store (the chain stays broken).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from services.lab.server import LabHandle
from shared.wire.client import request
from shared.wire.executor import AuditChecked, CheckAudit
from tests.executor.harness import IDLE, TIMEOUT, Harness
from tests.shared.store.tampering import deleting

pytestmark = pytest.mark.asyncio(loop_scope="module")

REBOOT = ("batch_reboot", {"device_ids": [IDLE]})


async def check_audit(harness: Harness) -> AuditChecked:
    reply = await request(harness.executor.socket, CheckAudit(), AuditChecked, timeout_seconds=TIMEOUT)
    assert isinstance(reply, AuditChecked), reply
    return reply


@pytest.mark.parametrize("kind", ["execution_start", "outcome", "verification", "refusal"])
async def test_a_row_the_executor_wrote_deleted_ms_after_its_commit_is_named(
    lab: LabHandle, tmp_path: Path, kind: str
) -> None:
    lab.reset()
    harness = await Harness.start(lab, tmp_path / "home")
    try:
        if kind == "refusal":
            approval_id = "a-000000000000"  # no such approval: the executor writes one refusal row
        else:
            _, approval_id = await harness.proposed_and_approved(*REBOOT)
        async with deleting(harness.settings.db, kind, after=await harness.audit_seq()) as deleter:
            await harness.execute(approval_id)
        assert deleter.deleted is not None, f"no {kind} row was written"
        print(f"{kind}: row {deleter.deleted} deleted {deleter.late_ms:.1f} ms after its at")
        checked = (await check_audit(harness)).check
        assert (checked.ok, checked.first_bad_seq) == (False, deleter.deleted), checked
        assert checked.reason and "missing" in checked.reason
        # The next row takes a new number: the gap stays.
        await harness.execute("a-000000000001")
        async with harness.conn.execute("SELECT 1 FROM audit WHERE seq = ?", (deleter.deleted,)) as cursor:
            assert await cursor.fetchone() is None
        again = (await check_audit(harness)).check
        assert (again.ok, again.first_bad_seq) == (False, deleter.deleted), again
        assert lab.writes() == [] or kind != "refusal"
    finally:
        await harness.close()


async def test_an_execution_with_no_approval_row_is_named_by_the_executors_check(
    lab: LabHandle, tmp_path: Path
) -> None:
    """Issue 24, item 11: what a compromised approval_web can do (an approval in the table, no
    person, no ``approval`` audit row, Execute sent) runs inside the executor's checks, and the
    executor's audit check names the execution."""
    lab.reset()
    harness = await Harness.start(lab, tmp_path / "home")
    try:
        proposal_id = await harness.propose(*REBOOT)
        approval_id = await harness.show(proposal_id)  # the row only: nobody pressed Approve
        await harness.conn.execute(
            "UPDATE approvals SET used = 1, used_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
            (approval_id,),
        )
        await harness.conn.execute("UPDATE proposals SET status = 'approved' WHERE id = ?", (proposal_id,))
        report = await harness.execute(approval_id)
        assert report.outcome == "ok", report  # the limit of the design: approval_web is the witness
        (start,) = [r for r in await harness.audit() if r["kind"] == "execution_start"]
        checked = (await check_audit(harness)).check
        assert (checked.ok, checked.first_bad_seq) == (False, start["seq"]), checked
        assert checked.reason and f"execution {report.execution_id}" in checked.reason
        assert f"no approval row of approval {approval_id}" in checked.reason
    finally:
        await harness.close()
