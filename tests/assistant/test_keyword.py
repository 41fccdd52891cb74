"""The keyword answer: read-only, English and Spanish, over a real snapshot of the campus lab,
judged against the lab's own state (`tests.assistant.judge`)."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from services.assistant.keyword import keyword_answer
from tests.assistant.conftest import START
from tests.assistant.judge import Truth, judge_room_status, judge_rooms, rooms_named

LABEL = {
    "en": "(Keyword answer: read from the fleet just now, without a model; it never proposes a change.)",
    "es": "(Respuesta por palabras clave: leída de la flota ahora mismo, sin modelo; nunca propone un cambio.)",
}


@pytest.fixture
async def snapshot(reader):
    return await reader.snapshot()


@pytest.fixture
def truth(lab, snapshot):
    return Truth.of(lab)


@pytest.mark.parametrize(
    ("question", "language", "expected"),
    [
        ("Which rooms are offline?", "en", Truth.offline),
        ("¿Qué equipos están fuera de línea?", "es", Truth.offline),
        ("which rooms are recording right now?", "en", Truth.recording),
        ("¿qué salas están grabando ahora?", "es", Truth.recording),
        ("Which rooms are low on disk space?", "en", Truth.short_of_storage),
        ("¿Qué salas tienen poco espacio en disco?", "es", Truth.short_of_storage),
        ("Is any room running hot?", "en", Truth.hot),
        ("¿Qué equipos están muy calientes?", "es", Truth.hot),
        ("Which rooms have outdated firmware?", "en", Truth.firmware_behind),
        ("¿Qué salas tienen el firmware desactualizado?", "es", Truth.firmware_behind),
        ("Which channels have no signal?", "en", Truth.dark),
        ("¿Qué canales no tienen señal?", "es", Truth.dark),
        ("What are the next classes?", "en", Truth.with_class),
        ("¿Cuáles son los próximos eventos?", "es", Truth.with_class),
    ],
)
async def test_a_list_question_names_every_matching_room_of_the_lab_and_no_other(
    snapshot, truth, question, language, expected
):
    answer = keyword_answer(question, language, snapshot, START)
    verdict = judge_rooms(answer, truth, expected(truth))
    assert verdict.ok, (verdict, answer)
    assert answer.endswith(LABEL[language])


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Which rooms need attention before their next class?", "en"),
        ("¿Qué salas necesitan atención antes de su próxima clase?", "es"),
        ("Start any recording that should be running.", "en"),
    ],
)
async def test_readiness_names_the_rooms_with_a_class_soon_that_are_not_ready(
    snapshot, truth, question, language
):
    answer = keyword_answer(question, language, snapshot, START)
    verdict = judge_rooms(answer, truth, truth.not_ready(), allowed=truth.class_soon())
    assert verdict.ok, (verdict, answer)
    assert truth.not_ready() and truth.class_soon() - truth.not_ready()


@pytest.mark.parametrize(
    ("question", "language", "room"),
    [
        ("How is SCI 101?", "en", "SCI 101 Lecture Hall"),
        ("is eng 101 auditorium ready?", "en", "ENG 101 Auditorium"),
        ("How is LIB Room 2?", "en", "LIB Room 2"),
        ("¿Cómo está el Aula Magna?", "es", "Aula Magna"),
        ("¿Está lista LAW Moot Court?", "es", "LAW Moot Court"),
    ],
)
async def test_a_named_room_gets_its_own_state_as_the_lab_has_it(snapshot, truth, question, language, room):
    answer = keyword_answer(question, language, snapshot, START)
    verdict = judge_room_status(answer, truth, room, language)
    assert verdict.ok, (verdict, answer)


async def test_a_room_that_is_not_ready_says_what_needs_attention(snapshot):
    answer = keyword_answer("¿Está lista SCI 201 Lab?", "es", snapshot, START)
    assert "- necesita atención: sin señal en «Camera 2» («SDI-A»)" in answer.splitlines()


async def test_streams_name_the_rooms_streaming_and_say_the_destinations_are_not_known(snapshot, truth):
    answer = keyword_answer("What are the stream destinations?", "en", snapshot, START)
    assert judge_rooms(answer, truth, truth.streaming(), allowed=truth.streams_set_up()).ok, answer
    assert "The destinations' names are not in the keyword answer's read of the fleet." in answer


@pytest.mark.parametrize(
    ("question", "language", "said"),
    [
        (
            "Start recording in ENG 101 Auditorium",
            "en",
            "Nothing was proposed: the keyword answer cannot propose",
        ),
        ("Reinicia SCI 105", "es", "No se propuso nada: la respuesta por palabras clave no puede proponer"),
        ("What may be changed?", "en", "The keyword answer is read-only and proposes nothing."),
        ("¿Qué salas puedes cambiar?", "es", "La respuesta por palabras clave es de solo lectura"),
    ],
)
async def test_changes_and_what_may_be_changed_are_answered_read_only(
    snapshot, truth, question, language, said
):
    answer = keyword_answer(question, language, snapshot, START)
    assert answer.startswith(said), answer
    named = rooms_named(answer, truth.all_names)
    assert named <= {"ENG 101 Auditorium", "SCI 105"} and len(named) <= 1


async def test_a_question_it_cannot_map_gets_what_it_understands_in_the_question_s_language(snapshot, truth):
    english = keyword_answer("What's the capital of France?", "en", snapshot, START)
    spanish = keyword_answer("¿Cuál es tu color favorito?", "es", snapshot, START)
    assert english.startswith("The keyword answer only understands fleet questions such as which rooms")
    assert spanish.startswith("La respuesta por palabras clave solo entiende preguntas sobre la flota")
    assert not rooms_named(english + spanish, truth.all_names)


async def test_what_needs_attention_is_grouped_in_priority_words(snapshot):
    english = keyword_answer("What needs attention?", "en", snapshot, START)
    spanish = keyword_answer("¿Qué necesita atención?", "es", snapshot, START)
    assert (
        english.splitlines()[0] == "Fix first:" and "Fix soon:" in english and "When convenient:" in english
    )
    assert "- “LIB Room 2”: offline" in english
    assert spanish.splitlines()[0] == "Arreglar primero:" and "Cuando convenga:" in spanish
    assert "- «LIB Room 2»: desconectada" in spanish


async def test_an_empty_fleet_says_so(snapshot):
    empty = replace(snapshot, devices=(), events={}, system={})
    assert keyword_answer("what's offline", "en", empty, START).startswith(
        "No room is offline: all 0 are online."
    )
    assert keyword_answer("qué necesita atención", "es", empty, START).startswith("Nada necesita atención.")
    assert keyword_answer("next events", "en", empty, START).startswith("No classes in the next 24 hours.")
    assert keyword_answer("which rooms are recording?", "en", empty, START).startswith("No room is recording")


@pytest.mark.parametrize(
    ("question", "language", "words"),
    [
        ("What may be changed?", "en", ("Changes the policy allows there: ", "stream", "reboot")),
        ("¿Qué puedo cambiar?", "es", ("Cambios que la política permite allí: ", "transmisión", "reiniciar")),
    ],
)
async def test_what_may_be_changed_names_the_changes_the_policy_allows(
    snapshot, policies, question, language, words
):
    """Issue 28 walk item 9: the list of changes comes from the policy, as ``fleetwatch
    writable`` shows it (every proposable tool), on the keyword path too."""
    from shared.text.change_words import change

    _, tool_policy = policies
    answer = keyword_answer(question, language, snapshot, START, proposable=sorted(tool_policy.propose))
    for said in (*words, *(change(tool, None, language) for tool in tool_policy.propose)):
        assert said in answer, (said, answer)
