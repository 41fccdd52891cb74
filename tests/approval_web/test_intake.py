"""The intake's pure decisions: roles on approval.sock and the policy checks of a submission,
in order, against the shipped policy files."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from services.approval_web.intake import (
    ASSISTANT_OPERATIONS,
    MAX_REASON_CHARS,
    IntakeRefused,
    Role,
    as_asked,
    check_caller,
    check_prepared,
    check_submission,
    role_of,
)
from shared.binding import TargetState, fingerprint_hash, make_bound_record, record_bytes, seal
from shared.config import REPO_POLICY_DIR
from shared.errors import Code
from shared.policy.loader import Autonomy, load_policies
from shared.wire.approval import (
    INTAKE_CODES,
    REQUESTS,
    Acknowledge,
    AuditExport,
    AuditTail,
    AuditVerify,
    Deny,
    DenyAll,
    ExpireTurn,
    GetProposalState,
    GetStatus,
    InspectProposal,
    LiftDenialPauses,
    ListPending,
    RecordRefusal,
    SetKillSwitch,
    ShowProposal,
    SubmitProposal,
)
from shared.wire.executor import ListWritable, Prepared
from shared.wire.protocol import GetCapabilities

POLICY, TOOL_POLICY = load_policies(REPO_POLICY_DIR)
OBSERVE = dataclasses.replace(POLICY, autonomy=Autonomy.OBSERVE)
DEVICE = "29088800001"
REBOOT = {"device_ids": [DEVICE]}


def submit(tool: str = "batch_reboot", arguments: Any = None, **fields: Any) -> SubmitProposal:
    fields.setdefault("reason", "it froze")
    fields.setdefault("proposed_by", "assistant")
    return SubmitProposal(tool=tool, arguments=REBOOT if arguments is None else arguments, **fields)


def refused(message: SubmitProposal, *, policy: Any = POLICY, fence: bool = True) -> IntakeRefused:
    with pytest.raises(IntakeRefused) as caught:
        check_submission(message, policy=policy, tool_policy=TOOL_POLICY, fence_configured=fence)
    assert caught.value.code in INTAKE_CODES
    return caught.value


# --- roles --------------------------------------------------------------------------------------


def test_only_a_uid_listed_for_the_assistant_alone_has_the_assistants_narrow_role() -> None:
    assert role_of(7, operator_uids={7}, assistant_uids={7}) is Role.OPERATOR
    assert role_of(8, operator_uids={7}, assistant_uids={8}) is Role.ASSISTANT
    assert role_of(9, operator_uids={7}, assistant_uids={8}) is Role.OPERATOR  # admitted by group


ADMIN_REQUESTS = [
    ListPending(),
    ShowProposal(proposal_id="p-1"),
    Deny(proposal_id="p-1"),
    DenyAll(),
    SetKillSwitch(on=True),
    GetStatus(),
    AuditTail(),
    AuditVerify(),
    AuditExport(),
    LiftDenialPauses(),
    Acknowledge(proposal_id="p-1"),
    InspectProposal(proposal_id="p-1"),
]


def caller_refused(request: Any, uid: int, *, operators: set[int], assistant: set[int]) -> Code | None:
    try:
        check_caller(request, uid, operator_uids=operators, assistant_uids=assistant)
    except IntakeRefused as exc:
        return exc.code
    return None


def test_the_assistant_may_only_submit_read_states_expire_its_turn_and_list_writable_devices() -> None:
    assert {type(r) for r in ADMIN_REQUESTS} | ASSISTANT_OPERATIONS == set(REQUESTS)
    for admin_request in ADMIN_REQUESTS:
        refused = caller_refused(admin_request, 8, operators={7}, assistant={8})
        assert refused is Code.OPERATION_NOT_ALLOWED
        assert caller_refused(admin_request, 7, operators={7}, assistant={8}) is None
    for allowed in (
        submit(),
        GetProposalState(proposal_id="p-1"),
        ExpireTurn(turn_id="t"),
        ListWritable(),
        GetCapabilities(),
    ):
        assert caller_refused(allowed, 8, operators={7}, assistant={8}) is None
        assert caller_refused(allowed, 7, operators={7}, assistant={8}) is None


def test_only_the_assistants_uid_may_send_the_assistants_records() -> None:
    record = RecordRefusal(operation="connect", code="peer_not_allowed", uid=1, gid=1, pid=1)
    assert caller_refused(record, 8, operators={7}, assistant={8}) is None
    assert caller_refused(record, 7, operators={7}, assistant={7}) is None  # one account
    refused = caller_refused(record, 7, operators={7}, assistant={8})  # an operator, not the assistant
    assert refused is Code.OPERATION_NOT_ALLOWED
    assert caller_refused(record, 9, operators={7}, assistant={8}) is Code.OPERATION_NOT_ALLOWED  # a group


def test_the_assistant_cannot_label_its_proposal_as_drafted_by_an_operator() -> None:
    drafted = submit(proposed_by="operator")
    assert caller_refused(drafted, 8, operators={7}, assistant={8}) is Code.OPERATION_NOT_ALLOWED
    assert caller_refused(drafted, 7, operators={7}, assistant={8}) is None
    assert caller_refused(drafted, 7, operators={7}, assistant={7}) is None  # one account: an operator


# --- the policy checks ------------------------------------------------------------------------------


def test_a_valid_reboot_passes_with_canonical_arguments_and_its_target() -> None:
    checked = check_submission(submit(), policy=POLICY, tool_policy=TOOL_POLICY, fence_configured=True)
    assert (checked.tool, checked.arguments, checked.targets) == ("batch_reboot", REBOOT, (DEVICE,))


def test_a_channel_target_counts_as_its_master() -> None:
    message = submit("batch_recording", {"action": "start", "device_ids": [f"{DEVICE}-2"]})
    checked = check_submission(message, policy=POLICY, tool_policy=TOOL_POLICY, fence_configured=True)
    assert checked.targets == (DEVICE,)


def test_observe_mode_refuses_every_proposal() -> None:
    assert refused(submit(), policy=OBSERVE).code is Code.OBSERVE_MODE


@pytest.mark.parametrize("tool", ["get_device_info", "format_everything", "create_stream_endpoint"])
def test_a_tool_outside_the_propose_section_is_not_proposable(tool: str) -> None:
    assert refused(submit(tool)).code is Code.NOT_PROPOSABLE


def test_a_write_tool_without_a_reviewed_schema_is_refused_as_unreviewed() -> None:
    assert refused(submit("update_cms_event", {"event_id": "x"})).code is Code.SCHEMA_NOT_REVIEWED


def test_a_hidden_character_in_an_argument_is_refused_naming_its_path() -> None:
    error = refused(submit(arguments={"device_ids": ["2908880000\u200b1"]}))
    assert error.code is Code.HIDDEN_CHARACTER and "arguments.device_ids[0]" in error.message


def test_a_float_argument_has_no_canonical_form() -> None:
    assert refused(submit(arguments={"device_ids": [DEVICE], "delay": 1.5})).code is Code.NOT_CANONICALIZABLE


def test_two_targets_for_a_one_target_tool_are_too_many() -> None:
    error = refused(submit(arguments={"device_ids": [DEVICE, "29088800002"]}))
    assert error.code is Code.TOO_MANY_TARGETS and "at most 1" in error.message


def test_arguments_off_the_schema_are_refused_with_each_json_path() -> None:
    error = refused(submit(arguments={"device_ids": ["NOT-AN-ID"], "force": True}))
    assert error.code is Code.INVALID_ARGUMENTS
    assert "$.device_ids[0]" in error.message and "unexpected argument" in error.message


def test_without_a_fence_nothing_may_be_proposed() -> None:
    error = refused(submit(), fence=False)
    assert error.code is Code.FENCE_NOT_CONFIGURED and "FLEETWATCH_WRITE_DEVICE_IDS" in error.message


@pytest.mark.parametrize(
    "fields",
    [{"proposed_by": "model"}, {"reason": "   "}, {"reason": "x" * (MAX_REASON_CHARS + 1)}],
    ids=["unknown author", "blank reason", "long reason"],
)
def test_a_submission_with_a_bad_author_or_reason_is_an_invalid_message(fields: dict[str, str]) -> None:
    assert refused(submit(**fields)).code is Code.INVALID_MESSAGE


def test_the_checks_run_in_order_so_the_first_failing_one_names_the_refusal() -> None:
    worst = submit("get_device_info", {"device_ids": ["a\u202eb", "c"], "x": 1.5})
    assert refused(worst, policy=OBSERVE, fence=False).code is Code.OBSERVE_MODE
    assert refused(worst, fence=False).code is Code.NOT_PROPOSABLE
    hidden_and_float = submit(arguments={"device_ids": ["a\u202eb", "c"], "x": 1.5})
    assert refused(hidden_and_float, fence=False).code is Code.HIDDEN_CHARACTER
    too_many_and_off_schema = submit(arguments={"device_ids": ["A", "B"], "x": 1})
    assert refused(too_many_and_off_schema, fence=False).code is Code.TOO_MANY_TARGETS
    assert refused(submit(arguments={"device_ids": ["A"]}), fence=False).code is Code.INVALID_ARGUMENTS


# --- the executor's record ------------------------------------------------------------------------


def prepared_for(
    proposal_id: str, arguments: dict[str, Any], reason: str, *, schema_version: int = 1
) -> Prepared:
    fingerprint = {DEVICE: TargetState(online=True, recording=False, next_event_start=None)}
    record = make_bound_record(
        proposal_id=proposal_id,
        tool="batch_reboot",
        arguments=arguments,
        targets=[DEVICE],
        fingerprint=fingerprint,
        schema_version=schema_version,
        reason=reason,
    )
    return Prepared(
        record=record_bytes(record),
        seal=seal(record, b"k" * 32),
        fingerprint_hash=fingerprint_hash(fingerprint),
    )


def test_the_executors_record_is_accepted_when_it_is_exactly_the_request_with_the_reason_in_nfc() -> None:
    reason = "Cafe\u0301 room"
    checked = check_submission(
        submit(reason=reason), policy=POLICY, tool_policy=TOOL_POLICY, fence_configured=True
    )
    record = check_prepared(
        prepared_for("p-1", REBOOT, reason), proposal_id="p-1", checked=checked, reason=reason
    )
    assert record.reason == "Café room" and record.targets == (DEVICE,)


@pytest.mark.parametrize(
    "prepared",
    [
        prepared_for("p-2", REBOOT, "it froze"),
        prepared_for("p-1", {"device_ids": ["29088800002"]}, "it froze"),
        prepared_for("p-1", REBOOT, "something else"),
        prepared_for("p-1", REBOOT, "it froze", schema_version=2),
        Prepared(record=b"{}", seal="", fingerprint_hash=""),
    ],
    ids=["other proposal", "other arguments", "other reason", "other schema", "not a record"],
)
def test_a_record_that_differs_from_the_request_is_an_internal_error(prepared: Prepared) -> None:
    checked = check_submission(submit(), policy=POLICY, tool_policy=TOOL_POLICY, fence_configured=True)
    with pytest.raises(IntakeRefused) as caught:
        check_prepared(prepared, proposal_id="p-1", checked=checked, reason="it froze")
    assert caught.value.code is Code.INTERNAL_ERROR


def test_only_a_stream_ids_case_may_differ_between_the_request_and_the_executors_record() -> None:
    stream = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"
    asked = {"stream_id": stream.upper(), "device_id": DEVICE, "channel_id": "1"}
    assert as_asked({**asked, "stream_id": stream}, asked)
    assert not as_asked({**asked, "stream_id": stream.replace("6f", "7f")}, asked)
    assert not as_asked({**asked, "device_id": DEVICE.upper() + "A"}, asked)
    assert not as_asked({**asked, "channel_id": "2"}, asked) and not as_asked({"stream_id": stream}, asked)
