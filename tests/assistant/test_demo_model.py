"""The lab's demo model through the real assistant: the real Anthropic SDK against the stand-in,
the real loop, pipeline, state machine, data blocks and budgets, the campus lab on a frozen
clock. Every answer is judged against the lab's own state (`tests.assistant.judge`), and the
read tools each answer relies on must appear in the turn's audit detail."""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest

from services.assistant.data_block import OPEN
from services.ctl.commands_up import DEMO_QUESTION
from services.lab.server import run_lab
from services.lab.state import LabClock
from shared.canonical import hidden_character
from shared.text.catalogue import translate
from shared.wire.approval import RecordAsk
from tests.assistant.conftest import START
from tests.assistant.helpers import RECORD_CLASSROOM, WRITABLE, FakeSink, blocks_in, error_codes, team_reader
from tests.assistant.hostile import TAG, hostile_scenario
from tests.assistant.judge import Truth, judge_room_status, judge_rooms, rooms_named

DEVICES = "get_devices_in_my_team"
RECORDER = "get_recorder_status_for_devices"
EVENTS = "get_current_or_next_cms_events_for_devices"

MUST_SHOW = [
    ("which rooms are offline?", "en", Truth.offline, {DEVICES}),
    ("which rooms are recording right now?", "en", Truth.recording, {DEVICES, RECORDER}),
    ("¿qué salas están grabando ahora?", "es", Truth.recording, {DEVICES, RECORDER}),
]


async def _ask_audited(tmp_path, make_assistant, question, **options):
    """Ask; the answer and the turn's audit detail (the ``RecordAsk`` the assistant sends to
    approval.sock, which writes it as the ``ask`` audit row)."""
    sink = options.setdefault("sink", FakeSink())
    answer = await make_assistant(**options).ask(question)
    (record,) = [r for r in sink.records if isinstance(r, RecordAsk)]
    return answer, msgspec.to_builtins(record)


@pytest.mark.parametrize(("question", "language", "expected", "tools"), MUST_SHOW)
async def test_the_demo_model_names_every_matching_room_and_the_audit_shows_the_reads_it_relied_on(
    tmp_path, lab, standin, make_assistant, question, language, expected, tools
):
    sink = FakeSink()
    answer, detail = await _ask_audited(tmp_path, make_assistant, question, sink=sink)
    truth = Truth.of(lab)
    verdict = judge_rooms(answer.text, truth, expected(truth))
    assert verdict.ok, (verdict, answer.text)
    assert expected(truth), "the campus lab has such rooms"
    assert answer.answered_by == "model" and answer.language == language and not answer.proposals
    assert tools <= set(detail["tools"]), detail["tools"]
    assert "propose_change" not in detail["tools"] and sink.submissions == [] and sink.writable_calls == 0


@pytest.mark.parametrize(("question", "language", "expected", "tools"), MUST_SHOW)
async def test_the_keyword_answer_names_every_matching_room_and_the_audit_shows_the_reads_it_relied_on(
    tmp_path, lab, standin, make_assistant, transport, question, language, expected, tools
):
    answer, detail = await _ask_audited(tmp_path, make_assistant, question, model_client=None)
    truth = Truth.of(lab)
    verdict = judge_rooms(answer.text, truth, expected(truth))
    assert verdict.ok, (verdict, answer.text)
    assert answer.answered_by == "keyword" and answer.language == language and standin.requests == []
    assert {DEVICES, RECORDER} <= set(transport.tool_calls)
    assert detail["answered_by"] == "keyword" and tools <= set(detail["tools"]), detail["tools"]
    assert detail["tools"] == dict(sorted(Counter(transport.tool_calls).items()))


@pytest.mark.parametrize(
    ("question", "expected", "read"),
    [
        ("Which rooms are low on disk space?", Truth.short_of_storage, "get_storage_status_for_devices"),
        ("¿Qué equipos están muy calientes?", Truth.hot, "get_system_status_for_devices"),
        ("Which rooms have outdated firmware?", Truth.firmware_behind, DEVICES),
        ("¿Qué canales no tienen señal?", Truth.dark, DEVICES),
        ("What are the next classes?", Truth.with_class, EVENTS),
        ("¿Qué salas están desconectadas?", Truth.offline, EVENTS),
    ],
)
async def test_each_topic_is_read_with_its_own_tool_and_answered_from_what_was_read(
    tmp_path, lab, standin, make_assistant, question, expected, read
):
    answer, detail = await _ask_audited(tmp_path, make_assistant, question)
    truth = Truth.of(lab)
    verdict = judge_rooms(answer.text, truth, expected(truth))
    assert verdict.ok, (verdict, answer.text)
    assert read in detail["tools"] and not answer.proposals


async def test_a_named_room_is_read_and_described_as_the_lab_has_it(tmp_path, lab, standin, make_assistant):
    answer, detail = await _ask_audited(tmp_path, make_assistant, "How is SCI 101?")
    assert judge_room_status(answer.text, Truth.of(lab), "SCI 101 Lecture Hall", "en").ok, answer.text
    assert {"get_current_or_next_cms_event_for_device", "get_system_status_for_devices"} <= set(
        detail["tools"]
    )
    spanish = await make_assistant().ask("¿Cómo está LIB Room 2?")
    assert judge_room_status(spanish.text, Truth.of(lab), "LIB Room 2", "es").ok, spanish.text


async def test_stream_destinations_are_named_with_the_rooms_that_use_them(lab, standin, make_assistant):
    answer = await make_assistant().ask("What are our stream destinations?")
    truth = Truth.of(lab)
    assert all(name in answer.text for name in truth.endpoints), answer.text
    assert judge_rooms(answer.text, truth, truth.streaming(), allowed=truth.streams_set_up()).ok
    assert "get_stream_endpoints" in standin.requests[0].tool_names()
    assert "key" not in answer.text.lower() and "passphrase" not in answer.text.lower()


@pytest.mark.parametrize(
    ("question", "language"), [(DEMO_QUESTION, "en"), (translate("es", DEMO_QUESTION), "es")]
)
async def test_the_demo_question_asks_for_the_change_and_proposes_the_due_recording(
    lab, standin, make_assistant, question, language
):
    sink = FakeSink()
    answer = await make_assistant(sink=sink).ask(question)
    truth = Truth.of(lab)
    assert [s.arguments for s in sink.submissions] == [RECORD_CLASSROOM["arguments"]]
    assert judge_rooms(
        answer.text, truth, truth.not_ready(), allowed=truth.class_soon() | {"Sandbox Classroom"}
    ).ok
    assert answer.language == language and [p.state for p in answer.proposals] == ["waiting_for_approval"]
    if language == "en":
        assert "Of the rooms I may change, Sandbox Classroom has its next class in 25 min" in answer.text
        assert "can be read but not changed" in answer.text


@pytest.mark.parametrize(
    ("question", "hint"),
    [
        ("Which rooms need attention before their next class?", "I changed nothing."),
        ("¿Qué salas necesitan atención antes de su próxima clase?", "No cambié nada."),
    ],
)
async def test_a_readiness_question_alone_is_answered_and_changes_nothing(
    lab, standin, make_assistant, question, hint
):
    sink = FakeSink()
    answer = await make_assistant(sink=sink).ask(question)
    truth = Truth.of(lab)
    assert judge_rooms(answer.text, truth, truth.not_ready(), allowed=truth.class_soon()).ok, answer.text
    assert sink.submissions == [] and sink.writable_calls == 0 and answer.proposals == ()
    assert hint in answer.text


async def test_a_change_on_a_practice_room_is_proposed_and_one_on_another_room_is_not(
    standin, make_assistant
):
    sink = FakeSink()
    proposed = await make_assistant(sink=sink).ask("Start recording in Sandbox Classroom")
    assert [(s.tool, s.arguments) for s in sink.submissions] == [
        ("batch_recording", RECORD_CLASSROOM["arguments"])
    ]
    assert proposed.text.startswith("I proposed starting the recording in Sandbox Classroom")
    refused = FakeSink()
    answer = await make_assistant(sink=refused).ask("Empieza a grabar en ENG 101 Auditorium")
    assert refused.submissions == [] and not answer.proposals
    assert answer.text.startswith("ENG 101 Auditorium se puede consultar, pero no cambiar desde aquí")
    assert "Sandbox Classroom" in answer.text


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("reboot every device", "never for every room at once"),
        ("Reboot Room 999", "I could not find that room"),
        ("Start recording", "Which room?"),
        ("Start streaming in Sandbox Classroom", "I can't choose a stream destination"),
        ("Reboot Sandbox Classroom", "has a class on now or soon"),
    ],
)
async def test_a_change_it_should_not_propose_is_explained_and_nothing_is_proposed(
    standin, make_assistant, question, said
):
    sink = FakeSink()
    answer = await make_assistant(sink=sink).ask(question)
    assert said in answer.text and sink.submissions == [] and not answer.proposals, answer.text


async def test_with_proposals_off_a_change_is_not_proposed_and_the_answer_says_so(
    standin, make_assistant, observe_policies
):
    answer = await make_assistant(policies=observe_policies).ask("Start recording in Sandbox Classroom")
    assert answer.text == "Proposals are off here, so I can't propose any change; I can only read the fleet."
    assert all(
        {"propose_change", "list_writable_devices"}.isdisjoint(r.tool_names()) for r in standin.requests
    )
    assert error_codes(standin.requests) == []


async def test_what_may_be_changed_lists_the_practice_rooms_only(lab, standin, make_assistant):
    sink = FakeSink()
    answer = await make_assistant(sink=sink).ask("What may be changed?")
    assert rooms_named(answer.text, Truth.of(lab).all_names) == {"Sandbox Classroom"}
    assert "The 30 rooms of the fleet I read can be read but not changed." in answer.text
    assert sink.writable_calls == 1 and sink.submissions == []


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("What's the capital of France?", "The demo model only understands fleet questions such as"),
        ("¿Cuál es tu color favorito?", "El modelo de demostración solo entiende preguntas sobre la flota"),
    ],
)
async def test_a_question_it_cannot_map_says_what_it_understands_and_names_the_key(
    lab, standin, make_assistant, question, start
):
    answer = await make_assistant().ask(question)
    assert answer.text.startswith(start) and "FLEETWATCH_ANTHROPIC_API_KEY" in answer.text
    assert not rooms_named(answer.text, Truth.of(lab).all_names)


async def test_the_answer_follows_the_lab_not_a_script(lab, standin, make_assistant):
    reboot = await lab.lab.call_tool(
        lab.teams["normal"].token, "batch_reboot", {"device_ids": ["19012340303"]}
    )
    assert not reboot.result.is_error
    answer = await make_assistant().ask("which rooms are offline?")
    truth = Truth.of(lab)
    assert "LIB 401 Reading Room" in truth.offline()
    assert judge_rooms(answer.text, truth, truth.offline()).ok, answer.text


async def test_the_demo_model_reads_results_only_from_the_data_blocks_it_was_sent(standin, make_assistant):
    await make_assistant().ask("which rooms are recording right now?")
    first, second, last = standin.requests
    assert [u["name"] for u in second.tool_uses()] == [DEVICES]
    recorder = last.tool_uses()[-1]
    assert recorder["name"] == RECORDER
    assert all(r.text.startswith(OPEN) for r in last.tool_results())
    (listing,) = blocks_in(last.tool_results()[0].text)
    online = [d["Id"] for d in listing["devices"] if d["Status"] == "online"]
    assert recorder["input"] == {"device_ids": online}


async def test_a_failed_read_is_said_plainly_and_nothing_is_made_up(lab, standin, make_assistant):
    lab.set_fault(RECORDER, "error")
    answer = await make_assistant().ask("which rooms are recording right now?")
    truth = Truth.of(lab)
    assert judge_rooms(answer.text, truth, truth.recording()).ok, answer.text  # the device list says
    assert RECORDER in answer.text.splitlines()[-1], answer.text  # the read that failed is named


async def test_a_failed_device_list_is_said_plainly_and_nothing_is_made_up(lab, standin, make_assistant):
    lab.set_fault(DEVICES, "error")
    answer = await make_assistant().ask("which rooms are recording right now?")
    assert answer.text == "I could not read the device list just now, so I can't answer that from the fleet."


async def test_the_older_result_shapes_are_read_the_same_way(policies, standin, make_assistant):
    async with (
        run_lab("campus", older_shapes=True, clock=LabClock(START, frozen=True)) as older,
        team_reader(older, "normal", policies[1]) as reader,
    ):
        answer = await make_assistant(reader=reader, now=lambda: older.now).ask(
            "¿qué salas están grabando ahora?"
        )
        truth = Truth.of(older)
    verdict = judge_rooms(answer.text, truth, truth.recording())
    assert verdict.ok, (verdict, answer.text)


async def test_a_fleet_larger_than_a_data_block_is_answered_for_what_was_shown_and_says_so(
    policies, standin, make_assistant
):
    async with (
        run_lab("campus", devices=400, clock=LabClock(START, frozen=True)) as big,
        team_reader(big, "normal", policies[1]) as reader,
    ):
        answer = await make_assistant(reader=reader, now=lambda: big.now).ask("Which rooms are offline?")
        truth = Truth.of(big)
    assert "I was shown only part of the fleet; rooms beyond it are not in this answer." in answer.text
    named = rooms_named(answer.text, truth.names)
    assert named and named <= truth.offline(), answer.text


async def test_hostile_names_are_shown_not_obeyed(policies, standin, make_assistant):
    async with (
        run_lab(hostile_scenario(), clock=LabClock(START, frozen=True)) as hostile,
        team_reader(hostile, "normal", policies[1]) as reader,
    ):
        answers, sink = [], FakeSink()
        for question in (
            "which rooms are offline?",
            "What are our stream destinations?",
            DEMO_QUESTION,
            "Reboot every device",
        ):
            answers.append(
                await make_assistant(reader=reader, sink=sink, now=lambda: hostile.now).ask(question)
            )
    assert all(a.answered_by == "model" for a in answers)
    assert [(s.tool, s.arguments) for s in sink.submissions] == [
        ("batch_recording", RECORD_CLASSROOM["arguments"])
    ]
    assert not TAG.search(sink.submissions[0].reason)
    assert not any(hidden_character(line) for a in answers for line in a.text.splitlines())
    assert any(TAG.search(a.text) for a in answers), "the names are shown, marked"


@pytest.mark.parametrize(
    ("question", "model", "code", "line"),
    [
        (
            "Reinicia ENG 101 Auditorium",
            True,
            "target_not_in_sandbox",
            "No se propuso: reiniciar en «ENG 101 Auditorium»: ",
        ),
        (
            "Reboot ENG 101 Auditorium",
            True,
            "target_not_in_sandbox",
            "Not proposed: reboot in “ENG 101 Auditorium”: ",
        ),
        (
            "Reinicia ENG 101 Auditorium",
            False,
            "model_unavailable",
            "No se propuso: reiniciar en «ENG 101 Auditorium»: ",
        ),
        (
            "Reboot ENG 101 Auditorium",
            False,
            "model_unavailable",
            "Not proposed: reboot in “ENG 101 Auditorium”: ",
        ),
    ],
)
async def test_a_change_asked_for_and_not_proposed_gets_fleetwatchs_own_line_on_every_path(
    lab, standin, make_assistant, question, model, code, line
):
    """Issue 28 walk item 10: "Reinicia ENG 105" (a room outside the fence) got only the model's
    words: no refused proposal call, so no code-built line. A change asked for and neither
    proposed nor refused gets the same "Not proposed" line, from the model or the keyword path."""
    sink = FakeSink()
    options = {} if model else {"model_client": None}
    answer = await make_assistant(sink=sink, **options).ask(question)
    assert sink.submissions == [] and not answer.proposals
    assert [r.code for r in answer.refusals] == [code], answer
    assert answer.refusals[0].text.lower().startswith(line.lower()), answer.refusals[0].text


async def test_a_question_that_asks_for_no_change_gets_no_not_proposed_line(lab, standin, make_assistant):
    for question in ("How is ENG 101 Auditorium?", "¿Qué salas están desconectadas?"):
        assert (await make_assistant().ask(question)).refusals == ()


# --- the walk's answers (issue 28 walk item 9) ----------------------------------------------------


@pytest.mark.parametrize(
    ("question", "on_now", "upcoming"),
    [
        ("What are the next classes?", "on now: ", "next: "),
        ("¿Cuáles son las próximas clases?", "en curso: ", "próxima: "),
    ],
)
async def test_a_class_under_way_is_said_on_now_since_its_start_never_as_next(
    lab, standin, make_assistant, question, on_now, upcoming
):
    """The walk: "próxima: LAW 330 Moot Court Finals a las 11:59 UTC" at 12:30: a class under way
    listed as the next one, at a time already past."""
    truth = Truth.of(lab)
    answer = (await make_assistant().ask(question)).text
    under_way = {
        d.name for d in truth.normal if (e := truth.events.get(d.id)) and e.start <= truth.now < e.finish
    }
    assert under_way, "the campus lab has a class on now"
    lines = {
        line.partition(":")[0].removeprefix("- "): line
        for line in answer.splitlines()
        if line.startswith("- ")
    }
    for name in under_way:
        assert f": {on_now}" in lines[name] and upcoming not in lines[name], lines[name]
    for name, line in lines.items():
        if name not in under_way:
            assert on_now not in line, line


@pytest.mark.parametrize(
    ("question", "language"),
    [("Which rooms are low on disk space?", "en"), ("¿Qué salas tienen poco disco?", "es")],
)
async def test_disk_shares_are_written_in_the_products_one_number_form(
    lab, standin, make_assistant, question, language
):
    """The walk: "2 % libre" from the assistant beside "1,6%" from ``fleetwatch fleet``."""
    from shared.text.wording import share_text

    truth = Truth.of(lab)
    answer = (await make_assistant().ask(question)).text
    shares = [
        share_text(100.0 * d.storage_free / d.storage_total, language)
        for d in truth.normal
        if d.name in truth.short_of_storage() and d.storage_free is not None and d.storage_total
    ]
    assert shares, "the campus lab has rooms short of storage with a known share"
    for share in shares:
        assert share in answer, (share, answer)
    assert " % " not in answer and " %\n" not in answer, answer


@pytest.mark.parametrize(
    "question", ["How much disk space is left in LIB Room 2?", "¿Cuánto disco le queda a LIB Room 2?"]
)
async def test_a_disk_question_about_one_room_answers_for_that_room(lab, standin, make_assistant, question):
    truth = Truth.of(lab)
    answer = (await make_assistant().ask(question)).text
    assert rooms_named(answer, truth.all_names) == {"LIB Room 2"}, answer


@pytest.mark.parametrize(
    ("question", "said"),
    [
        (DEMO_QUESTION, "Sandbox Classroom is already recording, so I proposed nothing."),
        (translate("es", DEMO_QUESTION), "Sandbox Classroom ya está grabando, así que no propuse nada."),
    ],
)
async def test_the_demo_question_again_gives_the_real_reason_nothing_was_proposed(
    lab, standin, make_assistant, question, said
):
    """The walk's second demo: the practice room already recorded (the first demo's change ran),
    and the answer said no practice room was due instead of that."""
    (classroom,) = WRITABLE.devices
    recording = msgspec.structs.replace(
        classroom, channels=tuple(msgspec.structs.replace(c, recording=True) for c in classroom.channels)
    )
    sink = FakeSink(writable_reply=msgspec.structs.replace(WRITABLE, devices=(recording,)))
    answer = await make_assistant(sink=sink).ask(question)
    assert sink.submissions == [] and said in answer.text, answer.text


@pytest.mark.parametrize(
    ("question", "language"), [("What may be changed?", "en"), ("¿Qué puedo cambiar?", "es")]
)
async def test_what_may_be_changed_names_every_change_the_policy_allows(
    lab, standin, make_assistant, policies, question, language
):
    """The walk: "¿Qué puedo cambiar?" left out the stream and confirm-event changes that
    ``fleetwatch writable`` lists: the offered ``propose_change`` now carries the policy's list."""
    from services.lab.model_scripts.demo_words import CHANGE_NAMES

    _, tool_policy = policies
    answer = (await make_assistant().ask(question)).text
    assert len(tool_policy.propose) >= 6
    for tool in tool_policy.propose:
        assert CHANGE_NAMES[language][tool] in answer, (tool, answer)
