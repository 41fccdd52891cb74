"""``fleetwatch`` admin commands: argument parsing and output (pure), then each command end to
end through the real approval.sock of a running approval_web (``main`` called in-process)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from services.ctl.commands_admin import parse_arg_values, render_detail, render_status
from services.ctl.main import EPILOG, build_parser
from shared.errors import Code, FleetwatchError
from shared.wire.approval import DenialPause, ProposalDetail, ProposalSummary, Status
from tests.approval_web.helpers import SANDBOX_DEVICES

A, B, C = SANDBOX_DEVICES
ADMIN_COMMANDS = [
    ["pending", "list"],
    ["pending", "show", "p-1"],
    ["deny", "p-1"],
    ["deny-all"],
    ["pause"],
    ["resume"],
    ["audit", "tail"],
    ["audit", "verify"],
    ["status"],
    ["propose", "batch_reboot", "--reason", "r"],
]


# --- parsing and help ---------------------------------------------------------------------------------


def test_an_argument_value_is_json_when_it_parses_as_json_and_text_otherwise() -> None:
    parsed = parse_arg_values(
        ['device_ids=["29088800001"]', "action=start", "count=7", 'quoted="7"', "flag=true"]
    )
    assert parsed == {
        "device_ids": ["29088800001"],
        "action": "start",
        "count": 7,
        "quoted": "7",
        "flag": True,
    }
    assert parse_arg_values(["empty=", "eq=a=b"]) == {"empty": "", "eq": "a=b"}


@pytest.mark.parametrize(
    ("pairs", "code"),
    [
        (["no-equals-sign"], Code.INVALID_ARGUMENTS),
        (["=value"], Code.INVALID_ARGUMENTS),
        (["a=1", "a=2"], Code.INVALID_ARGUMENTS),
        (["delay=1.5"], Code.NOT_CANONICALIZABLE),
        (['x={"k": 1, "k": 2}'], Code.NOT_CANONICALIZABLE),
    ],
)
def test_a_malformed_argument_is_a_user_error_with_a_code(pairs: list[str], code: Code) -> None:
    with pytest.raises(FleetwatchError) as caught:
        parse_arg_values(pairs)
    assert caught.value.code is code


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for sub in subs for child in sub.choices.values() for leaf in _leaf_parsers(child)]


def test_every_admin_command_takes_json_and_its_help_says_no_command_approves() -> None:
    parser = build_parser()
    for argv in ADMIN_COMMANDS:
        args = parser.parse_args([*argv, "--json"])
        assert args.json is True and callable(args.run)
    admin = {"pending", "deny", "deny-all", "pause", "resume", "audit", "status", "propose"}
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in admin:
        for leaf in _leaf_parsers(top.choices[name]):
            assert leaf.epilog == EPILOG, leaf.prog
            assert "No command approves a change" in leaf.format_help()
    assert not any("approve" == name for name in top.choices)


# --- output ----------------------------------------------------------------------------------------------


def _detail(**changes: Any) -> ProposalDetail:
    summary = ProposalSummary(
        proposal_id="p-0123456789ab",
        tool="batch_reboot",
        targets=(A,),
        created_at="2026-03-02T10:00:00.000Z",
        expires_at="2026-03-02T10:05:00.000Z",
        proposed_by="assistant",
        status="pending",
    )
    fields: dict[str, Any] = {
        "summary": summary,
        "arguments": {"device_ids": [A]},
        "reason": "The room \u202eis frozen\nline two",
        "fingerprint_hash": "ab" * 32,
        "schema_version": 1,
        "age_seconds": 12,
        "expires_in_seconds": 288,
    }
    fields.update(changes)
    return ProposalDetail(**fields)


def test_pending_show_lists_every_argument_times_fingerprint_author_and_marks_hidden_characters() -> None:
    text = render_detail(_detail())
    for expected in (
        "batch_reboot",
        f'device_ids = ["{A}"]',
        "12 s ago",
        "in 288 s",
        "ab" * 32,
        "Proposed by:   assistant",
        "not checked",
        "⟦U+202E⟧is frozen",
        "line two",
    ):
        assert expected in text, expected
    assert "\u202e" not in text


def test_pending_show_reports_an_unknown_outcome_and_a_refusal_in_words() -> None:
    unknown = render_detail(_detail(outcome="unknown", verification=None, expires_in_seconds=None))
    assert "Outcome:       unknown" in unknown and "none recorded" in unknown and "Expires" not in unknown
    refused = render_detail(_detail(outcome="refused", refusal_code="kill_switch_on"))
    assert "kill_switch_on: nothing ran" in refused


def test_status_names_the_queue_the_caps_the_pauses_and_a_missing_fence() -> None:
    status = Status(
        pending=3,
        max_pending=3,
        last_hour=4,
        per_hour=10,
        kill_switch=True,
        executor_up=False,
        fence_configured=False,
        autonomy="propose",
        pauses=(
            DenialPause(
                tool="batch_reboot",
                target=A,
                until="2026-03-02T11:00:00.000Z",
                target_name="Pearl Two",
                denials=3,
            ),
        ),
    )
    text = render_status(status)
    for expected in (
        "3 of 3 pending",
        "4 of 10",
        f"Paused:       reboot (batch_reboot) in Pearl Two ({A}) is paused until 2026-03-02T11:00:00.000Z (UTC), "
        "after 3 denials",
        f"lift it: fleetwatch resume --denials batch_reboot {A}",
        "ON",
        "not answering",
        "NOT configured",
    ):
        assert expected in text, expected
