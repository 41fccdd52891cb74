"""The assistant against each Anthropic-compatible server the lab's stand-in reproduces
(`services.lab.model_standin.PROFILES`): one test per deviation, through the real SDK, the real
loop and the campus lab. The loop decides by content blocks, never by ``stop_reason``; a
malformed, merged or split tool call runs nothing and the turn says so in words; every server
error is one code; ``tool_choice`` and ``count_tokens`` are never used. Then the demo model's
answers under every profile, judged against the lab's state."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from services.lab.model_standin import PROFILES, Reply, ToolUse, call, say
from shared.errors import Code
from tests.assistant.helpers import RECORD_CLASSROOM, SANDBOX_CLASSROOM, FakeSink, last_tool_results, sequence
from tests.assistant.judge import Truth, judge_proposal, judge_room_status, judge_rooms

DEVICES = "get_devices_in_my_team"
RECORDER = "get_recorder_status_for_devices"
PROPOSE_LONG = {**RECORD_CLASSROOM, "reason": "The class starts soon and the room is not recording."}
"""Longer than one ``input_json_delta`` fragment, as every real proposal is."""
TWO_READS = Reply((ToolUse(DEVICES, {}), ToolUse(RECORDER, {"device_ids": ["19012340101"]})))
BAD_CALL_WORDS = {
    "en": "tool call came malformed",
    "es": "llegó mal formada",
}


def _fails_closed(answer, sink: FakeSink, transport, language: str = "en") -> None:
    assert answer.code == Code.MODEL_BAD_TOOL_CALL and answer.answered_by == "model", answer
    assert BAD_CALL_WORDS[language] in answer.text, answer.text
    assert transport.tool_calls == [] and sink.submissions == [] and answer.proposals == ()


async def test_a_tool_call_that_ends_with_end_turn_after_an_empty_text_block_runs_and_the_mismatch_is_logged(
    standin, make_assistant, transport, caplog
):
    caplog.set_level(logging.WARNING, logger="services.assistant.loop")
    standin.set_profile("ollama")
    standin.set_script(sequence(call(DEVICES), say("I read the fleet.")))
    answer = await make_assistant().ask("How many rooms are there?")
    assert transport.tool_calls == [DEVICES] and answer.text == "I read the fleet."
    assert standin.requests[0].body.get("stream") and len(standin.requests) == 2
    assert any("'end_turn' with 1 tool_use block(s)" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(("profile", "language"), [("litellm", "en"), ("litellm", "es"), ("vllm", "en")])
async def test_parallel_calls_merged_into_one_block_or_split_under_one_id_run_nothing_and_say_so(
    standin, make_assistant, transport, profile, language
):
    standin.set_profile(profile)
    standin.set_script(sequence(TWO_READS, say("done")))
    sink = FakeSink()
    question = "¿Cuántas salas graban?" if language == "es" else "How many rooms record?"
    answer = await make_assistant(sink=sink).ask(question)
    _fails_closed(answer, sink, transport, language)
    assert len(standin.requests) == 1  # the malformed answer was the last: nothing echoed back


@pytest.mark.parametrize(
    ("profile", "question", "language"),
    [
        ("sglang", "Start recording in Sandbox Classroom", "en"),  # input_json_delta fragments dropped
        ("llamacpp", "Empieza a grabar en Sandbox Classroom", "es"),  # the call streamed as text
    ],
)
async def test_a_call_with_dropped_fragments_or_streamed_as_text_never_becomes_a_proposal_nor_the_answer(
    standin, make_assistant, transport, profile, question, language
):
    standin.set_profile(profile)
    standin.set_script(sequence(call("propose_change", PROPOSE_LONG), say("I proposed it.")))
    sink = FakeSink()
    answer = await make_assistant(sink=sink).ask(question)
    _fails_closed(answer, sink, transport, language)
    assert '"arguments"' not in answer.text and "Sandbox" not in answer.text


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("fault", ["stream_error", "http_500", "overloaded"])
async def test_every_server_error_under_every_profile_is_one_code_and_the_keyword_answer(
    standin, make_assistant, profile, fault
):
    standin.set_profile(profile)
    standin.set_fault(fault)
    answer = await make_assistant().ask("which rooms are offline?")
    assert answer.answered_by == "keyword" and answer.code == Code.MODEL_UNAVAILABLE, answer


@pytest.mark.parametrize("profile", ["ollama", "vllm"])
async def test_the_assistant_never_sends_tool_choice_nor_counts_tokens(standin, make_assistant, profile):
    standin.set_profile(profile)  # both refuse tool_choice with 400; neither serves count_tokens
    answer = await make_assistant().ask("which rooms are offline?")
    assert answer.answered_by == "model" and answer.code is None, answer
    assert all("tool_choice" not in r.body for r in standin.requests) and standin.standin.counted == 0


# --- the demo model under every profile ---------------------------------------------------------

FAILS_CLOSED = {
    "llamacpp": {"recording", "room", "change"},  # every tool call is streamed as text
    "sglang": {"recording", "room", "change"},  # an input longer than one fragment loses some
    "vllm": {"room", "change"},  # their first turn makes two calls: split under one id
    "litellm": {"room", "change"},  # their first turn makes two calls: merged into one block
}
"""Which of the three questions fail closed under each profile, and why: the deviation makes a
demo model's call malformed. Every other answer is judged against the lab, as under
``anthropic``; ``ollama``'s deviations (``end_turn``, an empty text block, no ``tool_choice``,
no ``count_tokens``, no key check) are all survived."""


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_the_demo_model_answers_the_same_under_every_profile_or_fails_closed_in_words(
    lab, standin, make_assistant, profile
):
    standin.set_profile(profile)
    sink = FakeSink()
    truth = Truth.of(lab)
    arguments = {"action": "start", "device_ids": [f"{SANDBOX_CLASSROOM}-1"]}
    asked = {
        "recording": ("Which rooms are recording right now?", "en"),
        "room": ("¿Cómo está el Aula Magna?", "es"),
        "change": ("Start recording in Sandbox Classroom", "en"),
    }
    for name, (question, language) in asked.items():
        before = len(sink.submissions)
        answer = await make_assistant(sink=sink).ask(question)
        proposed = [(s.tool, dict(s.arguments)) for s in sink.submissions[before:]]
        if name in FAILS_CLOSED.get(profile, ()):
            assert answer.code == Code.MODEL_BAD_TOOL_CALL and BAD_CALL_WORDS[language] in answer.text
            assert proposed == [], proposed
        elif name == "recording":
            assert judge_rooms(answer.text, truth, truth.recording()).ok, answer.text
        elif name == "room":
            assert judge_room_status(answer.text, truth, "Aula Magna", "es").ok, answer.text
        else:
            assert judge_proposal(proposed, "batch_recording", arguments).ok, (proposed, answer.text)


# --- fewer tools per turn (policy: model_tools: per_question) ----------------------------------


@pytest.fixture
def per_question(policies):
    policy, tool_policy = policies
    return dataclasses.replace(policy, model_tools="per_question"), tool_policy


async def test_per_question_offers_only_the_kinds_tools_and_the_demo_answer_stays_right(
    lab, standin, make_assistant, per_question
):
    standin.set_profile("ollama")
    answer = await make_assistant(policies=per_question).ask("Which rooms are offline?")
    truth = Truth.of(lab)
    assert judge_rooms(answer.text, truth, truth.offline()).ok, answer.text
    offered = {r.tool_names() for r in standin.requests}
    assert offered == {
        frozenset(
            {"ask_operator", DEVICES, "get_current_or_next_cms_events_for_devices", "get_proposal_state"}
        )
    }
    full = await make_assistant().ask("Which rooms are offline?")
    assert len(standin.requests[-1].tools) > 15 and full.text == answer.text


async def test_per_question_a_tool_not_offered_reaches_nothing(
    standin, make_assistant, transport, per_question
):
    standin.set_script(
        sequence(call("get_storage_status_for_devices", {"device_ids": ["19012340101"]}), say("ok"))
    )
    await make_assistant(policies=per_question).ask("Which rooms are offline?")
    assert transport.tool_calls == []
    (result,) = last_tool_results(standin.requests[1])
    assert result.is_error and "unknown_tool" in result.text
