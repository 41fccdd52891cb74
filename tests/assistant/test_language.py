"""The operator's language and the code-built proposal lines."""

from __future__ import annotations

import pytest

from services.assistant.language import choose, detect, proposal_line, proposal_status
from shared.wire.approval import ProposalState


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué salas necesitan atención?",
        "que equipos estan desconectados",
        "¿Está lista el Aula Magna para su clase?",
        "muéstrame los próximos eventos",
        "Reinicia Sandbox Nano.",
        "Detén la grabación en Sandbox Pearl Mini",
    ],
)
def test_spanish_questions_are_detected(question):
    assert detect(question) == "es"


@pytest.mark.parametrize(
    "question",
    [
        "What needs attention?",
        "is ENG 101 Auditorium ready?",
        "what's offline",
        "next events please",
        "Is the Aula Magna ready for class?",
        "Reboot ENG 105.",
        "Start recording in Sandbox Pearl-2.",
    ],
)
def test_english_questions_are_detected(question):
    assert detect(question) == "en"


def test_an_explicit_language_wins_and_an_unknown_one_is_ignored():
    assert choose("What needs attention?", "es") == "es"
    assert choose("¿Qué necesita atención?", "fr") == "es"


@pytest.mark.parametrize(
    ("status", "outcome", "verification", "key"),
    [
        ("pending", None, None, "waiting_for_approval"),
        ("approved", None, None, "approved"),
        ("approved", "running", None, "running"),
        ("denied", None, None, "denied"),
        ("expired", None, None, "expired"),
        ("executed", "ok", None, "ran_ok"),
        ("executed", "ok", "verified", "verified"),
        ("executed", "ok", "contradicted", "contradicted"),
        ("executed", "error", None, "error"),
        ("executed", "unknown", None, "unknown"),
        ("executed", "refused", None, "refused"),
    ],
)
def test_every_recorded_state_has_words_in_both_languages(status, outcome, verification, key):
    state = ProposalState(
        proposal_id="p_1", tool="batch_recording", status=status, outcome=outcome, verification=verification
    )
    assert proposal_status(state) == key
    english, spanish = (
        proposal_line("p_1", "batch_recording", state, "en"),
        proposal_line("p_1", "batch_recording", state, "es"),
    )
    assert english.state == spanish.state == key
    assert english.text.startswith("Proposal p_1 (batch_recording): ")
    assert spanish.text.startswith("Propuesta p_1 (batch_recording): ")
    assert english.text != spanish.text


def test_a_state_that_could_not_be_read_says_so():
    line = proposal_line("p_2", "batch_reboot", None, "en")
    assert line.state == "unreadable" and "could not be read" in line.text
