"""shared.policy.schema: judging arguments against a reviewed schema."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from shared import ids
from shared.policy.schema import ArgumentsValidator, argument_problems

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["action", "device_ids"],
    "properties": {
        "action": {"type": "string", "enum": ["start", "stop"]},
        "device_ids": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": ids.CHANNEL_ID},
        },
    },
}


def test_a_pattern_must_match_the_whole_text_where_plain_json_schema_would_let_a_newline_through() -> None:
    arguments = {"action": "start", "device_ids": ["19012341234-1\n"]}
    assert Draft202012Validator(SCHEMA).is_valid(arguments)  # the trap
    problems = argument_problems(ArgumentsValidator(SCHEMA), arguments)
    assert [(p.path, p.message) for p in problems] == [
        ("$.device_ids[0]", "must be a channel ID (<master ID>-<1..999>)")
    ]


def test_every_problem_is_listed_by_its_json_path_in_order() -> None:
    problems = argument_problems(
        ArgumentsValidator(SCHEMA), {"action": "go", "device_ids": ["x", "x"], "extra": 1}
    )
    assert [p.path for p in problems] == [
        "$",
        "$.action",
        "$.device_ids",
        "$.device_ids",
        "$.device_ids[0]",
        "$.device_ids[1]",
    ]
    messages = {p.message for p in problems}
    assert "unexpected argument(s) 'extra'" in messages
    assert "must be one of: start, stop" in messages
    assert "must hold at most 1 item(s)" in messages
    assert "must not repeat an item" in messages


def test_missing_arguments_are_named() -> None:
    problems = argument_problems(ArgumentsValidator(SCHEMA), {})
    assert [(p.path, p.message) for p in problems] == [("$", "missing action, device_ids")]


def test_arguments_that_fit_have_no_problems() -> None:
    assert (
        argument_problems(ArgumentsValidator(SCHEMA), {"action": "stop", "device_ids": ["19012341234-3"]})
        == ()
    )


def test_a_value_of_the_wrong_type_is_told_the_shape_it_needs() -> None:
    problems = argument_problems(
        ArgumentsValidator(SCHEMA), {"action": ["start"], "device_ids": "19012341234-1"}
    )
    assert [(p.path, p.message) for p in problems] == [
        ("$.action", "must be one of: start, stop"),
        ("$.action", "must be text"),
        ("$.device_ids", "must be a JSON list, each item a channel ID (<master ID>-<1..999>)"),
    ]


def test_a_misspelt_argument_name_is_told_the_closest_one() -> None:
    problems = argument_problems(ArgumentsValidator(SCHEMA), {"action": "start", "device_id": ["x"]})
    messages = [p.message for p in problems if p.path == "$"]
    assert "unexpected argument(s) 'device_id'; did you mean device_ids?" in messages
