"""Words, not codes: every code an answer can meet has a sentence in English and Spanish, no
answer text or code-built line holds a raw snake_case code or tool name whatever the intake
refuses with, and each code reaches the model under the tool group its manifest entry names."""

from __future__ import annotations

from typing import Any

import pytest

from services.assistant.manifest import TOOL_OPERATIONS, TOOL_PREFIX, all_codes
from services.lab.model_standin import Reply, ToolUse, say
from shared.errors import Code, FleetwatchError
from shared.text.catalogue import keyed
from shared.text.change_words import SNAKE_CASE, why
from shared.wire.assistant import Answer
from tests.assistant.helpers import (
    DEVICES,
    ENG101,
    RECORD_ENG101,
    FakeSink,
    blocks_in,
    last_tool_results,
    sequence,
)

PROPOSE_CODES = sorted(next(op.codes for op in TOOL_OPERATIONS if op.name == f"{TOOL_PREFIX}propose_change"))
GROUPS = {op.name.removeprefix(TOOL_PREFIX): op.codes for op in TOOL_OPERATIONS}


def _calls(*calls: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(tuple(ToolUse(name, arguments) for name, arguments in calls))


def texts(answer: Answer) -> list[str]:
    """Every text of an answer a person reads."""
    return [answer.text, *(p.text for p in answer.proposals), *(r.text for r in answer.refusals)]


@pytest.mark.parametrize("code", sorted(all_codes()))
def test_every_code_an_answer_can_meet_has_a_sentence_in_both_languages_without_a_code(code: Code) -> None:
    english, spanish = why(code, "en"), why(code, "es")  # the one catalogue's English and Spanish
    assert keyed("why", code) is not None and english and spanish and english != spanish
    for words in (why(code, "en"), why(code, "es")):
        assert SNAKE_CASE.findall(words) == [], words
        assert str(code) not in words


@pytest.mark.parametrize("code", PROPOSE_CODES)
async def test_no_answer_text_holds_a_code_or_a_tool_name_whatever_the_intake_refuses_with(
    standin, make_assistant, code: Code
) -> None:
    answer = await make_assistant(sink=FakeSink(refuse_with=str(code))).ask(
        "Start recording in Sandbox Classroom"
    )
    assert [r.code for r in answer.refusals] == [code]
    (refusal,) = answer.refusals
    assert refusal.text.startswith("Not proposed: start recording in Sandbox Classroom: ")
    for text in texts(answer):
        assert SNAKE_CASE.findall(text) == [], text
    spanish = await make_assistant(sink=FakeSink(refuse_with=str(code))).ask(
        "Empieza a grabar en Sandbox Classroom"
    )
    assert spanish.refusals[0].text.startswith("No se propuso: empezar a grabar en Sandbox Classroom: ")
    assert [SNAKE_CASE.findall(text) for text in texts(spanish)] == [[]] * len(texts(spanish))


BLANK_QUESTION = ("ask_operator", {"question": " "})
SCENARIOS: list[tuple[str, str, Code, dict[str, Any], tuple[Reply, ...]]] = [
    ("a failed read", "read", Code.EPIPHAN_TOOL_ERROR, {"fault": "get_device_info"},
     (_calls(("get_device_info", {"device_id": ENG101})),)),
    ("a refused writable list", "list_writable_devices", Code.DEVICE_LIST_UNREADABLE,
     {"writable": Code.DEVICE_LIST_UNREADABLE}, (_calls(("list_writable_devices", {})),)),
    ("an intake refusal", "propose_change", Code.TARGET_BUSY, {"refuse": Code.TARGET_BUSY},
     (_calls((DEVICES, {}), ("propose_change", RECORD_ENG101)),)),
    ("a session block", "propose_change", Code.FSM_BLOCKED, {}, (_calls(("propose_change", RECORD_ENG101)),)),
    ("an unknown proposal", "get_proposal_state", Code.PROPOSAL_NOT_FOUND, {},
     (_calls(("get_proposal_state", {"proposal_id": "p-000000000000"})),)),
    ("a blank question", "ask_operator", Code.INVALID_ARGUMENTS, {}, (_calls(BLANK_QUESTION),)),
    ("a write tool", "not_offered", Code.TOOL_NOT_ALLOWED, {}, (_calls(("batch_reboot", {"device_ids": [ENG101]})),)),
    ("an invented tool", "not_offered", Code.UNKNOWN_TOOL, {}, (_calls(("frobnicate", {})),)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "group", "code", "setup", "replies"), SCENARIOS, ids=[s[0] for s in SCENARIOS]
)
async def test_each_code_reaches_the_model_under_the_tool_group_its_manifest_entry_names(
    lab, standin, make_assistant, what, group, code, setup, replies
) -> None:
    sink = FakeSink(refuse_with=setup.get("refuse"))
    if "writable" in setup:
        sink.writable_reply = FleetwatchError(setup["writable"], "refused")
    if "fault" in setup:
        lab.set_fault(setup["fault"], "error")
    standin.set_script(sequence(*replies, say("done")))
    await make_assistant(sink=sink).ask("Check ENG 101")
    seen = [
        payload["error"]["code"]
        for request in standin.requests
        for result in last_tool_results(request)
        for payload in blocks_in(result.text)
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict)
    ]
    assert code in seen, (what, seen)
    assert code in GROUPS[group], f"{code} reaches the model from {group} but is not declared there"
