"""The assistant's own pre-check of propose_change: the policy's code, nothing sent."""

from __future__ import annotations

import pytest

from services.assistant.proposals import check_proposal
from shared.errors import FleetwatchError

CHANNEL = "29088800001-1"
MASTER = "29088800001"


def _input(tool="batch_recording", arguments=None, reason="the class starts soon", **extra):
    return {
        "tool": tool,
        "arguments": {"action": "start", "device_ids": [CHANNEL]} if arguments is None else arguments,
        "reason": reason,
        **extra,
    }


REFUSALS = [
    ("not proposable (stream keys)", _input("create_stream_endpoint", {"name": "x"}), "not_proposable"),
    ("a read tool", _input("get_devices_in_my_team", {}), "not_proposable"),
    ("an invented tool", _input("reboot_everything", {}), "not_proposable"),
    (
        "pending schema review",
        _input("switch_device_to_cms", {"device_id": MASTER, "cms": "panopto"}),
        "schema_not_reviewed",
    ),
    ("bad action", _input(arguments={"action": "restart", "device_ids": [CHANNEL]}), "invalid_arguments"),
    ("missing field", _input(arguments={"device_ids": [CHANNEL]}), "invalid_arguments"),
    (
        "extra field",
        _input(arguments={"action": "start", "device_ids": [CHANNEL], "force": True}),
        "invalid_arguments",
    ),
    (
        "name instead of ID",
        _input(arguments={"action": "start", "device_ids": ["Sandbox Pearl-2"]}),
        "invalid_arguments",
    ),
    (
        "master ID where a channel ID goes",
        _input(arguments={"action": "start", "device_ids": [MASTER]}),
        "invalid_arguments",
    ),
    (
        "channel ID where a master ID goes",
        _input("batch_reboot", {"device_ids": [CHANNEL]}),
        "invalid_arguments",
    ),
    ("trailing whitespace", _input("batch_reboot", {"device_ids": [MASTER + " "]}), "invalid_arguments"),
    ("trailing newline", _input("batch_reboot", {"device_ids": [MASTER + "\n"]}), "hidden_character"),
    ("upper-case ID", _input("batch_reboot", {"device_ids": ["2908880000A"]}), "invalid_arguments"),
    ("over max targets", _input("batch_reboot", {"device_ids": [MASTER, "29088800002"]}), "too_many_targets"),
    (
        "bidi character in an ID",
        _input("batch_reboot", {"device_ids": ["\u202e" + MASTER]}),
        "hidden_character",
    ),
    ("a float argument", _input("batch_reboot", {"device_ids": [MASTER], "n": 1.5}), "not_canonicalizable"),
    ("arguments not an object", _input(arguments=[CHANNEL]), "invalid_arguments"),
    ("blank reason", _input(reason="  "), "invalid_arguments"),
    ("an extra top-level field", _input(urgent=True), "invalid_arguments"),
    ("missing reason", {"tool": "batch_reboot", "arguments": {"device_ids": [MASTER]}}, "invalid_arguments"),
]


@pytest.mark.parametrize(("case", "tool_input", "code"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_bad_proposal_is_refused_with_a_stable_code(policies, case, tool_input, code):
    with pytest.raises(FleetwatchError) as refused:
        check_proposal(tool_input, policies[1])
    assert refused.value.code == code


def test_a_target_off_the_allowlist_is_refused_when_the_allowlist_is_set(policies):
    with pytest.raises(FleetwatchError) as refused:
        check_proposal(_input(), policies[1], allowlist=("29088800002",))
    assert refused.value.code == "target_not_allowlisted"
    assert check_proposal(_input(), policies[1], allowlist=(MASTER,)).targets == (MASTER,)


def test_a_good_proposal_is_canonical_and_identical_ones_share_a_key(policies):
    one = check_proposal(_input(), policies[1])
    two = check_proposal(
        _input(arguments={"device_ids": [CHANNEL], "action": "start"}, reason="other words"), policies[1]
    )
    assert one.tool == "batch_recording" and one.targets == (MASTER,)
    assert one.key == two.key
    assert (
        one.key
        != check_proposal(_input(arguments={"action": "stop", "device_ids": [CHANNEL]}), policies[1]).key
    )
