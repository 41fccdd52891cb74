"""A propose rule's ``approvers:`` (two distinct people) and the ``min_read_seconds`` limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.policy.loader import PolicyError, load_policies, load_tool_policy


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_policy_asks_two_people_for_a_firmware_update_and_one_for_a_reboot(
    repo_root: Path,
) -> None:
    policy, tools = load_policies(repo_root / "policy")
    assert tools.propose["batch_firmware_update"].approvers == 2
    assert tools.propose["batch_reboot"].approvers == 1
    assert policy.limits.min_read_seconds == 3


def test_an_override_may_raise_approvers_to_two_but_never_lower_them(repo_root: Path, tmp_path: Path) -> None:
    raised = write(tmp_path, "up.yaml", "propose: {batch_reboot: {approvers: 2}}\n")
    assert (
        load_tool_policy(repo_root / "policy" / "tool_policy.yaml", override=raised)
        .propose["batch_reboot"]
        .approvers
        == 2
    )
    lowered = write(tmp_path, "down.yaml", "propose: {batch_firmware_update: {approvers: 1}}\n")
    with pytest.raises(PolicyError):
        load_tool_policy(repo_root / "policy" / "tool_policy.yaml", override=lowered)
    three = write(tmp_path, "three.yaml", "propose: {batch_reboot: {approvers: 3}}\n")
    with pytest.raises(PolicyError):
        load_tool_policy(repo_root / "policy" / "tool_policy.yaml", override=three)


def test_a_rule_may_not_ask_for_more_than_two_people_or_none(repo_root: Path, tmp_path: Path) -> None:
    text = (repo_root / "policy" / "tool_policy.yaml").read_text(encoding="utf-8")
    for bad in ("0", "3"):
        path = write(tmp_path, f"tool_policy_{bad}.yaml", text.replace("approvers: 2", f"approvers: {bad}"))
        with pytest.raises(PolicyError):
            load_tool_policy(path)


def test_an_override_may_raise_the_reading_time_but_not_lower_it(repo_root: Path, tmp_path: Path) -> None:
    raised = write(tmp_path, "up.yaml", "limits: {min_read_seconds: 5}\n")
    policy, _ = load_policies(repo_root / "policy", override=raised)
    assert policy.limits.min_read_seconds == 5
    lowered = write(tmp_path, "down.yaml", "limits: {min_read_seconds: 1}\n")
    with pytest.raises(PolicyError):
        load_policies(repo_root / "policy", override=lowered)
