"""shared.policy.model: how the loaded rules judge a call (the shipped rules, unchanged)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from shared.errors import Code, FleetwatchError
from shared.policy.loader import ArgumentsError, ProposeRule, QuietHours, ToolPolicy, load_tool_policy

MASTER = "19012341234"
STREAM = "3f2b8c1e-9a4d-4c2e-8b1f-0a1b2c3d4e5f"


@pytest.fixture(scope="module")
def tools() -> ToolPolicy:
    return load_tool_policy(Path(__file__).resolve().parents[3] / "policy" / "tool_policy.yaml")


@pytest.fixture
def recording(tools: ToolPolicy) -> ProposeRule:
    return tools.propose["batch_recording"]


@pytest.mark.parametrize(
    ("arguments", "disruptive"),
    [
        ({"action": "stop", "device_ids": [f"{MASTER}-1"]}, True),
        ({"action": "start", "device_ids": [f"{MASTER}-1"]}, False),
        ({"device_ids": [f"{MASTER}-1"]}, True),
        ({"action": "pause", "device_ids": [f"{MASTER}-1"]}, True),
        ({"action": ["start"], "device_ids": [f"{MASTER}-1"]}, True),
        ({"action": None}, True),
    ],
)
def test_a_recording_is_disruptive_for_stop_and_for_any_missing_or_unknown_action(
    recording: ProposeRule, arguments: dict[str, object], disruptive: bool
) -> None:
    assert recording.is_disruptive(arguments) is disruptive


@pytest.mark.parametrize(
    ("arguments", "stops"),
    [({"action": "stop"}, True), ({"action": "start"}, False), ({}, False), ({"action": ["stop"]}, False)],
)
def test_only_an_explicit_stop_counts_as_stopping_the_recording_it_targets(
    recording: ProposeRule, arguments: dict[str, object], stops: bool
) -> None:
    assert recording.stops_recording_call(arguments) is stops


def test_the_tools_on_the_disruptive_list_are_disruptive_whatever_the_arguments(tools: ToolPolicy) -> None:
    for tool in ("batch_reboot", "batch_firmware_update", "stop_stream_endpoint"):
        assert tools.propose[tool].is_disruptive({})
        assert tools.is_disruptive(tool, {})
    assert not tools.is_disruptive("start_stream_endpoint", {})
    assert not tools.is_disruptive("confirm_cms_event_on_device", {})


def test_an_unreviewed_or_unknown_tool_counts_as_disruptive(tools: ToolPolicy) -> None:
    assert tools.is_disruptive("create_cms_event", {})
    assert tools.is_disruptive("no_such_tool", {})


@pytest.mark.parametrize(
    ("tool", "code"),
    [
        ("create_cms_event", Code.SCHEMA_NOT_REVIEWED),
        ("create_stream_endpoint", Code.NOT_PROPOSABLE),
        ("get_device_info", Code.NOT_PROPOSABLE),
        ("invented_tool", Code.NOT_PROPOSABLE),
    ],
)
def test_a_tool_without_a_rule_is_refused_with_its_reason(tools: ToolPolicy, tool: str, code: Code) -> None:
    with pytest.raises(FleetwatchError) as caught:
        tools.rule_for(tool)
    assert caught.value.code is code


def test_the_targets_of_a_channel_rule_are_channel_ids_on_their_master_device(recording: ProposeRule) -> None:
    arguments = {"action": "start", "device_ids": [f"{MASTER}-2"]}
    recording.validate(arguments)
    assert recording.targets(arguments) == (f"{MASTER}-2",)
    assert recording.target_device_ids(arguments) == (MASTER,)


def test_the_target_of_a_stream_rule_is_its_device_id(tools: ToolPolicy) -> None:
    rule = tools.propose["start_stream_endpoint"]
    arguments = {"stream_id": STREAM, "device_id": MASTER, "channel_id": "1"}
    rule.validate(arguments)
    assert rule.targets(arguments) == rule.target_device_ids(arguments) == (MASTER,)


@pytest.mark.parametrize(
    ("tool", "arguments", "path"),
    [
        ("batch_recording", {"action": "start", "device_ids": [MASTER]}, "$.device_ids[0]"),
        ("batch_recording", {"action": "start", "device_ids": [f"{MASTER}-1\n"]}, "$.device_ids[0]"),
        ("batch_recording", {"action": "start", "device_ids": []}, "$.device_ids"),
        ("batch_recording", {"action": "begin", "device_ids": [f"{MASTER}-1"]}, "$.action"),
        ("batch_reboot", {"device_ids": [f"{MASTER}-1"]}, "$.device_ids[0]"),
        ("batch_reboot", {"device_ids": [MASTER], "force": True}, "$"),
        ("batch_reboot", {}, "$"),
        ("batch_reboot", [MASTER], "$"),
        (
            "start_stream_endpoint",
            {"stream_id": STREAM, "device_id": MASTER, "channel_id": "0"},
            "$.channel_id",
        ),
        (
            "start_stream_endpoint",
            {"stream_id": "my-key", "device_id": MASTER, "channel_id": "1"},
            "$.stream_id",
        ),
        ("confirm_cms_event_on_device", {"device_id": MASTER, "event_id": 7}, "$.event_id"),
    ],
)
def test_arguments_outside_the_reviewed_schema_are_refused_with_their_path(
    tools: ToolPolicy, tool: str, arguments: object, path: str
) -> None:
    with pytest.raises(ArgumentsError) as caught:
        tools.propose[tool].validate(arguments)
    assert caught.value.code is Code.INVALID_ARGUMENTS
    assert path in [problem.path for problem in caught.value.problems]


def test_a_colon_event_id_cannot_be_proposed_until_the_schema_is_reviewed_live(tools: ToolPolicy) -> None:
    rule = tools.propose["confirm_cms_event_on_device"]
    rule.validate({"device_id": MASTER, "event_id": "abc123"})
    with pytest.raises(ArgumentsError) as caught:
        rule.validate({"device_id": MASTER, "event_id": "abc123:1791484740"})
    assert [p.path for p in caught.value.problems] == ["$.event_id"]


def test_more_targets_than_the_rule_allows_is_its_own_refusal(tools: ToolPolicy) -> None:
    with pytest.raises(ArgumentsError) as caught:
        tools.propose["batch_reboot"].validate({"device_ids": [MASTER, "19012341235"]})
    assert caught.value.code is Code.TOO_MANY_TARGETS


def test_a_refusal_names_keys_but_never_repeats_the_values_sent(tools: ToolPolicy) -> None:
    secret = "sk-ant-not-for-the-log"
    with pytest.raises(ArgumentsError) as caught:
        tools.propose["batch_reboot"].validate({"device_ids": [secret], "note": secret})
    text = str(caught.value)
    assert secret not in text
    assert "'note'" in text and "$.device_ids[0]: must be a master ID" in text


def test_quiet_hours_that_wrap_midnight_hold_late_evening_and_early_morning() -> None:
    quiet = QuietHours(start=dt.time(22), end=dt.time(6), timezone="UTC")
    utc = dt.UTC
    assert quiet.contains(dt.datetime(2026, 9, 16, 22, 0, tzinfo=utc))
    assert quiet.contains(dt.datetime(2026, 9, 16, 5, 59, tzinfo=utc))
    assert not quiet.contains(dt.datetime(2026, 9, 16, 6, 0, tzinfo=utc))
    assert not quiet.contains(dt.datetime(2026, 9, 16, 12, 0, tzinfo=utc))


def test_quiet_hours_are_judged_in_their_own_time_zone() -> None:
    quiet = QuietHours(start=dt.time(9), end=dt.time(17), timezone="America/Bogota")  # UTC-5
    assert quiet.contains(dt.datetime(2026, 9, 16, 15, 0, tzinfo=dt.UTC))
    assert not quiet.contains(dt.datetime(2026, 9, 16, 23, 0, tzinfo=dt.UTC))
    with pytest.raises(ValueError, match="timezone-aware"):
        quiet.contains(dt.datetime(2026, 9, 16, 15, 0))


def test_a_misspelt_tool_is_refused_naming_the_closest_proposable_one(tools: ToolPolicy) -> None:
    with pytest.raises(FleetwatchError) as caught:
        tools.rule_for("batch_rebot")
    assert caught.value.code is Code.NOT_PROPOSABLE and "did you mean batch_reboot?" in caught.value.message
    with pytest.raises(FleetwatchError) as caught:
        tools.rule_for("frobnicate")
    assert "did you mean" not in caught.value.message
