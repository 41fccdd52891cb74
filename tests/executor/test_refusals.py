"""The seed's refusal list against the real executor process and the lab: each refusal names a
stable code in words, writes one ``refusal`` audit row, and the lab records zero writes.

A refusal before the claim (no approval, an unconsumed, expired or reused approval, a seal that
does not verify) ends that approval (it can never be claimed) and, when its proposal was
approved, leaves the proposal ``not_run`` with the code; nothing else changes. A refusal after
the claim is recorded as the execution's outcome ``refused``, the proposal ``not_run``, and the
approval stays claimed, so it can never run.
"""

from __future__ import annotations

import pytest

from shared.errors import Code
from shared.store.approvals import execution_for_approval, get_approval, get_proposal, set_kill_switch
from shared.wire.executor import Prepared
from shared.wire.protocol import ErrorReply
from tests.executor.harness import (
    IDLE,
    NANO,
    NORMAL_DEVICE,
    RECORDING,
    SANDBOX_STREAM,
    Harness,
    add_event,
    edit,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

REBOOT = ("batch_reboot", {"device_ids": [IDLE]})
OTHER_UUID = "00000000-1111-4222-8333-444444444444"


async def refused_before_claim(harness: Harness, approval_id: str, code: Code) -> None:
    """Execute is refused with `code`: one audit row; the approval, unless already claimed, is
    ended with the code and its proposal, if it was approved, is ``not_run``; the store holds
    exactly what it held otherwise."""
    before, seq = await harness.rows(), await harness.audit_seq()
    approval = await get_approval(harness.conn, approval_id)
    proposal = await get_proposal(harness.conn, approval.proposal_id) if approval else None
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code, report.execution_id) == ("refused", code, None), report
    assert report.message
    assert harness.lab.writes() == []
    (row,) = await harness.audit(seq)
    assert row["kind"] == "refusal" and f'"code":"{code}"' in row["detail_json"]
    after = await harness.rows()
    if approval is not None and not approval.claimed:
        ended = await get_approval(harness.conn, approval_id)
        assert ended is not None and ended.ended_code is not None
        assert proposal is not None
        now = await get_proposal(harness.conn, proposal.id)
        assert now is not None
        if proposal.status == "approved":
            assert (now.status, now.status_code) == ("not_run", code)
        else:
            assert now.status == proposal.status
        for table, key in (("approvals", approval_id), ("proposals", proposal.id)):
            before[table] = [r for r in before[table] if r[0] != key]
            after[table] = [r for r in after[table] if r[0] != key]
    assert after == before


async def refused_after_claim(harness: Harness, approval_id: str, code: Code) -> None:
    """Execute is refused with `code` after claiming: the execution is ``refused``, the
    approval claimed, one ``refusal`` audit row (after the claim's), zero writes."""
    seq = await harness.audit_seq()
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", code), report
    assert report.message and report.execution_id is not None
    assert harness.lab.writes() == []
    execution = await execution_for_approval(harness.conn, approval_id)
    assert execution is not None and (execution.outcome, execution.refusal_code) == ("refused", code)
    approval = await get_approval(harness.conn, approval_id)
    assert approval is not None and approval.claimed
    rows = await harness.audit(seq)
    assert [r["kind"] for r in rows] == ["execution_start", "refusal"]
    assert f'"code":"{code}"' in rows[1]["detail_json"]
    again = await harness.execute(approval_id)
    assert (again.outcome, again.refusal_code) == ("refused", Code.APPROVAL_ALREADY_USED)
    assert harness.lab.writes() == []


async def prepare_refused(harness: Harness, tool: str, arguments: dict, code: Code) -> None:
    reply = await harness.prepare(tool, arguments)
    assert isinstance(reply, ErrorReply) and reply.code == code, reply
    assert reply.message
    assert harness.lab.writes() == []


# --- before the claim -----------------------------------------------------------------------


async def test_execute_without_an_approval_is_refused(harness: Harness) -> None:
    await refused_before_claim(harness, "a-000000000000", Code.APPROVAL_NOT_FOUND)


async def test_an_approval_nobody_consumed_is_refused_and_not_claimed(harness: Harness) -> None:
    approval_id = await harness.show(await harness.propose(*REBOOT))
    await refused_before_claim(harness, approval_id, Code.APPROVAL_NOT_CONSUMED)


async def test_an_expired_approval_is_refused(harness: Harness) -> None:
    approval_id = await harness.show(await harness.propose(*REBOOT), ttl_seconds=-1)
    await refused_before_claim(harness, approval_id, Code.APPROVAL_EXPIRED)


async def test_an_approval_consumed_after_its_expiry_in_the_store_is_refused(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    await harness.conn.execute("UPDATE approvals SET expires_at = used_at WHERE id = ?", (approval_id,))
    await refused_before_claim(harness, approval_id, Code.APPROVAL_EXPIRED)


async def test_a_reused_approval_is_refused_after_its_one_run(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    assert (await harness.execute(approval_id)).outcome == "ok"
    harness.lab.reset()
    await refused_before_claim(harness, approval_id, Code.APPROVAL_ALREADY_USED)


TAMPERING = {
    "tool": [
        ("bound_record", b'"tool":"batch_reboot"', b'"tool":"batch_firmware_update"'),
        ("tool", None, None),
    ],
    "arguments": [("bound_record", f'"device_ids":["{IDLE}"]'.encode(), f'"device_ids":["{NANO}"]'.encode())],
    "targets": [("bound_record", f'"targets":["{IDLE}"]'.encode(), f'"targets":["{RECORDING}"]'.encode())],
    "fingerprint": [("bound_record", b'"recording":false', b'"recording":true')],
    "reason": [("bound_record", b'"reason":"a test"', b'"reason":"approved by IT"')],
    "arguments column only": [("arguments_json", None, None)],
    "reason column only": [("reason", None, None)],
}


@pytest.mark.parametrize("what", list(TAMPERING))
async def test_a_proposal_edited_in_the_store_fails_its_seal(harness: Harness, what: str) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved(*REBOOT)
    async with harness.conn.execute("SELECT bound_record FROM proposals WHERE id = ?", (proposal_id,)) as cur:
        row = await cur.fetchone()
    assert row is not None
    record = bytes(row[0])
    for column, old, new in TAMPERING[what]:
        if column == "bound_record":
            assert old is not None and new is not None and old in record
            record = record.replace(old, new)
            await harness.conn.execute(
                "UPDATE proposals SET bound_record = ? WHERE id = ?", (record, proposal_id)
            )
        elif column == "tool":
            await harness.conn.execute(
                "UPDATE proposals SET tool = 'batch_firmware_update' WHERE id = ?", (proposal_id,)
            )
        elif column == "arguments_json":
            await harness.conn.execute(
                "UPDATE proposals SET arguments_json = ? WHERE id = ?",
                (f'{{"device_ids":["{NANO}"]}}', proposal_id),
            )
        else:
            await harness.conn.execute(
                "UPDATE proposals SET reason = 'approved by IT' WHERE id = ?", (proposal_id,)
            )
    await refused_before_claim(harness, approval_id, Code.SEAL_INVALID)


# --- after the claim: policy, fence, kill switch ----------------------------------------------


async def test_observe_mode_refuses_at_execute_and_at_prepare(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    edit(harness.policy_dir / "policy.yaml", "autonomy: propose", "autonomy: observe")
    await refused_after_claim(harness, approval_id, Code.OBSERVE_MODE)
    await prepare_refused(harness, *REBOOT, Code.OBSERVE_MODE)


async def test_a_stale_schema_version_is_refused(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    edit(
        harness.policy_dir / "tool_policy.yaml",
        "batch_reboot:\n    schema_version: 1",
        "batch_reboot:\n    schema_version: 2",
    )
    await refused_after_claim(harness, approval_id, Code.SCHEMA_VERSION_CHANGED)


async def test_a_tool_the_policy_no_longer_proposes_is_refused(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    path = harness.policy_dir / "tool_policy.yaml"
    text = path.read_text()
    start = text.index("  batch_reboot:\n    schema_version")
    end = text.index("  batch_firmware_update:\n    schema_version")
    path.write_text(text[:start] + text[end:])
    await refused_after_claim(harness, approval_id, Code.SCHEMA_NOT_REVIEWED)


async def test_the_kill_switch_refuses_a_consumed_approval(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    await set_kill_switch(harness.conn, True, actor="operator")
    await refused_after_claim(harness, approval_id, Code.KILL_SWITCH_ON)


async def test_no_sandbox_sign_in_refuses_at_execute_and_at_prepare(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.sign_out()
    await refused_after_claim(harness, approval_id, Code.NO_SIGN_IN)
    await prepare_refused(harness, *REBOOT, Code.NO_SIGN_IN)


# --- after the claim: the fresh reads ---------------------------------------------------------


async def test_an_unreadable_device_list_fails_closed(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.lab.set_fault("get_devices_in_my_team", "error", count=1)
    await refused_after_claim(harness, approval_id, Code.DEVICE_LIST_UNREADABLE)


async def test_an_unreadable_recorder_status_fails_closed(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.lab.set_fault("get_recorder_status_for_devices", "auth_401", count=1)
    await refused_after_claim(harness, approval_id, Code.STATE_READ_FAILED)


async def test_events_in_no_known_shape_fail_closed_where_the_read_side_shows_a_partial_view(
    harness: Harness,
) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.lab.set_fault("get_current_or_next_cms_events_for_devices", "schema_drift", count=1)
    await refused_after_claim(harness, approval_id, Code.STATE_READ_FAILED)


async def test_a_target_that_left_the_sandbox_list_is_refused(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.lab.state.teams["sandbox"].device_ids.remove(IDLE)
    harness.lab.state.devices[IDLE].team = "normal"
    await refused_after_claim(harness, approval_id, Code.TARGET_NOT_IN_SANDBOX)


async def test_targets_outside_the_sandbox_list_or_off_the_allowlist_are_never_bound(
    harness: Harness,
) -> None:
    await prepare_refused(
        harness, "batch_reboot", {"device_ids": [NORMAL_DEVICE]}, Code.TARGET_NOT_IN_SANDBOX
    )
    await prepare_refused(harness, "batch_reboot", {"device_ids": [NANO]}, Code.TARGET_NOT_ALLOWLISTED)
    await prepare_refused(
        harness, "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-7"]}, Code.CHANNEL_NOT_FOUND
    )


async def test_a_change_an_ec20_cannot_do_is_refused_before_the_card_in_words(harness: Harness) -> None:
    harness.lab.state.devices[IDLE].model = "EC20"  # this sandbox room is an EC20 camera
    record = {"action": "start", "device_ids": [f"{IDLE}-1"]}
    await prepare_refused(harness, "batch_recording", record, Code.MODEL_NOT_CAPABLE)
    stream = {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
    await prepare_refused(harness, "start_stream_endpoint", stream, Code.MODEL_NOT_CAPABLE)
    reply = await harness.prepare("batch_recording", record)
    assert isinstance(reply, ErrorReply) and "Sandbox Pearl-2" in reply.message and "camera" in reply.message
    assert isinstance(await harness.prepare(*REBOOT), Prepared)  # an EC20 can be rebooted


async def test_a_reboot_or_firmware_update_of_an_offline_room_is_refused_before_the_card(
    harness: Harness,
) -> None:
    harness.lab.state.devices[IDLE].online = False
    await prepare_refused(harness, *REBOOT, Code.TARGET_OFFLINE)
    await prepare_refused(harness, "batch_firmware_update", {"device_ids": [IDLE]}, Code.TARGET_OFFLINE)
    reply = await harness.prepare(*REBOOT)
    assert isinstance(reply, ErrorReply) and "offline" in reply.message


async def test_a_room_that_went_offline_after_approval_is_refused_at_execute(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.lab.state.devices[IDLE].online = False
    await refused_after_claim(harness, approval_id, Code.TARGET_OFFLINE)


async def test_a_changed_fingerprint_is_refused(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    harness.lab.state.devices[IDLE].channels[0].recording = True  # someone pressed record
    await refused_after_claim(harness, approval_id, Code.FINGERPRINT_CHANGED)


async def test_a_disruptive_change_while_recording_is_refused(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved("batch_reboot", {"device_ids": [RECORDING]})
    await refused_after_claim(harness, approval_id, Code.TARGET_RECORDING)


async def test_a_firmware_update_within_120_minutes_of_an_event_is_refused(harness: Harness) -> None:
    add_event(harness.lab, "evt-soon", IDLE, minutes=90)
    _, approval_id = await harness.proposed_and_approved("batch_firmware_update", {"device_ids": [IDLE]})
    await refused_after_claim(harness, approval_id, Code.TARGET_IN_EVENT_WINDOW)


async def test_a_reboot_during_an_event_is_refused(harness: Harness) -> None:
    add_event(harness.lab, "evt-now", IDLE, minutes=-10)
    _, approval_id = await harness.proposed_and_approved(*REBOOT)
    await refused_after_claim(harness, approval_id, Code.TARGET_IN_EVENT_WINDOW)


async def test_stopping_a_recording_is_still_refused_inside_the_event_window(harness: Harness) -> None:
    harness.lab.state.events["sbx4f2a9c1:1791484740"].start = harness.lab.now  # the rehearsal starts now
    _, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "stop", "device_ids": [f"{RECORDING}-1"]}
    )
    await refused_after_claim(harness, approval_id, Code.TARGET_IN_EVENT_WINDOW)


async def test_a_stream_id_not_on_the_sandbox_list_is_refused(harness: Harness) -> None:
    arguments = {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
    _, approval_id = await harness.proposed_and_approved("start_stream_endpoint", arguments)
    del harness.lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM]
    await refused_after_claim(harness, approval_id, Code.STREAM_NOT_FOUND)
    await prepare_refused(
        harness, "start_stream_endpoint", {**arguments, "stream_id": OTHER_UUID}, Code.STREAM_NOT_FOUND
    )


async def test_an_event_id_that_is_not_the_current_or_next_is_refused(harness: Harness) -> None:
    first = add_event(harness.lab, "evt-first", IDLE, minutes=200)
    _, approval_id = await harness.proposed_and_approved(
        "confirm_cms_event_on_device", {"device_id": IDLE, "event_id": "evt-first"}
    )
    del harness.lab.state.events["evt-first"]  # the CMS re-created it under another ID, same time
    add_event(harness.lab, "evt-again", IDLE, minutes=200).start = first.start
    await refused_after_claim(harness, approval_id, Code.EVENT_NOT_CURRENT)
    await prepare_refused(
        harness,
        "confirm_cms_event_on_device",
        {"device_id": IDLE, "event_id": "evt-first"},
        Code.EVENT_NOT_CURRENT,
    )


async def test_a_prepared_record_binds_the_fresh_fingerprint(harness: Harness) -> None:
    prepared = await harness.prepare("batch_reboot", {"device_ids": [RECORDING]})
    assert isinstance(prepared, Prepared)
    assert b'"recording":true' in prepared.record and b'"online":true' in prepared.record
