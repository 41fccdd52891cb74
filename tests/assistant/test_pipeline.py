"""The three phases of a provider turn, observed through the real SDK, the stand-in and the lab."""

from __future__ import annotations

import time

from services.lab.model_standin import Reply, Text, ToolUse, say
from shared.errors import Code, FleetwatchError
from tests.assistant.helpers import (
    DEVICES,
    ENG101,
    RECORD_CLASSROOM,
    RECORD_ENG101,
    SANDBOX_CLASSROOM,
    FakeSink,
    TrackingReader,
    blocks_in,
    error_codes,
    last_tool_results,
    result_payloads,
    sequence,
)


def _batch(*calls: tuple[str, dict]) -> Reply:
    return Reply(tuple(ToolUse(name, arguments) for name, arguments in calls))


async def test_eight_parallel_reads_run_at_most_four_at_a_time_on_a_slow_lab(
    lab, standin, reader, make_assistant
):
    reads = [("get_device_info", {"device_id": f"1901234010{n}"}) for n in range(1, 8)] + [(DEVICES, {})]
    standin.set_script(sequence(_batch(*reads), say("done")))
    tracking = TrackingReader(reader)
    assistant = make_assistant(reader=tracking)
    await assistant.ask("warm up the connection")  # first MCP session setup is not part of the measure
    tracking.max_in_flight = 0
    standin.set_script(sequence(_batch(*reads), say("done")))
    lab.set_fault("*", "latency", seconds=0.2)
    started = time.monotonic()
    answer = await assistant.ask("How are the science rooms?")
    elapsed = time.monotonic() - started
    assert answer.answered_by == "model" and answer.text == "done"
    assert tracking.max_in_flight == 4
    assert 0.4 <= elapsed < 1.2, elapsed  # two lab round trips, not one and not eight
    assert len(result_payloads(standin.requests[-1])) == 8


async def test_a_read_and_a_proposal_in_one_batch_run_in_order_so_the_read_resolves_the_target(
    standin, reader, make_assistant
):
    sink = FakeSink()
    tracking = TrackingReader(reader)
    standin.set_script(sequence(_batch((DEVICES, {}), ("propose_change", RECORD_ENG101)), say("proposed")))
    answer = await make_assistant(reader=tracking, sink=sink).ask("Record ENG 101")
    assert tracking.started == [DEVICES] and tracking.max_in_flight == 1
    assert [s.arguments for s in sink.submissions] == [RECORD_ENG101["arguments"]]
    assert [p.state for p in answer.proposals] == ["waiting_for_approval"]


async def test_a_proposal_before_the_read_in_the_same_batch_is_blocked(standin, reader, make_assistant):
    sink = FakeSink()
    standin.set_script(sequence(_batch(("propose_change", RECORD_ENG101), (DEVICES, {})), say("ok")))
    answer = await make_assistant(sink=sink).ask("Record ENG 101")
    assert sink.submissions == [] and answer.proposals == ()
    assert error_codes(standin.requests) == ["fsm_blocked"]


WRITABLE = ("list_writable_devices", {})


async def test_the_writable_list_comes_from_the_sink_as_data_and_resolves_its_devices(
    standin, reader, make_assistant
):
    sink = FakeSink()
    tracking = TrackingReader(reader)
    standin.set_script(
        sequence(_batch(WRITABLE), _batch(("propose_change", RECORD_CLASSROOM)), say("proposed"))
    )
    answer = await make_assistant(reader=tracking, sink=sink).ask("Record the classroom")
    assert sink.writable_calls == 1 and tracking.started == []
    (listing,) = result_payloads(standin.requests[1])
    assert listing["devices"][0]["device_id"] == SANDBOX_CLASSROOM and "not changed" in listing["note"]
    assert [s.arguments for s in sink.submissions] == [RECORD_CLASSROOM["arguments"]]
    assert [p.state for p in answer.proposals] == ["waiting_for_approval"]


async def test_a_refused_writable_list_resolves_nothing_and_reaches_the_model_as_its_code(
    standin, make_assistant
):
    sink = FakeSink(writable_reply=FleetwatchError(Code.NO_SIGN_IN, "no sandbox sign-in"))
    standin.set_script(
        sequence(_batch(WRITABLE), _batch(("propose_change", RECORD_CLASSROOM)), say("could not"))
    )
    answer = await make_assistant(sink=sink).ask("Record the classroom")
    assert error_codes(standin.requests) == ["no_sign_in", "fsm_blocked"]
    assert sink.submissions == [] and answer.proposals == ()


async def test_without_proposals_the_writable_list_is_not_offered_and_never_asked_for(
    standin, make_assistant, observe_policies
):
    sink = FakeSink()
    standin.set_script(sequence(_batch(WRITABLE), say("ok")))
    await make_assistant(sink=sink, policies=observe_policies).ask("What can you change?")
    assert "list_writable_devices" not in {t["name"] for t in standin.requests[0].tools}
    assert error_codes(standin.requests) == ["observe_mode"] and sink.writable_calls == 0


async def test_a_question_to_the_operator_never_runs_beside_other_tools(standin, reader, make_assistant):
    tracking = TrackingReader(reader)
    batch = _batch(
        ("get_device_info", {"device_id": ENG101}),
        ("ask_operator", {"question": "Which room do you mean?"}),
        ("get_device_info", {"device_id": "19012340101"}),
    )
    standin.set_script(sequence(batch, say("never reached")))
    answer = await make_assistant(reader=tracking).ask("Fix the room")
    assert tracking.started == ["get_device_info"] and tracking.max_in_flight == 1
    assert answer.text.endswith("The assistant asks: Which room do you mean?")
    assert len(standin.requests) == 1


async def test_the_model_may_ask_the_operator_on_its_first_turn(standin, make_assistant):
    standin.set_script(sequence(Reply((Text("Hmm."), ToolUse("ask_operator", {"question": "¿Qué sala?"})))))
    answer = await make_assistant().ask("¿Está lista la sala?")
    assert answer.language == "es" and answer.text == "Hmm.\n\nEl asistente pregunta: ¿Qué sala?"


async def test_a_repeated_identical_proposal_gets_the_existing_state_and_is_never_submitted_twice(
    standin, make_assistant
):
    sink = FakeSink()
    standin.set_script(
        sequence(
            _batch((DEVICES, {})),
            _batch(("propose_change", RECORD_ENG101)),
            _batch(("propose_change", {**RECORD_ENG101, "reason": "other words, same change"})),
            _batch(("propose_change", RECORD_ENG101), ("propose_change", RECORD_ENG101)),
            say("done"),
        )
    )
    answer = await make_assistant(sink=sink).ask("Record ENG 101")
    assert len(sink.submissions) == 1
    assert error_codes(standin.requests) == ["duplicate_proposal"] * 3
    duplicate = result_payloads(standin.requests[3])[-1]["error"]
    assert duplicate["proposal_id"] == "p_1" and duplicate["status"] == "pending"
    assert [p.proposal_id for p in answer.proposals] == ["p_1"]


async def test_a_second_proposal_for_a_pending_target_is_blocked_until_the_first_is_denied(
    standin, make_assistant
):
    sink = FakeSink()
    stop = {**RECORD_ENG101, "arguments": {"action": "stop", "device_ids": [f"{ENG101}-1"]}}
    other_channel = {**RECORD_ENG101, "arguments": {"action": "start", "device_ids": [f"{ENG101}-2"]}}

    def deny_then_retry(request):
        sink.set_status("p_1", "denied")
        return _batch(("propose_change", stop))

    standin.set_script(
        sequence(
            _batch((DEVICES, {}), ("propose_change", RECORD_ENG101)),
            _batch(("propose_change", stop), ("propose_change", other_channel)),
            deny_then_retry,
            say("done"),
        )
    )
    answer = await make_assistant(sink=sink).ask("Record ENG 101")
    assert error_codes(standin.requests) == ["fsm_blocked", "fsm_blocked"]
    assert [s.arguments["action"] for s in sink.submissions] == ["start", "stop"]
    assert [(p.proposal_id, p.state) for p in answer.proposals] == [
        ("p_1", "denied"),
        ("p_2", "waiting_for_approval"),
    ]


async def test_blocked_attempts_never_wear_the_gate_down(standin, make_assistant):
    sink = FakeSink()
    standin.set_script(sequence(*[_batch(("propose_change", RECORD_ENG101))] * 7, say("gave up")))
    answer = await make_assistant(sink=sink).ask("Record ENG 101 now")
    assert sink.submissions == [] and answer.text == "gave up"
    assert error_codes(standin.requests) == ["fsm_blocked"] * 7


async def test_reads_are_never_blocked_even_when_repeated(standin, make_assistant, transport):
    standin.set_script(sequence(*[_batch((DEVICES, {}))] * 5, say("done")))
    answer = await make_assistant().ask("List the devices again and again")
    assert answer.text == "done" and error_codes(standin.requests) == []
    assert transport.tool_calls == [DEVICES] * 5


async def test_a_misspelt_tool_name_from_the_model_is_answered_with_the_closest_offered_one(
    standin, reader, make_assistant
):
    sink = FakeSink()
    misspelt_propose = {**RECORD_ENG101, "tool": "batch_recordin"}
    standin.set_script(
        sequence(
            _batch(("get_devices_in_my_tem", {}), ("frobnicate", {})),
            _batch((DEVICES, {}), ("propose_change", misspelt_propose)),
            say("done"),
        )
    )
    await make_assistant(sink=sink).ask("Record ENG 101")
    first = [p["error"] for p in result_payloads(standin.requests[1])]
    assert [(e["code"], e.get("did_you_mean")) for e in first] == [
        ("unknown_tool", DEVICES),
        ("unknown_tool", None),  # nothing offered is alike: no guess
    ]
    last = [p for r in last_tool_results(standin.requests[2]) for p in blocks_in(r.text)]
    errors = [p["error"] for p in last if isinstance(p, dict) and "error" in p]
    assert [e["code"] for e in errors] == ["not_proposable"]
    assert "did you mean batch_recording?" in errors[0]["message"]
    assert sink.submissions == []


BAD_VALUES = (123, "", "ABC-DEF", ["x"], [123], {"k": "v"}, None, True, "19012340101\n")
"""Values of the wrong shape, or of the right shape in the wrong case, for a read argument."""


async def test_no_read_tool_given_any_bad_shaped_argument_answers_internal_error(
    standin, reader, make_assistant, policies
):
    from services.lab.schemas import INPUT_SCHEMAS

    offered = sorted(policies[1].model_read_tools & set(INPUT_SCHEMAS))
    assert len(offered) > 10
    seen: dict[str, list[str]] = {}
    for tool in offered:
        properties = INPUT_SCHEMAS[tool].get("properties") or {}
        calls = [(tool, {}), (tool, {"unexpected": 1})]
        calls += [(tool, {name: value}) for name in properties for value in BAD_VALUES]
        standin.set_script(sequence(_batch(*calls), say("done")))
        answer = await make_assistant().ask(f"check {tool}")
        assert answer.answered_by == "model", (tool, answer)
        seen[tool] = error_codes(standin.requests[-1:])
    assert [(tool, codes) for tool, codes in seen.items() if "internal_error" in codes] == []
    assert any(codes for codes in seen.values())  # the bad values were refused, each with a code
