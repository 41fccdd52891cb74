"""What a question is about, in English and Spanish: topics, changes and the room it names."""

from __future__ import annotations

import pytest

from shared.text.questions import Action, Topic, change_of, find_name, topic_of, understand

NAMES = (
    "SCI 101 Lecture Hall",
    "SCI 105",
    "SCI 201 Lab",
    "ENG 101 Auditorium",
    "Aula Magna",
    "Aula 12",
    "LIB Room 2",
    "Sandbox Pearl-2",
    "Sandbox Classroom",
    "Recording Studio",
)


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Which rooms are offline?", Topic.OFFLINE),
        ("¿Qué equipos están desconectados?", Topic.OFFLINE),
        ("is anything down?", Topic.OFFLINE),
        ("which rooms are recording right now?", Topic.RECORDING),
        ("¿qué salas están grabando ahora?", Topic.RECORDING),
        ("Which rooms are low on disk space?", Topic.DISK),
        ("¿Qué salas tienen poco espacio en disco?", Topic.DISK),
        ("Is any room running hot?", Topic.TEMPERATURE),
        ("¿Qué equipos tienen la temperatura alta?", Topic.TEMPERATURE),
        ("Which rooms have outdated firmware?", Topic.FIRMWARE),
        ("¿Qué salas tienen el firmware desactualizado?", Topic.FIRMWARE),
        ("Which channels have no signal?", Topic.SIGNAL),
        ("¿Qué canales están sin señal?", Topic.SIGNAL),
        ("What are the next classes?", Topic.SCHEDULE),
        ("¿Cuáles son los próximos eventos?", Topic.SCHEDULE),
        ("Which rooms need attention before their next class?", Topic.READINESS),
        ("¿Qué salas necesitan atención antes de su próxima clase?", Topic.READINESS),
        ("What are our stream destinations?", Topic.STREAMS),
        ("¿A qué destinos transmitimos?", Topic.STREAMS),
        ("What may be changed?", Topic.WRITABLE),
        ("¿Qué salas puedes cambiar?", Topic.WRITABLE),
        ("What needs attention?", Topic.ATTENTION),
        ("¿Qué necesita atención?", Topic.ATTENTION),
        ("What's the capital of France?", Topic.UNKNOWN),
        ("¿Cuál es tu color favorito?", Topic.UNKNOWN),
    ],
)
def test_each_topic_is_recognised_in_both_languages(question, topic):
    assert topic_of(question) == topic


@pytest.mark.parametrize(
    ("question", "action"),
    [
        ("Start recording in Aula 12", Action.START_RECORDING),
        ("Record ENG 101", Action.START_RECORDING),
        ("Empieza a grabar en el Aula Magna", Action.START_RECORDING),
        ("Please stop the recording in SCI 105", Action.STOP_RECORDING),
        ("Detén la grabación en SCI 105", Action.STOP_RECORDING),
        ("Reboot SCI 105", Action.REBOOT),
        ("Reinicia SCI 105", Action.REBOOT),
        ("Update the firmware of SCI 105", Action.FIRMWARE_UPDATE),
        ("Actualiza el firmware de SCI 105", Action.FIRMWARE_UPDATE),
        ("Can you start the stream in ENG 101?", Action.START_STREAM),
        ("Inicia la transmisión en Aula Magna", Action.START_STREAM),
        ("Start SCI 105", Action.UNCLEAR),
    ],
)
def test_an_imperative_at_the_start_of_a_sentence_is_a_change(question, action):
    change = change_of(question)
    assert change is not None and change.action == action


@pytest.mark.parametrize(
    "question",
    [
        "which rooms are recording right now?",
        "¿Cuándo empieza a grabar SCI 105?",
        "Para SCI 105, ¿qué clase sigue?",
        "Update me on SCI 105",
        "Which rooms need a firmware update?",
        "When did SCI 105 restart?",
    ],
)
def test_a_question_about_a_change_is_not_a_change(question):
    assert change_of(question) is None


def test_a_change_for_whatever_is_due_for_every_room_or_for_an_unknown_room_is_told_apart():
    due = understand("Which rooms need attention? Start any recording that should be running.", NAMES)
    assert (due.topic, due.action, due.due, due.room) == (Topic.CHANGE, Action.START_RECORDING, True, None)
    assert understand("¿Qué sala necesita empezar a grabar?", NAMES).due
    every = understand("reboot every device", NAMES)
    assert every.every_room and not every.due and not every.unknown_room
    assert understand("Reboot Room 999", NAMES).unknown_room
    assert not understand("Start recording", NAMES).unknown_room


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("how is SCI 101?", "SCI 101 Lecture Hall"),
        ("How is sci 101 lecture hall doing", "SCI 101 Lecture Hall"),
        ("¿Cómo está el aula magna?", "Aula Magna"),
        ("Is Aula 12 ready?", "Aula 12"),
        ("Start recording in Sandbox Pearl-2", "Sandbox Pearl-2"),
        ("how is SCI 1010?", None),
        ("how is SCI?", None),
        ("how is the lab?", None),
    ],
)
def test_a_room_is_found_by_its_name_or_by_an_unambiguous_start_of_it(question, name):
    assert find_name(question, NAMES) == name


def test_two_rooms_starting_the_same_way_make_a_short_name_ambiguous():
    assert find_name("how is SCI 101?", ["SCI 101 Lecture Hall", "SCI 101 Annex"]) is None
    assert find_name("how is SCI 101 Annex?", ["SCI 101 Lecture Hall", "SCI 101 Annex"]) == "SCI 101 Annex"


def test_a_named_room_makes_a_room_question_and_its_name_is_no_topic_word():
    assert understand("How is Recording Studio?", NAMES).topic is Topic.ROOM
    assert understand("How is Sandbox Classroom?", NAMES).topic is Topic.ROOM
    assert understand("Is SCI 201 Lab recording?", NAMES).topic is Topic.ROOM
    writable = understand("Can you change Aula Magna?", NAMES)
    assert (writable.topic, writable.room) == (Topic.WRITABLE, "Aula Magna")
    change = understand("Reboot Sandbox Pearl-2", NAMES)
    assert (change.topic, change.action, change.room) == (Topic.CHANGE, Action.REBOOT, "Sandbox Pearl-2")
