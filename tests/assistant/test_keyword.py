"""The keyword answer: read-only, English and Spanish, over a real snapshot of the campus lab."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from services.assistant.keyword import find_room, intent_of, keyword_answer
from tests.assistant.conftest import START


@pytest.fixture
async def snapshot(reader):
    return await reader.snapshot()


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("What needs attention?", "attention"),
        ("¿Qué necesita atención?", "attention"),
        ("What's offline?", "offline"),
        ("¿Qué equipos están fuera de línea?", "offline"),
        ("Is ENG 101 Auditorium ready?", "ready"),
        ("¿Está lista el Aula Magna?", "ready"),
        ("next events", "events"),
        ("¿Cuáles son los próximos eventos?", "events"),
    ],
)
def test_the_four_kinds_of_question_are_recognised_in_both_languages(question, intent):
    assert intent_of(question) == intent


async def test_what_needs_attention_is_grouped_in_priority_words(snapshot):
    english = keyword_answer("What needs attention?", "en", snapshot, START)
    spanish = keyword_answer("¿Qué necesita atención?", "es", snapshot, START)
    assert (
        english.splitlines()[0] == "Fix first:" and "Fix soon:" in english and "When convenient:" in english
    )
    assert "- LIB Room 2: offline" in english
    assert spanish.splitlines()[0] == "Arreglar primero:" and "Cuando convenga:" in spanish
    assert "- LIB Room 2: desconectado" in spanish


async def test_is_a_room_ready_finds_the_room_by_name_without_accents_or_case(snapshot):
    ready = keyword_answer("is eng 101 auditorium ready?", "en", snapshot, START)
    assert ready.splitlines() == [
        "ENG 101 Auditorium looks ready: online, no problems found.",
        'Next event: "ENG 100 Engineering Design (livestream)" in 25 min.',
    ]
    not_ready = keyword_answer("¿Está lista LIB Room 2?", "es", snapshot, START)
    assert not_ready.splitlines()[:2] == [
        "LIB Room 2 no está lista:",
        '- Arreglar primero: LIB Room 2: desconectado (evento "Library workshop: citations")',
    ]
    assert keyword_answer("Is the moon ready?", "en", snapshot, START).startswith("Which room?")
    assert find_room("laboratorio de idiomas lista?", snapshot.devices).name == "Laboratorio de Idiomas"


async def test_next_events_are_listed_soonest_first_with_those_on_now(snapshot):
    lines = keyword_answer("next events", "en", snapshot, START).splitlines()
    assert lines[0] == "Next events:"
    assert lines[1].startswith("- 12:30 UTC LAW Moot Court: ") and "on now" in lines[1]
    assert lines[3] == '- 13:25 UTC ENG 101 Auditorium: "ENG 100 Engineering Design (livestream)" in 25 min'


async def test_an_empty_fleet_says_so(snapshot):
    empty = replace(snapshot, devices=(), events={}, system={})
    assert keyword_answer("what's offline", "en", empty, START) == "Every device is online."
    assert keyword_answer("qué necesita atención", "es", empty, START) == "Nada necesita atención."
    assert keyword_answer("next events", "en", empty, START) == "No events in the next 24 hours."
