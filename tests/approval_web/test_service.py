"""approval_web as a real process over the real approval.sock, beside a real executor process
and the campus lab: the intake's refusals, the limits, expiry, roles, the uid allowlist,
malformed frames and the admin operations. Every refusal: its code, one audit row, no other
change, no write in the lab."""

from __future__ import annotations

import asyncio
import os
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from shared.errors import Code
from shared.store.approvals import get_proposal, kill_switch
from shared.wire.approval import (
    OPERATIONS,
    Acknowledge,
    AuditReport,
    AuditRows,
    AuditTail,
    AuditVerify,
    Count,
    Deny,
    DenyAll,
    ExpireTurn,
    GetProposalState,
    GetStatus,
    LiftDenialPauses,
    ListPending,
    PausesLifted,
    PendingList,
    ProposalAccepted,
    ProposalDetail,
    ProposalState,
    SetKillSwitch,
    ShowProposal,
    Status,
    SubmitProposal,
    codes_of,
)
from shared.wire.client import request
from shared.wire.executor import (
    ExecutionReport,
    Health,
    HealthReport,
    ListWritable,
    WritableDevices,
)
from shared.wire.protocol import TRANSPORT_CODES, Capabilities, ErrorReply, GetCapabilities
from tests.approval_web.helpers import (
    CLASSROOM,
    SANDBOX_DEVICES,
    Backend,
    Stack,
    approve_and_execute,
    ask,
    audit,
    backend,
    error_code,
    reader,
    rows,
    stack,
)
from tests.support import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

A, B, C = SANDBOX_DEVICES
NORMAL_TEAM_DEVICE = "19012340104"
OTHER_UID = str(os.getuid() + 4242)
TURN = "t_" + "1" * 32


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("approval_web")) as running:
        yield running


def reboot(device: str = A, **fields: Any) -> SubmitProposal:
    fields.setdefault("reason", "the encoder froze")
    fields.setdefault("proposed_by", "assistant")
    return SubmitProposal(tool="batch_reboot", arguments={"device_ids": [device]}, **fields)


def submission(tool: str, arguments: Any) -> SubmitProposal:
    return SubmitProposal(tool=tool, arguments=arguments, reason="a reason", proposed_by="assistant")


async def accept(s: Stack, message: SubmitProposal) -> ProposalAccepted:
    reply = await ask(s.settings, message, ProposalAccepted)
    assert isinstance(reply, ProposalAccepted), reply
    return reply


async def refused_cleanly(
    s: Stack, message: Any, code: Code, reply_type: Any = ProposalAccepted
) -> dict[str, Any]:
    """The request is refused with `code`, declared in its operation's manifest entry; the
    approval tables are unchanged, exactly one audit row (a refusal naming the code) was added,
    and the lab saw no write. Returns that audit row."""
    before_rows, seen = await rows(s.settings), len(await audit(s.settings))
    reply = await ask(s.settings, message, reply_type)
    assert isinstance(reply, ErrorReply) and reply.code == code, reply
    op = msgspec.msgpack.decode(msgspec.msgpack.encode(message))["op"]
    assert code in codes_of(op) | TRANSPORT_CODES
    assert await rows(s.settings) == before_rows
    added = (await audit(s.settings))[seen:]
    assert [(a["kind"], a["detail"]["code"]) for a in added] == [("refusal", code)]
    assert s.lab.writes() == []
    return added[0]


# --- SubmitProposal ---------------------------------------------------------------------------------


async def test_a_proposal_is_prepared_by_the_executor_stored_pending_and_answered_with_its_id(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        seen = len(await audit(s.settings))
        reply = await accept(s, reboot(turn_id=TURN))
        state = await ask(s.settings, GetProposalState(proposal_id=reply.proposal_id), ProposalState)
        assert (state.status, state.tool, state.outcome) == ("pending", "batch_reboot", None)
        detail = await ask(s.settings, ShowProposal(proposal_id=reply.proposal_id), ProposalDetail)
        assert detail.arguments == {"device_ids": [A]} and detail.summary.targets == (A,)
        assert detail.summary.proposed_by == "assistant" and detail.reason == "the encoder froze"
        assert 0 < detail.expires_in_seconds <= 900 and detail.age_seconds >= 0
        assert detail.summary.expires_at == reply.expires_at and len(detail.fingerprint_hash) == 64
        async with reader(s.settings) as conn:
            row = await get_proposal(conn, reply.proposal_id)
        assert row is not None and row.turn_id == TURN
        assert row.fingerprint == {A: {"online": True, "recording": False, "next_event_start": None}}
        added = [(a["kind"], a["proposal_id"]) for a in (await audit(s.settings))[seen:]]
        assert added == [("proposal", reply.proposal_id)]
        assert s.lab.writes() == []


async def test_every_policy_refusal_changes_nothing_but_one_audit_row(shared: Backend) -> None:
    cases = [
        (submission("get_device_info", {}), Code.NOT_PROPOSABLE),
        (submission("update_cms_event", {}), Code.SCHEMA_NOT_REVIEWED),
        (submission("batch_reboot", {"device_ids": ["29088800\u202e001"]}), Code.HIDDEN_CHARACTER),
        (submission("batch_reboot", {"device_ids": [A], "x": 0.5}), Code.NOT_CANONICALIZABLE),
        (submission("batch_reboot", {"device_ids": [A, B]}), Code.TOO_MANY_TARGETS),
        (submission("batch_reboot", {"device_ids": "all"}), Code.INVALID_ARGUMENTS),
        (reboot(proposed_by="somebody"), Code.INVALID_MESSAGE),
    ]
    async with stack(shared) as s:
        for message, code in cases:
            row = await refused_cleanly(s, message, code)
            assert row["detail"]["operation"] == "submit_proposal"
        invalid = await refused_cleanly(
            s, submission("batch_reboot", {"device_ids": "all"}), Code.INVALID_ARGUMENTS
        )
        assert "$.device_ids" in invalid["detail"]["message"]


async def test_observe_mode_refuses_every_proposal(shared: Backend, tmp_path: Path) -> None:
    override = tmp_path / "observe.yaml"
    override.write_text("autonomy: observe\n")
    async with stack(shared, FLEETWATCH_POLICY_OVERRIDE=str(override)) as s:
        await refused_cleanly(s, reboot(), Code.OBSERVE_MODE)
        assert (await ask(s.settings, GetStatus(), Status)).autonomy == "observe"


async def test_without_a_fence_nothing_is_proposed(shared: Backend) -> None:
    async with stack(shared, FLEETWATCH_WRITE_DEVICE_IDS="", FLEETWATCH_WRITE_TEAM_ID="") as s:
        row = await refused_cleanly(s, reboot(), Code.FENCE_NOT_CONFIGURED)
        assert "FLEETWATCH_WRITE_DEVICE_IDS" in row["detail"]["message"]
        assert not (await ask(s.settings, GetStatus(), Status)).fence_configured


async def test_the_executors_refusals_pass_through_unchanged(shared: Backend) -> None:
    async with stack(shared) as s:
        row = await refused_cleanly(s, reboot(C), Code.TARGET_NOT_ALLOWLISTED)
        assert row["detail"]["tool"] == "batch_reboot"
        await refused_cleanly(s, reboot(NORMAL_TEAM_DEVICE), Code.TARGET_NOT_IN_SANDBOX)
        shared.settings.sandbox_token_file.unlink()
        await refused_cleanly(s, reboot(A), Code.NO_SIGN_IN)


async def test_a_change_the_room_cannot_take_is_refused_before_a_card_with_one_audit_row(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        s.lab.state.devices[A].online = False
        offline = await refused_cleanly(s, reboot(A), Code.TARGET_OFFLINE)
        assert "offline" in offline["detail"]["message"]
        s.lab.state.devices[A].online = True
        s.lab.state.devices[A].model = "EC20"  # a camera: it cannot record
        record = submission("batch_recording", {"action": "start", "device_ids": [f"{A}-1"]})
        camera = await refused_cleanly(s, record, Code.MODEL_NOT_CAPABLE)
        assert "camera" in camera["detail"]["message"]


async def test_a_tool_whose_definition_changed_at_epiphan_is_not_proposed(shared: Backend) -> None:
    async with stack(shared) as s:
        s.lab.lab.redefined.change({"tool": "batch_reboot", "description": "Reboot every device."})
        try:
            row = await refused_cleanly(s, reboot(), Code.TOOL_CHANGED)
        finally:
            s.lab.lab.redefined.clear()
        assert "batch_reboot: description" in row["detail"]["message"]
        assert s.lab.writes() == []


async def test_with_the_executor_down_a_proposal_is_refused_as_service_unavailable(
    shared: Backend, tmp_path: Path
) -> None:
    async with stack(shared, FLEETWATCH_RUNTIME_DIR=str(tmp_path / "run")) as s:
        await refused_cleanly(s, reboot(), Code.SERVICE_UNAVAILABLE)
        assert not (await ask(s.settings, GetStatus(), Status)).executor_up


async def test_with_the_executor_down_a_pause_holds_and_a_resume_is_refused_and_shown_paused(
    shared: Backend, tmp_path: Path
) -> None:
    async with stack(shared, FLEETWATCH_RUNTIME_DIR=str(tmp_path / "run")) as s:
        paused = await ask(s.settings, SetKillSwitch(on=True), Status)
        assert paused.kill_switch and not paused.executor_up
        seen = len(await audit(s.settings))
        assert await error_code(s.settings, SetKillSwitch(on=False), Status) == Code.SERVICE_UNAVAILABLE
        added = await audit(s.settings)
        assert [(a["kind"], a["detail"].get("on"), a["detail"].get("code")) for a in added[seen:]] == [
            ("kill_switch", False, None),
            ("refusal", None, Code.SERVICE_UNAVAILABLE),
        ]
        status = await ask(s.settings, GetStatus(), Status)
        assert status.kill_switch and not status.executor_up, "a resume the executor never sealed"
    async with stack(shared) as s:  # the executor answers again: the resume is sealed
        resumed = await ask(s.settings, SetKillSwitch(on=False), Status)
        assert not resumed.kill_switch and resumed.executor_up
        async with reader(s.settings) as conn:
            assert not await kill_switch(conn)


# --- limits --------------------------------------------------------------------------------------


async def test_three_pending_proposals_fill_the_queue_until_one_is_decided(shared: Backend) -> None:
    async with stack(shared) as s:
        first = await accept(s, reboot(A))
        await accept(s, reboot(B))
        await accept(s, submission("batch_recording", {"action": "start", "device_ids": [f"{CLASSROOM}-1"]}))
        row = await refused_cleanly(s, reboot(C), Code.QUEUE_FULL)
        assert "at most 3" in row["detail"]["message"]
        status = await ask(s.settings, GetStatus(), Status)
        assert (status.pending, status.max_pending) == (3, 3)
        await ask(s.settings, Deny(proposal_id=first.proposal_id), ProposalState)
        await accept(s, submission("batch_recording", {"action": "start", "device_ids": [f"{A}-2"]}))


async def test_the_hourly_cap_counts_expired_proposals_and_not_denied_ones(
    shared: Backend, tmp_path: Path
) -> None:
    override = tmp_path / "cap.yaml"
    override.write_text("limits: {per_hour: 2}\n")
    async with stack(shared, FLEETWATCH_POLICY_OVERRIDE=str(override)) as s:
        expired = await accept(s, reboot(A, turn_id=TURN))
        assert (await ask(s.settings, ExpireTurn(turn_id=TURN), Count)).count == 1
        denied = await accept(s, reboot(B))
        await refused_cleanly(s, reboot(A), Code.HOURLY_CAP_REACHED)
        await ask(s.settings, Deny(proposal_id=denied.proposal_id), ProposalState)
        await accept(s, reboot(A))
        await refused_cleanly(s, reboot(B), Code.HOURLY_CAP_REACHED)
        state = await ask(s.settings, GetProposalState(proposal_id=expired.proposal_id), ProposalState)
        assert state.status == "expired"
        status = await ask(s.settings, GetStatus(), Status)
        assert (status.last_hour, status.per_hour) == (2, 2)


async def test_three_denials_pause_that_tool_and_target_while_another_target_still_works(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        for _ in range(3):
            proposal = await accept(s, reboot(A))
            await ask(s.settings, Deny(proposal_id=proposal.proposal_id), ProposalState)
        row = await refused_cleanly(s, reboot(A), Code.DENIAL_PAUSE)
        assert A in row["detail"]["message"]
        await accept(s, reboot(B))
        await accept(s, submission("batch_firmware_update", {"device_ids": [A]}))
        status = await ask(s.settings, GetStatus(), Status)
        assert [(p.tool, p.target) for p in status.pauses] == [("batch_reboot", A)]


# --- expiry ---------------------------------------------------------------------------------------


async def test_an_unreviewed_proposal_expires_once_past_its_expiry(shared: Backend) -> None:
    async with stack(shared, "--expiry-seconds", "0.1") as s:
        proposal = await accept(s, reboot())
        async with reader(s.settings) as conn:
            await conn.execute(
                "UPDATE proposals SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 seconds') WHERE id = ?",
                (proposal.proposal_id,),
            )
        assert (await ask(s.settings, ListPending(), PendingList)).items == ()
        state = GetProposalState(proposal_id=proposal.proposal_id)

        async def expired() -> bool:
            return (await ask(s.settings, state, ProposalState)).status == "expired"

        await wait_until(expired, what="the proposal expired by approval_web's periodic task")
        last = (await audit(s.settings))[-1]
        assert (last["kind"], last["proposal_id"]) == ("expiry", proposal.proposal_id)
        assert last["detail"]["reason"] != "approval_web_start"


async def test_a_restart_expires_every_pending_proposal(shared: Backend) -> None:
    async with stack(shared) as s:
        proposal = await accept(s, reboot())
        await s.restart_approval_web()
        state = await ask(s.settings, GetProposalState(proposal_id=proposal.proposal_id), ProposalState)
        assert state.status == "expired"
        last = (await audit(s.settings))[-1]
        assert (last["kind"], last["detail"]["reason"]) == ("expiry", "approval_web_start")


# --- peers and roles ------------------------------------------------------------------------------------


async def test_a_uid_not_on_the_allowlist_is_refused_with_an_audit_row(shared: Backend) -> None:
    async with stack(shared, FLEETWATCH_APPROVAL_UIDS=OTHER_UID, FLEETWATCH_ASSISTANT_UIDS=OTHER_UID) as s:
        # The readiness probe that waited for the socket was refused too; its row is written
        # after the answer, so wait for it before counting (hard-bounded).
        async def probe_refused() -> bool:
            return any(a["detail"].get("code") == "peer_not_allowed" for a in await audit(s.settings))

        await wait_until(probe_refused, what="the probe's refusal row")
        seen = len(await audit(s.settings))
        assert await error_code(s.settings, reboot(), ProposalAccepted) == Code.PEER_NOT_ALLOWED

        async def added_rows() -> list | None:
            return (await audit(s.settings))[seen:] or None

        added = await wait_until(added_rows, what="the refusal row")
        assert [(a["kind"], a["detail"]["code"], a["detail"]["uid"]) for a in added] == [
            ("refusal", "peer_not_allowed", os.getuid())
        ]
        assert (await rows(s.settings))["proposals"] == [] and s.lab.writes() == []


async def test_the_assistants_uid_may_submit_but_not_administer(shared: Backend) -> None:
    async with stack(
        shared, FLEETWATCH_APPROVAL_UIDS=OTHER_UID, FLEETWATCH_ASSISTANT_UIDS=str(os.getuid())
    ) as s:
        proposal = await accept(s, reboot())
        await ask(s.settings, GetProposalState(proposal_id=proposal.proposal_id), ProposalState)
        writable = await ask(s.settings, ListWritable(), WritableDevices)
        assert [d.device_id for d in writable.devices] == [A, B, CLASSROOM]
        for message, reply_type in [
            (ListPending(), PendingList),
            (ShowProposal(proposal_id=proposal.proposal_id), ProposalDetail),
            (Deny(proposal_id=proposal.proposal_id), ProposalState),
            (DenyAll(), Count),
            (SetKillSwitch(on=True), Status),
            (GetStatus(), Status),
            (AuditTail(), AuditRows),
            (AuditVerify(), AuditReport),
            (LiftDenialPauses(), PausesLifted),
            (Acknowledge(proposal_id=proposal.proposal_id), ProposalState),
        ]:
            await refused_cleanly(s, message, Code.OPERATION_NOT_ALLOWED, reply_type)
        await refused_cleanly(s, reboot(B, proposed_by="operator"), Code.OPERATION_NOT_ALLOWED)


# --- frames ------------------------------------------------------------------------------------------


async def _exchange(
    reader_: asyncio.StreamReader, writer: asyncio.StreamWriter, frame: bytes
) -> dict[str, Any]:
    writer.write(frame)
    await writer.drain()
    (length,) = struct.unpack(">I", await reader_.readexactly(4))
    return msgspec.msgpack.decode(await reader_.readexactly(length))


async def test_malformed_frames_change_nothing_but_one_audit_row_each_and_the_connection_keeps_serving(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        await accept(s, reboot())
        before_rows, before_audit = await rows(s.settings), await audit(s.settings)
        reader_, writer = await asyncio.open_unix_connection(str(s.settings.approval_socket))
        answers = []
        for body in [
            b"\xc1garbage",
            msgspec.msgpack.encode({"op": "approve", "proposal_id": "p-1"}),
            msgspec.msgpack.encode({"op": "deny", "proposal_id": 7}),
            msgspec.msgpack.encode({"op": "submit_proposal", "tool": "batch_reboot"}),
            msgspec.msgpack.encode({"op": "list_pending"}),
        ]:
            answers.append(await _exchange(reader_, writer, struct.pack(">I", len(body)) + body))
        answers.append(await _exchange(reader_, writer, struct.pack(">I", 1 << 30)))
        assert await reader_.read() == b""
        writer.close()
        assert [a.get("code") for a in answers] == [
            "bad_frame",
            "unknown_message",
            "invalid_message",
            "invalid_message",
            None,
            "frame_too_large",
        ]
        assert len(answers[4]["items"]) == 1
        assert await rows(s.settings) == before_rows
        added = (await audit(s.settings))[len(before_audit) :]
        assert [(a["kind"], a["detail"]["code"], a["detail"]["operation"]) for a in added] == [
            ("refusal", "bad_frame", "unknown"),
            ("refusal", "unknown_message", "unknown"),
            ("refusal", "invalid_message", "deny"),
            ("refusal", "invalid_message", "submit_proposal"),
            ("refusal", "frame_too_large", "unknown"),
        ]
        assert added[2]["detail"]["field"] == "$.proposal_id" and added[4]["detail"]["frame_bytes"] == 1 << 30


# --- ListWritable (relayed) -------------------------------------------------------------------------------


async def test_list_writable_relays_the_executors_fresh_sandbox_read_and_changes_nothing(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        before_rows, before_audit = await rows(s.settings), await audit(s.settings)
        reply = await ask(s.settings, ListWritable(), WritableDevices)
        assert isinstance(reply, WritableDevices), reply
        assert [(d.device_id, d.name) for d in reply.devices] == [
            (A, "Sandbox Pearl-2"),
            (B, "Sandbox Pearl Mini"),
            (CLASSROOM, "Sandbox Classroom"),
        ]
        assert [c.recording for c in reply.devices[1].channels] == [True]
        s.lab.state.devices[A].online = False
        again = await ask(s.settings, ListWritable(), WritableDevices)
        assert [d.online for d in again.devices] == [False, True, True]
        assert await rows(s.settings) == before_rows and await audit(s.settings) == before_audit
        assert s.lab.writes() == []


async def test_list_writable_passes_the_executors_refusal_through_with_one_audit_row(
    shared: Backend, tmp_path: Path
) -> None:
    async with stack(shared) as s:
        shared.settings.sandbox_token_file.unlink()
        row = await refused_cleanly(s, ListWritable(), Code.NO_SIGN_IN, WritableDevices)
        assert row["detail"]["operation"] == "list_writable"
    async with stack(shared, FLEETWATCH_RUNTIME_DIR=str(tmp_path / "run")) as s:
        await refused_cleanly(s, ListWritable(), Code.SERVICE_UNAVAILABLE, WritableDevices)


# --- admin operations ------------------------------------------------------------------------------------


async def test_the_manifest_over_the_socket_is_the_operation_tables(shared: Backend) -> None:
    async with stack(shared) as s:
        capabilities = await ask(s.settings, GetCapabilities(), Capabilities)
        assert capabilities.service == "approval_web"
        assert capabilities.operations == OPERATIONS.manifest.operations
        assert [op.name for op in capabilities.operations][-1] == "get_capabilities"


async def test_deny_and_show_refuse_an_unknown_or_decided_proposal_with_one_audit_row(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        proposal = await accept(s, reboot())
        denied = await ask(s.settings, Deny(proposal_id=proposal.proposal_id), ProposalState)
        assert denied.status == "denied"
        await refused_cleanly(
            s, Deny(proposal_id=proposal.proposal_id), Code.PROPOSAL_NOT_PENDING, ProposalState
        )
        await refused_cleanly(s, Deny(proposal_id="p-000000000000"), Code.PROPOSAL_NOT_FOUND, ProposalState)
        await refused_cleanly(
            s, ShowProposal(proposal_id="p-0000000000ff"), Code.PROPOSAL_NOT_FOUND, ProposalDetail
        )
        row = await refused_cleanly(
            s, ShowProposal(proposal_id="p-x\u202e"), Code.INVALID_MESSAGE, ProposalDetail
        )
        assert row["detail"]["field"] == "$.proposal_id" and "\u202e" not in row["detail_json"]
        reply = await ask(s.settings, GetProposalState(proposal_id="p-0000000000ff"), ProposalState)
        assert isinstance(reply, ErrorReply) and reply.code == Code.PROPOSAL_NOT_FOUND


async def test_deny_all_the_kill_switch_and_the_audit_operations(shared: Backend) -> None:
    async with stack(shared) as s:
        for device in (A, B):
            await accept(s, reboot(device))
        assert (await ask(s.settings, DenyAll(), Count)).count == 2
        assert (await ask(s.settings, ListPending(), PendingList)).items == ()
        paused = await ask(s.settings, SetKillSwitch(on=True), Status)
        assert paused.kill_switch and paused.executor_up
        health = await request(shared.executor.socket, Health(), HealthReport, timeout_seconds=10)
        assert isinstance(health, HealthReport) and health.kill_switch
        assert not (await ask(s.settings, SetKillSwitch(on=False), Status)).kill_switch
        tail = await ask(s.settings, AuditTail(limit=5), AuditRows)
        kinds = ["denial", "kill_switch", "kill_switch_sealed", "kill_switch", "kill_switch_sealed"]
        assert [r.kind for r in tail.rows] == kinds
        assert [r.actor.split(":")[0] for r in tail.rows[1:]] == ["operator", "executor"] * 2
        assert [r.detail.get("on") for r in tail.rows[1:]] == [True, True, False, False]
        report = await ask(s.settings, AuditVerify(), AuditReport)
        assert report.ok and report.rows == len(await audit(s.settings))
        assert [(c.writer, c.ok) for c in report.checks] == [("approval_web", True), ("executor", True)]
        await refused_cleanly(s, AuditTail(limit=0), Code.INVALID_MESSAGE, AuditRows)


async def test_show_reports_the_outcome_and_verification_once_the_proposal_ran(shared: Backend) -> None:
    async with stack(shared) as s:
        proposal = await accept(
            s, submission("batch_recording", {"action": "start", "device_ids": [f"{A}-1"]})
        )
        report = await approve_and_execute(s, proposal.proposal_id)
        assert isinstance(report, ExecutionReport) and report.outcome == "ok", report
        detail = await ask(s.settings, ShowProposal(proposal_id=proposal.proposal_id), ProposalDetail)
        assert (detail.summary.status, detail.outcome, detail.verification) == ("executed", "ok", "verified")
        assert detail.expires_in_seconds is None and "verified_at" in detail.detail
        state = await ask(s.settings, GetProposalState(proposal_id=proposal.proposal_id), ProposalState)
        assert (state.status, state.outcome, state.verification) == ("executed", "ok", "verified")
        assert [w["tool"] for w in s.lab.writes()] == ["batch_recording"]
