"""shared.policy.loader: the shipped policy files load, and malformed ones are refused naming the line.

The malformed files live in ``policy_cases/`` (see its README): each marks its offending line
with ``# expect: <words>``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import ids
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN, WRITE_TOOLS_OF_EPIPHAN
from shared.errors import Code, FleetwatchError
from shared.policy.loader import (
    Autonomy,
    PolicyError,
    TargetKind,
    load_policies,
    load_policy,
    load_tool_policy,
)

CASES = Path(__file__).parent / "policy_cases"

# The disruptive list of EPIPHAN.md (the read and write catalogs live in shared.epiphan.read_client).
EPIPHAN_DISRUPTIVE = frozenset(
    {
        "batch_reboot",
        "batch_firmware_update",
        "apply_team_preset",
        "stop_stream_endpoint",
        "delete_cms_event",
        "delete_stream_endpoint",
        "switch_device_to_cms",
        "update_cms_event",
        "cms_event_action",
    }
)
REVIEWED = frozenset(
    {
        "batch_recording",
        "start_stream_endpoint",
        "stop_stream_endpoint",
        "confirm_cms_event_on_device",
        "batch_reboot",
        "batch_firmware_update",
    }
)


def cases(kind: str) -> list[Path]:
    return sorted((CASES / kind).glob("*.yaml"))


def expectation(case: Path) -> tuple[int, str]:
    """The 1-based line holding ``# expect:`` and the words after it."""
    marked = [
        (number, line.split("# expect:", 1)[1].strip())
        for number, line in enumerate(case.read_text(encoding="utf-8").splitlines(), start=1)
        if "# expect:" in line
    ]
    assert len(marked) == 1, f"{case.name} must mark exactly one line"
    return marked[0]


def assert_refused_at_marked_line(error: PolicyError, case: Path) -> None:
    line, words = expectation(case)
    assert error.code is Code.POLICY_INVALID
    assert error.path == case
    assert error.line == line, str(error)
    assert f"{case}, line {line}: " in str(error)
    assert words in error.problem


@pytest.mark.parametrize("case", cases("tool_policy"), ids=lambda p: p.stem)
def test_a_malformed_tool_policy_is_refused_naming_its_line(case: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        load_tool_policy(case)
    assert_refused_at_marked_line(caught.value, case)


@pytest.mark.parametrize("case", cases("policy"), ids=lambda p: p.stem)
def test_a_malformed_policy_is_refused_naming_its_line(case: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy(case)
    assert_refused_at_marked_line(caught.value, case)


@pytest.mark.parametrize("case", cases("override"), ids=lambda p: p.stem)
def test_an_override_that_widens_is_refused_naming_its_line(case: Path, repo_root: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policies(repo_root / "policy", override=case)
    assert_refused_at_marked_line(caught.value, case)


def test_at_least_fifteen_malformed_policy_files_are_on_record() -> None:
    assert len(cases("tool_policy")) >= 15
    assert len(cases("policy")) >= 10


def test_the_minimal_files_the_cases_are_made_from_load() -> None:
    tool_policy = load_tool_policy(CASES / "valid_tool_policy.yaml")
    assert set(tool_policy.propose) == {"batch_reboot", "batch_recording"}
    assert load_policy(CASES / "valid_policy.yaml").autonomy is Autonomy.PROPOSE


def test_the_shipped_policy_files_load(repo_root: Path) -> None:
    policy, tool_policy = load_policies(repo_root / "policy")
    assert policy.autonomy is Autonomy.PROPOSE
    assert policy.lead_minutes == 30
    assert (policy.limits.max_pending, policy.limits.approval_ttl_seconds) == (3, 300)
    assert policy.override is None and tool_policy.override is None
    assert tool_policy.version == 1


def test_the_shipped_read_list_is_exactly_the_twenty_read_tools_of_epiphan(repo_root: Path) -> None:
    tool_policy = load_tool_policy(repo_root / "policy" / "tool_policy.yaml")
    assert tool_policy.read_tools == READ_TOOLS_OF_EPIPHAN
    assert len(tool_policy.read_tools) == 20
    assert tool_policy.model_read_tools == READ_TOOLS_OF_EPIPHAN - {"get_channel_image"}


def test_the_shipped_write_list_is_exactly_the_fifteen_write_tools_of_epiphan(repo_root: Path) -> None:
    tool_policy = load_tool_policy(repo_root / "policy" / "tool_policy.yaml")
    assert tool_policy.write_tools == WRITE_TOOLS_OF_EPIPHAN
    assert len(tool_policy.write_tools) == 15
    assert not tool_policy.read_tools & tool_policy.write_tools


def test_the_shipped_disruptive_list_holds_those_disruptive_until_reviewed(repo_root: Path) -> None:
    tool_policy = load_tool_policy(repo_root / "policy" / "tool_policy.yaml")
    assert tool_policy.disruptive_tools == EPIPHAN_DISRUPTIVE
    assert tool_policy.never_proposable == {"create_stream_endpoint", "update_stream_endpoint"}


def test_only_the_six_reviewed_tools_may_be_proposed_one_target_each(repo_root: Path) -> None:
    tool_policy = load_tool_policy(repo_root / "policy" / "tool_policy.yaml")
    assert set(tool_policy.propose) == REVIEWED
    for tool, rule in tool_policy.propose.items():
        assert rule.tool == tool
        assert rule.max_targets == 1
        assert rule.schema_version == 1
        assert rule.summary and rule.undo
        assert rule.disruptive is (tool in EPIPHAN_DISRUPTIVE or tool == "batch_recording")
    assert tool_policy.propose["batch_recording"].target_kind is TargetKind.CHANNEL
    assert {r.target_kind for t, r in tool_policy.propose.items() if t != "batch_recording"} == {
        TargetKind.MASTER
    }


def test_the_shipped_schemas_repeat_the_patterns_of_shared_ids(repo_root: Path) -> None:
    propose = load_tool_policy(repo_root / "policy" / "tool_policy.yaml").propose
    recording = propose["batch_recording"].arguments_schema["properties"]
    assert recording["device_ids"]["items"]["pattern"] == ids.CHANNEL_ID
    stream = propose["stop_stream_endpoint"].arguments_schema["properties"]
    assert (stream["stream_id"]["pattern"], stream["device_id"]["pattern"]) == (ids.STREAM_ID, ids.MASTER_ID)
    assert stream["channel_id"]["pattern"] == ids.CHANNEL_NUMBER
    event = propose["confirm_cms_event_on_device"].arguments_schema["properties"]["event_id"]
    assert event["pattern"] == ids.EVENT_ID


def test_firmware_updates_keep_their_own_two_hour_window(repo_root: Path) -> None:
    policy, tool_policy = load_policies(repo_root / "policy")
    assert tool_policy.propose["batch_firmware_update"].window_minutes(policy.lead_minutes) == 120
    assert tool_policy.propose["batch_reboot"].window_minutes(policy.lead_minutes) == 30


def test_a_missing_policy_file_is_refused_with_the_stable_code(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policies(tmp_path)
    assert caught.value.code is Code.POLICY_INVALID
    assert caught.value.path == tmp_path / "policy.yaml"
    assert caught.value.line is None
    assert isinstance(caught.value, FleetwatchError)


def test_an_empty_policy_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "policy.yaml"
    empty.write_text("# nothing here\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="the file is empty") as caught:
        load_policy(empty)
    assert caught.value.line == 1


def test_a_refusal_never_repeats_file_contents_beyond_the_offending_key(tmp_path: Path) -> None:
    secret = "sk-ant-api03-do-not-print-me"
    valid = (CASES / "valid_policy.yaml").read_text(encoding="utf-8")
    for extra in (f"notes: {secret}\n", f"limits: {secret}: [\n", f"lead_minutes: {secret}\n"):
        path = tmp_path / "policy.yaml"
        path.write_text(valid.replace("lead_minutes: 30\n", extra), encoding="utf-8")
        with pytest.raises(PolicyError) as caught:
            load_policy(path)
        assert secret not in str(caught.value)


def test_a_long_offending_key_is_shortened_in_the_message(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    key = "k" * 500
    path.write_text(
        (CASES / "valid_policy.yaml").read_text(encoding="utf-8") + f"{key}: 1\n", encoding="utf-8"
    )
    with pytest.raises(PolicyError, match="unknown key") as caught:
        load_policy(path)
    assert key not in caught.value.problem
    assert len(caught.value.problem) < 300


def test_a_schema_using_the_colon_event_pattern_is_refused_until_reviewed_live(tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parents[3] / "policy" / "tool_policy.yaml"
    text = shipped.read_text(encoding="utf-8")
    reviewed = 'event_id: {type: string, pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"}'
    assert reviewed in text
    path = tmp_path / "tool_policy.yaml"
    path.write_text(text.replace(reviewed, reviewed.replace("_-]", "_:-]")), encoding="utf-8")
    with pytest.raises(PolicyError, match="differs from every ID pattern") as caught:
        load_tool_policy(path)
    assert caught.value.line == text[: text.index(reviewed)].count("\n") + 1
