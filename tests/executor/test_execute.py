"""Execute against the real executor process, over the real socket, with the lab as Epiphan:
outcomes ok / error / unknown, the verification, exactly one write, restarts."""

from __future__ import annotations

import asyncio

import pytest

from shared.errors import Code
from shared.store.approvals import get_approval, proposal_state
from shared.wire.client import request
from shared.wire.executor import CAPABILITIES, Inspection
from shared.wire.protocol import Capabilities, ErrorReply, GetCapabilities
from tests.executor.harness import IDLE, RECORDING, SANDBOX_STREAM, Harness, add_event

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_recording_start_runs_once_ok_and_is_verified(harness: Harness) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}
    )
    report = await harness.execute(approval_id)
    assert (report.outcome, report.verification, report.refusal_code) == ("ok", "verified", None), report
    assert report.verified_at is not None and report.execution_id is not None
    assert [(w["tool"], w["arguments"]) for w in harness.lab.writes()] == [
        ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
    ]
    assert harness.lab.state.devices[IDLE].channel("1").recording
    state = await proposal_state(harness.conn, proposal_id)
    assert state is not None
    assert (state.status, state.outcome, state.verification) == ("executed", "ok", "verified")
    kinds = [row["kind"] for row in await harness.audit()]
    assert kinds[-3:] == ["execution_start", "outcome", "verification"]


async def test_a_stop_may_end_the_recording_it_targets(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "stop", "device_ids": [f"{RECORDING}-1"]}
    )
    report = await harness.execute(approval_id)
    assert (report.outcome, report.verification) == ("ok", "verified"), report
    assert not harness.lab.state.devices[RECORDING].channel("1").recording


async def test_a_per_device_error_map_is_the_error_outcome(harness: Harness) -> None:
    harness.lab.state.devices[IDLE].firmware = harness.lab.state.firmware_latest["Pearl-2"]
    _, approval_id = await harness.proposed_and_approved("batch_firmware_update", {"device_ids": [IDLE]})
    report = await harness.execute(approval_id)
    assert report.outcome == "error", report
    assert report.detail == {IDLE: "firmware is up to date"}
    assert len(harness.lab.writes()) == 1


async def test_an_error_result_from_epiphan_is_unknown_never_ok(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved("batch_reboot", {"device_ids": [IDLE]})
    harness.lab.set_fault("batch_reboot", "error", count=1)
    report = await harness.execute(approval_id)
    assert report.outcome == "unknown", report
    assert report.verification == "not_observed"
    assert harness.lab.writes() == []  # the lab applied nothing; only the call was made


async def test_a_write_refused_for_the_plan_is_refused_plan_required_and_nothing_ran(
    harness: Harness,
) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}
    )
    harness.lab.set_fault("*", "plan_required")  # reads keep working on a team without the plan
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", Code.PLAN_REQUIRED), report
    assert "Premium" in report.message and report.verification is None
    assert harness.lab.writes() == [] and not harness.lab.state.devices[IDLE].channel("1").recording
    state = await proposal_state(harness.conn, proposal_id)
    assert state is not None and (state.status, state.status_code) == ("not_run", "plan_required")
    last = (await harness.audit())[-1]
    assert (last["kind"], last["proposal_id"]) == ("refusal", proposal_id)
    assert "plan_required" in last["detail_json"]
    again = await harness.execute(approval_id)
    assert (again.outcome, again.refusal_code) == ("refused", Code.APPROVAL_ALREADY_USED)
    assert harness.lab.writes() == []


async def test_a_dropped_response_is_unknown_never_retried_and_visible(harness: Harness) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-2"]}
    )
    harness.lab.set_fault("batch_recording", "drop_response")
    report = await harness.execute(approval_id)
    assert report.outcome == "unknown", report
    assert report.verification == "verified"  # the write did happen; the outcome stays unknown
    assert len(harness.lab.writes()) == 1
    state = await proposal_state(harness.conn, proposal_id)
    assert state is not None and (state.status, state.outcome) == ("executed", "unknown")
    outcome_rows = [
        r for r in await harness.audit() if r["kind"] == "outcome" and r["proposal_id"] == proposal_id
    ]
    assert len(outcome_rows) == 1 and '"outcome":"unknown"' in outcome_rows[0]["detail_json"]
    again = await harness.execute(approval_id)
    assert (again.outcome, again.refusal_code) == ("refused", Code.APPROVAL_ALREADY_USED)
    assert len(harness.lab.writes()) == 1


async def test_an_approval_executed_twice_writes_once(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved("batch_reboot", {"device_ids": [IDLE]})
    first = await harness.execute(approval_id)
    second = await harness.execute(approval_id)
    assert first.outcome == "ok", first
    assert (second.outcome, second.refusal_code, second.execution_id) == (
        "refused",
        Code.APPROVAL_ALREADY_USED,
        None,
    )
    assert len(harness.lab.writes()) == 1
    assert first.verification == "verified"  # the device went offline


async def test_concurrent_executes_of_one_approval_write_once(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved(
        "start_stream_endpoint", {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
    )
    reports = await asyncio.gather(*(harness.execute(approval_id) for _ in range(5)))
    assert sorted(r.outcome for r in reports) == ["ok", "refused", "refused", "refused", "refused"]
    assert {r.refusal_code for r in reports if r.outcome == "refused"} == {Code.APPROVAL_ALREADY_USED}
    assert [w["tool"] for w in harness.lab.writes()] == ["start_stream_endpoint"]
    assert next(r for r in reports if r.outcome == "ok").verification == "verified"


async def test_a_firmware_update_runs_and_its_progress_is_not_observed_at_once(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved("batch_firmware_update", {"device_ids": [IDLE]})
    report = await harness.execute(approval_id)
    assert (report.outcome, report.verification) == ("ok", "not_observed"), report


async def test_confirming_the_current_event_is_verified(harness: Harness) -> None:
    add_event(harness.lab, "evt-one", IDLE, minutes=200)
    _, approval_id = await harness.proposed_and_approved(
        "confirm_cms_event_on_device", {"device_id": IDLE, "event_id": "evt-one"}
    )
    report = await harness.execute(approval_id)
    assert (report.outcome, report.verification) == ("ok", "verified"), report


async def test_an_executor_restart_invalidates_every_earlier_seal(harness: Harness) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved("batch_reboot", {"device_ids": [IDLE]})
    pending = await harness.propose("batch_reboot", {"device_ids": [IDLE]})
    await harness.restart()
    seq = await harness.audit_seq()
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", Code.SEAL_INVALID), report
    assert harness.lab.writes() == []
    approval = await get_approval(harness.conn, approval_id)
    assert approval is not None and not approval.claimed
    assert [r["kind"] for r in await harness.audit(seq)] == ["refusal"]
    inspection = await harness.inspect(proposal_id)
    assert isinstance(inspection, Inspection)
    assert (inspection.would_refuse, inspection.complete, inspection.targets) == (
        Code.SEAL_INVALID,
        False,
        (),
    )
    state = await proposal_state(harness.conn, pending)
    assert state is not None and state.status == "expired"


async def test_inspect_shows_fresh_facts_and_what_execute_would_refuse(harness: Harness) -> None:
    stream = await harness.propose(
        "start_stream_endpoint", {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "2"}
    )
    reboot = await harness.propose("batch_reboot", {"device_ids": [RECORDING]})
    facts = await harness.inspect(stream)
    assert isinstance(facts, Inspection), facts
    assert facts.complete and facts.would_refuse is None
    (target,) = facts.targets
    assert (target.name, target.model, target.online, target.recording) == (
        "Sandbox Pearl-2",
        "Pearl-2",
        True,
        False,
    )
    assert (target.channel_id, target.channel_name) == ("2", "Camera 2")
    assert facts.stream is not None
    assert (facts.stream.name, facts.stream.host) == ("Sandbox test stream", "test.example.net")
    busy = await harness.inspect(reboot)
    assert isinstance(busy, Inspection)
    assert busy.would_refuse == Code.TARGET_RECORDING and busy.would_refuse_message
    assert busy.event is not None and busy.event.title == "Sandbox rehearsal" and busy.event.start
    assert harness.lab.writes() == []
    missing = await harness.inspect("p-000000000000")
    assert isinstance(missing, ErrorReply) and missing.code == Code.PROPOSAL_NOT_FOUND


async def test_health_reports_the_sign_in_the_fence_and_the_kill_switch(harness: Harness) -> None:
    report = await harness.health()
    assert (report.sandbox_signed_in, report.fence_configured, report.kill_switch) == (True, True, False)
    harness.sign_out()
    assert not (await harness.health()).sandbox_signed_in


async def test_the_socket_serves_its_manifest(harness: Harness) -> None:
    reply = await request(harness.executor.socket, GetCapabilities(), Capabilities, timeout_seconds=10)
    assert reply == CAPABILITIES


async def test_a_firmware_update_approved_by_one_person_is_refused_and_nothing_runs(harness: Harness) -> None:
    proposal_id = await harness.propose("batch_firmware_update", {"device_ids": [IDLE]})
    approval_id = await harness.approve(proposal_id, people=1)
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", "approvals_insufficient"), report
    assert harness.lab.writes() == []
    state = await proposal_state(harness.conn, proposal_id)
    assert state is not None and (state.status, state.status_code) == ("not_run", "approvals_insufficient")


async def test_a_firmware_update_approved_by_two_uids_runs_once(harness: Harness) -> None:
    proposal_id = await harness.propose("batch_firmware_update", {"device_ids": [IDLE]})
    approval_id = await harness.approve(proposal_id)
    report = await harness.execute(approval_id)
    assert report.outcome == "ok", report
    assert len(harness.lab.writes()) == 1
    async with harness.conn.execute(
        "SELECT count(*) FROM first_approvals WHERE proposal_id = ? AND claimed = 1", (proposal_id,)
    ) as cursor:
        assert (await cursor.fetchone())[0] == 1
