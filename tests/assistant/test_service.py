"""`Assistant.ask` end to end: the real SDK, the stand-in, the lab; answers, fallbacks, budgets,
caching and the audit."""

from __future__ import annotations

import json
import logging

import msgspec
import pytest

from services.assistant.budget import Budget
from services.lab.model_standin import Reply, Text, ToolUse, cached_prefix, say
from shared.wire.approval import RecordAsk
from tests.assistant.helpers import (
    DEVICES,
    ENG101,
    RECORD_CLASSROOM,
    RECORD_ENG101,
    FakeSink,
    error_codes,
    result_payloads,
    sequence,
)


def _calls(*calls: tuple[str, dict], text: str | None = None) -> Reply:
    head = (Text(text),) if text else ()
    return Reply((*head, *(ToolUse(name, arguments) for name, arguments in calls)))


async def test_the_demo_proposes_a_recording_and_a_code_built_line_states_it(standin, make_assistant):
    sink = FakeSink()
    answer = await make_assistant(sink=sink).ask("Which room needs a recording started?")
    (submitted,) = sink.submissions
    assert submitted.tool == "batch_recording" and submitted.arguments == RECORD_CLASSROOM["arguments"]
    assert submitted.proposed_by == "assistant" and submitted.turn_id and sink.writable_calls == 1
    assert answer.answered_by == "model" and answer.language == "en" and answer.code is None
    assert "Sandbox Classroom" in answer.text and "25 min" in answer.text
    assert "ENG 101 Auditorium" in answer.text and "read but not changed" in answer.text
    assert [(p.proposal_id, p.state) for p in answer.proposals] == [("p_1", "waiting_for_approval")]
    assert (
        answer.proposals[0].text
        == "Proposal p_1: start recording in “Sandbox Classroom”: waiting for approval on the approval page."
    )


UNCOVERED = ("kb_search", {"query": "zebra telepathy calibration"})


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("How do I calibrate zebra telepathy on a Pearl?", "Epiphan's documents do not cover this question"),
        (
            "¿Cómo calibro la telepatía de cebras en un Pearl?",
            "Los documentos de Epiphan no cubren esta pregunta",
        ),
    ],
)
async def test_a_knowledge_base_answer_with_low_confidence_says_the_documents_do_not_cover_it(
    standin, make_assistant, question, words
):
    standin.set_script(sequence(_calls(UNCOVERED), say("Epiphan's article says: restart it.")))
    answer = await make_assistant().ask(question)
    (payload,) = result_payloads(standin.requests[1])
    assert payload["low_confidence"] is True and "do not cover" in payload["note"]
    assert words in answer.text


async def test_the_keyword_answer_after_an_uncovered_knowledge_base_search_says_so_too(
    standin, make_assistant
):
    def fail_next(request):
        standin.set_fault("http_500")  # the answer after this read never comes
        return _calls((DEVICES, {}))

    standin.set_script(sequence(_calls(UNCOVERED), fail_next))
    answer = await make_assistant().ask("How do I calibrate zebra telepathy on a Pearl?")
    assert answer.answered_by == "keyword" and answer.code == "model_unavailable"
    assert "Epiphan's documents do not cover this question" in answer.text


async def test_a_confident_knowledge_base_answer_adds_no_such_words(standin, make_assistant):
    standin.set_script(sequence(_calls(("kb_search", {"query": "firmware update"})), say("See the article.")))
    answer = await make_assistant().ask("How do I update a Pearl's firmware?")
    (payload,) = result_payloads(standin.requests[1])
    assert payload["low_confidence"] is False and "note" not in payload
    assert answer.text == "See the article."


async def test_spanish_in_gives_spanish_out(standin, make_assistant):
    answer = await make_assistant().ask("¿Qué sala necesita empezar a grabar?")
    assert answer.language == "es"
    assert "language: es" in standin.requests[0].question()
    assert "Propuse empezar a grabar" in answer.text
    assert answer.proposals[0].text.startswith(
        "Propuesta p_1: empezar a grabar en «Sandbox Classroom»: esperando aprobación"
    )


async def test_the_proposal_line_comes_from_the_recorded_state_not_from_the_model(standin, make_assistant):
    sink = FakeSink()

    def claim(request):
        sink.set_status("p_1", "executed", outcome="unknown")
        return say("Done! I restarted the recording and verified it works.")

    standin.set_script(sequence(_calls((DEVICES, {})), _calls(("propose_change", RECORD_ENG101)), claim))
    answer = await make_assistant(sink=sink).ask("Record ENG 101")
    assert answer.text.startswith("Done!")
    assert [(p.state, p.text) for p in answer.proposals] == [
        (
            "unknown",
            "Proposal p_1: start recording in “ENG 101 Auditorium”: may or may not have run (the outcome is unknown).",
        )
    ]


async def test_the_cached_prompt_prefix_is_byte_identical_across_calls_and_questions(standin, make_assistant):
    assistant = make_assistant()
    await assistant.ask("Which room needs a recording started?")
    await assistant.ask("¿Qué necesita atención?", "es")
    prefixes = {cached_prefix(request.body) for request in standin.requests}
    assert len(standin.requests) == 7 and len(prefixes) == 1 and None not in prefixes
    assert standin.requests[0].body["system"][0]["cache_control"] == {"type": "ephemeral"}
    raw = [json.dumps([r.body["system"], r.body["tools"]], sort_keys=True) for r in standin.requests]
    assert len(set(raw)) == 1


async def test_a_scripted_write_or_invented_tool_reaches_nothing(lab, standin, make_assistant, transport):
    sink = FakeSink()
    standin.set_script(
        sequence(
            _calls(
                ("batch_reboot", {"device_ids": [ENG101]}),
                ("reboot_all_rooms", {}),
                ("get_channel_image", {}),
            ),
            say("ok"),
        )
    )
    answer = await make_assistant(sink=sink).ask("Reboot ENG 101")
    assert error_codes(standin.requests) == ["tool_not_allowed", "unknown_tool", "unknown_tool"]
    assert transport.tool_calls == [] and lab.writes() == [] and sink.submissions == []
    assert answer.text == "ok"


async def test_observe_mode_offers_no_propose_change_and_a_scripted_one_reaches_nothing(
    standin, make_assistant, observe_policies
):
    sink = FakeSink()
    standin.set_script(sequence(_calls((DEVICES, {})), _calls(("propose_change", RECORD_ENG101)), say("ok")))
    await make_assistant(sink=sink, policies=observe_policies).ask("Record ENG 101")
    assert all("propose_change" not in r.tool_names() for r in standin.requests)
    assert error_codes(standin.requests) == ["observe_mode"] and sink.submissions == []


async def test_without_a_fence_propose_change_is_not_offered(standin, make_assistant):
    answer = await make_assistant(fence_configured=False).ask("Record ENG 101")
    assert "propose_change" not in standin.requests[0].tool_names()
    # the change asked for is "Not proposed" for the reason that holds: no fence, not the policy
    assert [line.code for line in answer.refusals] == ["fence_not_configured"], answer.refusals


async def test_in_observe_mode_a_change_asked_for_is_not_proposed_because_the_policy_only_watches(
    standin, make_assistant, observe_policies
):
    standin.set_script(sequence(say("I cannot do that here.")))
    answer = await make_assistant(policies=observe_policies).ask("Record ENG 101")
    assert [line.code for line in answer.refusals] == ["observe_mode"], answer.refusals


async def test_no_key_gives_the_keyword_answer_and_no_proposal(standin, make_assistant):
    sink = FakeSink()
    answer = await make_assistant(model_client=None, sink=sink).ask("¿Qué equipos están desconectados?")
    assert answer.answered_by == "keyword" and answer.language == "es" and answer.code is None
    assert answer.text.splitlines() == [
        "2 salas están desconectadas:",
        '- «ENG 210»: desconectada hace 3 h 00 min; próxima: "ME 240 Thermodynamics" en 1 h 30 min',
        '- «LIB Room 2»: desconectada hace 48 h 00 min; próxima: "Library workshop: citations" en 50 min',
        "",
        "(Respuesta por palabras clave: leída de la flota ahora mismo, sin modelo; nunca propone un cambio.)",
    ]
    assert standin.requests == [] and sink.submissions == []


@pytest.mark.parametrize("fault", ["http_500", "overloaded", "stream_error"])
async def test_an_api_error_gives_the_keyword_answer(standin, make_assistant, fault):
    standin.set_fault(fault)
    answer = await make_assistant().ask("What needs attention?")
    assert answer.answered_by == "keyword" and answer.code == "model_unavailable"
    assert answer.text.startswith("The model could not be used just now.\n\n")
    assert "Fix first:" in answer.text
    assert answer.text.lower().count("keyword answer") == 1, "the keyword answer says so once"


async def test_a_refusal_gives_the_keyword_answer(standin, make_assistant):
    standin.set_script("refuse")
    answer = await make_assistant().ask("is ENG 101 Auditorium ready?")
    assert answer.answered_by == "keyword" and answer.code == "model_unavailable"
    assert "“ENG 101 Auditorium”:\n- online; not recording" in answer.text and "\n- ready\n" in answer.text


async def test_a_model_timeout_gives_the_keyword_answer(standin, make_assistant):
    standin.set_fault("slow", seconds=0.6)
    answer = await make_assistant(call_timeout_seconds=0.2).ask("next events")
    assert answer.answered_by == "keyword" and answer.code == "model_unavailable"
    assert "Classes on now or in the next 24 hours, soonest first:" in answer.text


async def test_a_model_failure_after_a_proposal_expires_that_turns_proposals(standin, make_assistant):
    sink = FakeSink()

    def fail_next(request):
        standin.set_fault("http_500")
        return _calls(("propose_change", RECORD_ENG101))

    standin.set_script(sequence(_calls((DEVICES, {})), fail_next))
    answer = await make_assistant(sink=sink).ask("Record ENG 101")
    assert answer.answered_by == "keyword" and answer.code == "model_unavailable"
    assert sink.expired_turns == [sink.submissions[0].turn_id]
    assert [(p.proposal_id, p.state) for p in answer.proposals] == [("p_1", "expired")]
    assert "Proposals made in this turn were expired." in answer.text


def _forever(request):
    return _calls(("get_device_info", {"device_id": ENG101}), text="Still looking.")


@pytest.mark.parametrize(
    ("budget", "limit"),
    [
        (Budget(model_calls=3), "model_calls"),
        (Budget(tokens=6000), "tokens"),
        (Budget(tool_calls=4), "tool_calls"),
    ],
)
async def test_a_spent_budget_ends_the_turn_with_what_was_learned_and_expires_its_proposals(
    standin, make_assistant, budget, limit
):
    sink = FakeSink()
    standin.set_script(sequence(_calls((DEVICES, {}), ("propose_change", RECORD_ENG101)), *[_forever] * 30))
    answer = await make_assistant(sink=sink, budget=budget).ask("Keep checking ENG 101")
    assert answer.code == "budget_exceeded" and answer.answered_by == "model"
    assert answer.text.startswith(f"I stopped because this question's budget ({limit}) was spent")
    assert "Still looking." in answer.text
    assert [p.state for p in answer.proposals] == ["expired"]
    assert len(standin.requests) < 12


async def test_a_slow_model_past_the_wall_budget_ends_the_turn_with_the_keyword_facts(
    standin, make_assistant
):
    standin.set_fault("slow", seconds=0.6)
    answer = await make_assistant(budget=Budget(wall_seconds=0.3)).ask("What needs attention?")
    assert answer.code == "budget_exceeded"
    assert answer.text.startswith("I stopped because this question's budget (wall_seconds) was spent")
    assert "Fix first:" in answer.text


async def test_the_ask_record_keeps_counts_only_and_goes_to_the_sink_not_a_store(standin, make_assistant):
    sink = FakeSink()
    question = "Which room needs a recording started? My secret note: blue-falcon-42"
    answer = await make_assistant(sink=sink).ask(question)
    ((record,),) = [[r for r in sink.records if isinstance(r, RecordAsk)]]
    detail = msgspec.to_builtins(record)
    detail_json = json.dumps(detail)
    assert detail["op"] == "record_ask" and record.turn_id.startswith("t_")
    assert detail["question_chars"] == len(question) and record.proposal_ids == ("p_1",)
    assert detail["model_calls"] == 4 and detail["outcome"] == "end_turn"
    assert detail["tools"] == {
        DEVICES: 1,
        "get_current_or_next_cms_events_for_devices": 1,
        "list_writable_devices": 1,
        "propose_change": 1,
    }
    assert detail["tokens"]["input"] > 0 and detail["tokens"]["cache_read"] > 0
    assert "blue-falcon" not in detail_json and "Auditorium" not in detail_json and "ENG" not in detail_json
    assert "Sandbox" not in detail_json and "Classroom" not in detail_json
    assert set(detail) == {"op", *RecordAsk.__struct_fields__}  # no field has room for text
    assert answer.proposals


async def test_log_lines_carry_no_fleet_names(standin, make_assistant, caplog):
    caplog.set_level(logging.DEBUG)
    standin.set_script(
        sequence(_calls((DEVICES, {})), _calls(("no_such_tool", {"room": "SCI 101 Lecture Hall"})))
    )
    standin.set_fault("http_500", count=1)
    await make_assistant().ask("What needs attention in SCI 101 Lecture Hall?")
    await make_assistant().ask("What needs attention?")
    text = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("services.assistant"))
    assert "model unavailable" in text
    for name in ("SCI 101", "Lecture Hall", "ENG 210", "LIB Room 2"):
        assert name not in text
