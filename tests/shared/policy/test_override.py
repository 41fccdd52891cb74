"""shared.policy.override: an override file may only narrow the shipped policy.

Each kind of widening is a file in ``policy_cases/override/``, checked in test_policy.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shared.errors import Code, FleetwatchError
from shared.policy.loader import (
    ArgumentsError,
    Autonomy,
    PolicyError,
    load_policies,
    load_policy,
    load_tool_policy,
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "override.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_override_may_narrow_everything_it_names(repo_root: Path, tmp_path: Path) -> None:
    override = write(
        tmp_path,
        """
autonomy: observe
lead_minutes: 45
limits: {max_pending: 1, per_hour: 4, denials_before_pause: 2, denial_pause_minutes: 120, approval_ttl_seconds: 120}
read: [get_devices_in_my_team, get_device_info, get_channel_image]
propose:
  batch_firmware_update: false
  batch_reboot: {max_targets: 1, lead_minutes: 240}
  start_stream_endpoint: {disruptive: true}
  batch_recording: {disruptive: true}
""",
    )
    base_policy, base_tools = load_policies(repo_root / "policy")
    policy, tools = load_policies(repo_root / "policy", override=override)
    assert policy.autonomy is Autonomy.OBSERVE and not policy.may_propose
    assert policy.lead_minutes == 45
    assert (policy.limits.max_pending, policy.limits.per_hour, policy.limits.denials_before_pause) == (
        1,
        4,
        2,
    )
    assert (policy.limits.denial_pause_minutes, policy.limits.approval_ttl_seconds) == (120, 120)
    assert policy.quiet_hours == base_policy.quiet_hours and policy.thresholds == base_policy.thresholds
    assert tools.read_tools == {"get_devices_in_my_team", "get_device_info", "get_channel_image"}
    assert tools.model_read_tools == {"get_devices_in_my_team", "get_device_info"}
    assert "batch_firmware_update" not in tools.propose
    assert tools.propose["batch_reboot"].window_minutes(policy.lead_minutes) == 240
    assert tools.is_disruptive("start_stream_endpoint", {})
    assert tools.propose["batch_recording"].is_disruptive({"action": "start"})
    assert not base_tools.propose["batch_recording"].is_disruptive({"action": "start"})
    assert (
        tools.write_tools == base_tools.write_tools and tools.disruptive_tools == base_tools.disruptive_tools
    )
    assert policy.override == override and tools.override == override


def test_a_removed_tool_is_refused_as_unreviewed_after_the_override(repo_root: Path, tmp_path: Path) -> None:
    override = write(tmp_path, "propose: {batch_reboot: false}\n")
    tools = load_tool_policy(repo_root / "policy" / "tool_policy.yaml", override=override)
    with pytest.raises(FleetwatchError) as caught:
        tools.rule_for("batch_reboot")
    assert caught.value.code is Code.SCHEMA_NOT_REVIEWED
    assert tools.is_disruptive("batch_reboot", {"device_ids": ["19012341234"]})


def test_a_lowered_max_targets_is_enforced_even_where_the_schema_admits_more(tmp_path: Path) -> None:
    base = Path(__file__).parent / "policy_cases" / "valid_tool_policy.yaml"
    widened = tmp_path / "tool_policy.yaml"
    widened.write_text(
        base.read_text(encoding="utf-8")
        .replace("    max_targets: 1\n", "    max_targets: 2\n", 1)
        .replace("          maxItems: 1\n", "          maxItems: 2\n", 1),
        encoding="utf-8",
    )
    assert load_tool_policy(widened).propose["batch_reboot"].max_targets == 2
    narrowed = load_tool_policy(
        widened, override=write(tmp_path, "propose: {batch_reboot: {max_targets: 1}}\n")
    )
    rule = narrowed.propose["batch_reboot"]
    with pytest.raises(ArgumentsError) as caught:
        rule.validate({"device_ids": ["19012341234", "19012341235"]})
    assert caught.value.code is Code.TOO_MANY_TARGETS


def test_an_override_may_not_turn_observe_into_propose(repo_root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "policy"
    shutil.copytree(repo_root / "policy", folder)
    text = (folder / "policy.yaml").read_text(encoding="utf-8")
    (folder / "policy.yaml").write_text(
        text.replace("autonomy: propose", "autonomy: observe"), encoding="utf-8"
    )
    override = write(tmp_path, "# widen\nautonomy: propose\n")
    with pytest.raises(PolicyError, match="widens observe to propose") as caught:
        load_policy(folder / "policy.yaml", override=override)
    assert caught.value.line == 2


def test_an_override_that_repeats_the_base_values_changes_nothing(repo_root: Path, tmp_path: Path) -> None:
    override = write(tmp_path, "autonomy: propose\nlead_minutes: 30\nlimits: {per_hour: 10}\n")
    base = load_policy(repo_root / "policy" / "policy.yaml")
    same = load_policy(repo_root / "policy" / "policy.yaml", override=override)
    assert (same.autonomy, same.lead_minutes, same.limits) == (base.autonomy, base.lead_minutes, base.limits)


def test_an_empty_override_file_changes_nothing(repo_root: Path, tmp_path: Path) -> None:
    override = write(tmp_path, "# nothing to narrow\n")
    base_policy, base_tools = load_policies(repo_root / "policy")
    policy, tools = load_policies(repo_root / "policy", override=override)
    assert policy.limits == base_policy.limits and tools.propose.keys() == base_tools.propose.keys()


def test_loading_one_file_applies_its_half_of_the_override_and_checks_every_key_name(
    repo_root: Path, tmp_path: Path
) -> None:
    override = write(tmp_path, "lead_minutes: 45\nread: [kb_search]\n")
    tools = load_tool_policy(repo_root / "policy" / "tool_policy.yaml", override=override)
    assert tools.read_tools == {"kb_search"} and tools.override == override
    assert load_policy(repo_root / "policy" / "policy.yaml", override=override).lead_minutes == 45
    bad = write(tmp_path, 'sweep_at: "04:00"\n')
    with pytest.raises(PolicyError, match="cannot be set in an override"):
        load_tool_policy(repo_root / "policy" / "tool_policy.yaml", override=bad)


def test_a_missing_override_file_is_refused_not_ignored(repo_root: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policies(repo_root / "policy", override=tmp_path / "absent.yaml")
    assert caught.value.path == tmp_path / "absent.yaml"
