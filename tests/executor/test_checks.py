"""The executor's pure checks: each refusal, their order, the disruptive rule and its windows,
the team ID decision, and the seal over a stored row."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from services.executor.checks import (
    DeviceList,
    Fence,
    Observed,
    Proposed,
    Refusal,
    disruptive_refusal,
    event_refusal,
    fence_refusal,
    fingerprint_refusal,
    in_event_window,
    membership_refusal,
    policy_refusal,
    sealed_record,
    state_refusal,
    stream_refusal,
    target_states,
    team_refusal,
)
from shared.binding import TargetState, fingerprint_hash, make_bound_record, record_bytes, seal
from shared.config import REPO_POLICY_DIR
from shared.epiphan.fleet import Channel, Device, Event, StreamEndpoint
from shared.errors import Code
from shared.policy.loader import Autonomy, load_policies

NOW = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)
A, B = "29088800001", "29088800002"
POLICY, TOOLS = load_policies(REPO_POLICY_DIR)
DEVICES = {
    A: Device(id=A, name="Room A", online=True, channels=(Channel("1", "Program"), Channel("2", "Camera"))),
    B: Device(id=B, name="Room B", online=True, channels=(Channel("1", "Program", recording=True),)),
}
LISTED = DeviceList(team_id="team-1", devices=DEVICES)
FENCE = Fence(frozenset({A, B}), "team-1")
QUIET = TargetState(online=True, recording=False, next_event_start=None)


def proposed(tool: str, arguments: dict) -> Proposed:
    result = policy_refusal(tool, arguments, policy=POLICY, tool_policy=TOOLS)
    assert isinstance(result, Proposed), result
    return result


def code(result: object) -> Code | None:
    return result.code if isinstance(result, Refusal) else None


def event(minutes: int, length: int = 60, event_id: str = "e1") -> Event:
    start = NOW + timedelta(minutes=minutes)
    return Event(id=event_id, title="Class", start=start, finish=start + timedelta(minutes=length))


# --- policy and fence ------------------------------------------------------------------------


def test_observe_mode_is_refused_before_anything_else() -> None:
    observe = dataclasses.replace(POLICY, autonomy=Autonomy.OBSERVE)
    assert code(policy_refusal("no_such_tool", {}, policy=observe, tool_policy=TOOLS)) == Code.OBSERVE_MODE


@pytest.mark.parametrize(
    ("tool", "arguments", "version", "expected"),
    [
        ("create_stream_endpoint", {}, None, Code.NOT_PROPOSABLE),
        ("apply_team_preset", {}, None, Code.SCHEMA_NOT_REVIEWED),
        ("batch_reboot", {"device_ids": [A]}, 2, Code.SCHEMA_VERSION_CHANGED),
        ("batch_reboot", {"device_ids": [A, B]}, 1, Code.TOO_MANY_TARGETS),
        ("batch_reboot", {"device_ids": [f"{A}-1"]}, 1, Code.INVALID_ARGUMENTS),
        ("batch_reboot", {"device_ids": [A + "\u200b"]}, 1, Code.HIDDEN_CHARACTER),
        ("batch_reboot", {"device_ids": [A]}, 1, None),
    ],
)
def test_the_policy_checks_refuse_in_order(
    tool: str, arguments: dict, version: int | None, expected: Code
) -> None:
    result = policy_refusal(tool, arguments, policy=POLICY, tool_policy=TOOLS, schema_version=version)
    assert code(result) == expected


def test_a_channel_id_counts_as_its_master() -> None:
    assert proposed("batch_recording", {"action": "start", "device_ids": [f"{A}-2"]}).targets == (A,)


def test_no_fence_at_all_is_refused() -> None:
    assert code(fence_refusal(Fence(frozenset(), None))) == Code.FENCE_NOT_CONFIGURED
    assert fence_refusal(Fence(frozenset({A}), None)) is None
    assert fence_refusal(Fence(frozenset(), "team-1")) is None


# --- membership -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("listed_team", "fence", "expected"),
    [
        ("team-1", Fence(frozenset(), "team-1"), None),
        ("team-2", Fence(frozenset({A}), "team-1"), Code.TEAM_MISMATCH),
        (None, Fence(frozenset(), "team-1"), Code.TEAM_MISMATCH),
        (None, Fence(frozenset({A}), "team-1"), None),
        (None, Fence(frozenset({A}), None), None),
    ],
)
def test_the_team_id_is_checked_and_a_missing_one_passes_only_with_an_allowlist(
    listed_team: str | None, fence: Fence, expected: Code | None
) -> None:
    assert code(team_refusal(DeviceList(listed_team, DEVICES), fence)) == expected


@pytest.mark.parametrize(
    ("tool", "arguments", "fence", "expected"),
    [
        ("batch_reboot", {"device_ids": ["19012340104"]}, FENCE, Code.TARGET_NOT_IN_SANDBOX),
        ("batch_reboot", {"device_ids": [B]}, Fence(frozenset({A}), None), Code.TARGET_NOT_ALLOWLISTED),
        ("batch_reboot", {"device_ids": [B]}, Fence(frozenset(), "team-1"), None),
        ("batch_recording", {"action": "start", "device_ids": [f"{A}-3"]}, FENCE, Code.CHANNEL_NOT_FOUND),
        (
            "start_stream_endpoint",
            {"stream_id": "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2", "device_id": B, "channel_id": "2"},
            FENCE,
            Code.CHANNEL_NOT_FOUND,
        ),
        ("batch_recording", {"action": "start", "device_ids": [f"{A}-2"]}, FENCE, None),
    ],
)
def test_membership_allowlist_and_channel(
    tool: str, arguments: dict, fence: Fence, expected: Code | None
) -> None:
    assert code(membership_refusal(proposed(tool, arguments), LISTED, fence)) == expected


CAMERA, OFFLINE = "29088800005", "29088800006"
WITH_CAMERA = DeviceList(
    team_id="team-1",
    devices={
        **DEVICES,
        CAMERA: Device(
            id=CAMERA, name="Camera Room", model="EC20", online=True, channels=(Channel("1", "Camera"),)
        ),
        OFFLINE: Device(
            id=OFFLINE, name="Dark Room", model="Pearl Mini", online=False, channels=(Channel("1", "P"),)
        ),
    },
)
STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("batch_recording", {"action": "start", "device_ids": [f"{CAMERA}-1"]}, Code.MODEL_NOT_CAPABLE),
        ("batch_recording", {"action": "stop", "device_ids": [f"{CAMERA}-1"]}, Code.MODEL_NOT_CAPABLE),
        (
            "start_stream_endpoint",
            {"stream_id": STREAM, "device_id": CAMERA, "channel_id": "1"},
            Code.MODEL_NOT_CAPABLE,
        ),
        (
            "stop_stream_endpoint",
            {"stream_id": STREAM, "device_id": CAMERA, "channel_id": "1"},
            Code.MODEL_NOT_CAPABLE,
        ),
        ("confirm_cms_event_on_device", {"device_id": CAMERA, "event_id": "e1"}, Code.MODEL_NOT_CAPABLE),
        ("batch_reboot", {"device_ids": [CAMERA]}, None),  # an EC20 can reboot and update
        ("batch_firmware_update", {"device_ids": [CAMERA]}, None),
        ("batch_reboot", {"device_ids": [OFFLINE]}, Code.TARGET_OFFLINE),
        ("batch_firmware_update", {"device_ids": [OFFLINE]}, Code.TARGET_OFFLINE),
        ("batch_reboot", {"device_ids": [A]}, None),
    ],
)
def test_a_change_the_model_cannot_do_or_a_restart_of_an_offline_room_is_refused_in_words(
    tool: str, arguments: dict, expected: Code | None
) -> None:
    fence = Fence(frozenset({A, B, CAMERA, OFFLINE}), "team-1")
    refusal = membership_refusal(proposed(tool, arguments), WITH_CAMERA, fence)
    assert code(refusal) == expected
    if isinstance(refusal, Refusal):
        room = "Camera Room" if expected is Code.MODEL_NOT_CAPABLE else "Dark Room"
        assert room in refusal.message and "_" not in refusal.message.replace(tool, "")


@pytest.mark.parametrize("model", ["EC20", "ec20", "Epiphan EC20", " EC20 "])
def test_every_spelling_of_the_ec20_is_the_camera(model: str) -> None:
    camera = Device(id=CAMERA, name="Camera Room", model=model, online=True, channels=(Channel("1", "C"),))
    listed = DeviceList(team_id="team-1", devices={CAMERA: camera})
    start = proposed("batch_recording", {"action": "start", "device_ids": [f"{CAMERA}-1"]})
    assert code(membership_refusal(start, listed, Fence(frozenset({CAMERA}), None))) == Code.MODEL_NOT_CAPABLE


def test_a_stream_id_must_be_on_the_list_in_any_case() -> None:
    endpoints = (StreamEndpoint(id="6F7A8B9C-0D1E-4F2A-9B3C-5D6E7F8091A2", name="Test"),)
    arguments = {"stream_id": "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"}
    assert stream_refusal(arguments, endpoints) is None
    assert code(stream_refusal(arguments, ())) == Code.STREAM_NOT_FOUND
    assert code(stream_refusal(arguments, None)) == Code.STREAM_NOT_FOUND
    assert stream_refusal({"device_ids": [A]}, None) is None


# --- state --------------------------------------------------------------------------------------


def test_a_target_left_out_of_a_read_fails_closed() -> None:
    states = target_states((A,), DEVICES, {A: {"1": False}}, {A: None})
    assert states == {A: QUIET}
    assert code(target_states((A,), DEVICES, {}, {A: None})) == Code.STATE_READ_FAILED
    assert code(target_states((A,), DEVICES, {A: {}}, {})) == Code.STATE_READ_FAILED


def test_a_changed_fingerprint_names_what_changed() -> None:
    fresh = {A: TargetState(online=True, recording=True, next_event_start=None)}
    refusal = fingerprint_refusal({A: QUIET}, fresh, DEVICES)
    assert refusal is not None and refusal.code == Code.FINGERPRINT_CHANGED
    assert "Room A" in refusal.message and "started recording" in refusal.message
    assert fingerprint_refusal({A: QUIET}, {A: QUIET}, DEVICES) is None


def test_an_event_id_must_be_the_current_or_next() -> None:
    arguments = {"device_id": A, "event_id": "e1"}
    assert event_refusal(arguments, {A: event(10)}) is None
    assert code(event_refusal(arguments, {A: event(10, event_id="e2")})) == Code.EVENT_NOT_CURRENT
    assert code(event_refusal(arguments, {A: None})) == Code.EVENT_NOT_CURRENT


@pytest.mark.parametrize(
    ("minutes", "window", "inside"),
    [(-10, 30, True), (29, 30, True), (31, 30, False), (-70, 30, False), (119, 120, True), (121, 120, False)],
)
def test_the_event_window_covers_the_event_and_the_lead_minutes(
    minutes: int, window: int, inside: bool
) -> None:
    assert in_event_window(event(minutes), NOW, window) is inside


def test_an_event_with_no_known_start_counts_as_inside() -> None:
    assert in_event_window(Event(id="e"), NOW, 30)


def disruptive(tool: str, arguments: dict, *, recording: bool, upcoming: Event | None) -> Code | None:
    call = proposed(tool, arguments)
    states = {t: TargetState(online=True, recording=recording, next_event_start=None) for t in call.targets}
    events = dict.fromkeys(call.targets, upcoming)
    seen = Observed(states=states, events=events, devices=DEVICES, now=NOW)
    refusal = disruptive_refusal(call, tool, tool_policy=TOOLS, lead_minutes=POLICY.lead_minutes, seen=seen)
    return code(refusal)


@pytest.mark.parametrize(
    ("tool", "arguments", "recording", "upcoming", "expected"),
    [
        ("batch_reboot", {"device_ids": [A]}, True, None, Code.TARGET_RECORDING),
        ("batch_reboot", {"device_ids": [A]}, False, event(20), Code.TARGET_IN_EVENT_WINDOW),
        ("batch_reboot", {"device_ids": [A]}, False, event(90), None),
        ("batch_firmware_update", {"device_ids": [A]}, False, event(90), Code.TARGET_IN_EVENT_WINDOW),
        ("batch_firmware_update", {"device_ids": [A]}, False, event(130), None),
        ("batch_recording", {"action": "stop", "device_ids": [f"{A}-1"]}, True, None, None),
        (
            "batch_recording",
            {"action": "stop", "device_ids": [f"{A}-1"]},
            True,
            event(-5),
            Code.TARGET_IN_EVENT_WINDOW,
        ),
        ("batch_recording", {"action": "start", "device_ids": [f"{A}-1"]}, True, event(-5), None),
        (
            "start_stream_endpoint",
            {"stream_id": "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2", "device_id": A, "channel_id": "1"},
            True,
            event(1),
            None,
        ),
        (
            "stop_stream_endpoint",
            {"stream_id": "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2", "device_id": A, "channel_id": "1"},
            False,
            event(1),
            Code.TARGET_IN_EVENT_WINDOW,
        ),
    ],
)
def test_the_disruptive_rule(
    tool: str, arguments: dict, recording: bool, upcoming: Event | None, expected: Code | None
) -> None:
    assert disruptive(tool, arguments, recording=recording, upcoming=upcoming) == expected


def test_the_fingerprint_is_checked_before_the_event_and_the_disruptive_rule() -> None:
    call = proposed("batch_reboot", {"device_ids": [A]})
    record = make_bound_record(
        proposal_id="p-1",
        tool="batch_reboot",
        arguments=call.arguments,
        targets=call.targets,
        fingerprint={A: QUIET},
        schema_version=1,
        reason="r",
    )
    busy = {A: TargetState(online=True, recording=True, next_event_start=None)}

    def seen(states: dict[str, TargetState]) -> Observed:
        return Observed(states=states, events={A: None}, devices=DEVICES, now=NOW)

    assert (
        code(state_refusal(record, call, tool_policy=TOOLS, lead_minutes=30, seen=seen(busy)))
        == Code.FINGERPRINT_CHANGED
    )
    assert (
        code(state_refusal(None, call, tool_policy=TOOLS, lead_minutes=30, seen=seen(busy)))
        == Code.TARGET_RECORDING
    )
    assert state_refusal(record, call, tool_policy=TOOLS, lead_minutes=30, seen=seen({A: QUIET})) is None


# --- the seal -------------------------------------------------------------------------------


def sealed_row(key: bytes) -> tuple[bytes, str, dict]:
    record = make_bound_record(
        proposal_id="p-1",
        tool="batch_reboot",
        arguments={"device_ids": [A]},
        targets=[A],
        fingerprint={A: QUIET},
        schema_version=1,
        reason="stuck",
    )
    stored = {
        "tool": record.tool,
        "arguments": record.arguments,
        "targets": list(record.targets),
        "fingerprint": msgspec.to_builtins(record.fingerprint),
        "fingerprint_hash": fingerprint_hash(record.fingerprint),
        "schema_version": 1,
        "slot": "sandbox",
        "reason": "stuck",
    }
    return record_bytes(record), seal(record, key), stored


def test_a_sealed_record_verifies_only_under_its_key_and_with_its_row() -> None:
    key = b"k" * 32
    data, seal_hex, stored = sealed_row(key)
    ok = sealed_record(proposal_id="p-1", stored=stored, record_data=data, seal_hex=seal_hex, key=key)
    assert not isinstance(ok, Refusal) and ok.targets == (A,)
    other_key = sealed_record(
        proposal_id="p-1", stored=stored, record_data=data, seal_hex=seal_hex, key=b"x" * 32
    )
    assert code(other_key) == Code.SEAL_INVALID
    for field, value in [
        ("reason", "approved"),
        ("targets", [B]),
        ("schema_version", 2),
        ("fingerprint_hash", "0"),
    ]:
        edited = sealed_record(
            proposal_id="p-1", stored={**stored, field: value}, record_data=data, seal_hex=seal_hex, key=key
        )
        assert code(edited) == Code.SEAL_INVALID, field
    assert code(sealed_record(proposal_id="p-2", stored=stored, record_data=data, seal_hex=seal_hex, key=key))
    garbled = sealed_record(proposal_id="p-1", stored=stored, record_data=b"{", seal_hex=seal_hex, key=key)
    assert code(garbled) == Code.SEAL_INVALID
