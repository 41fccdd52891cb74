"""The operator's language and the code-built proposal lines."""

from __future__ import annotations

import pytest

from services.assistant.language import choose, detect, proposal_line, proposal_status
from shared.text.change_words import SNAKE_CASE
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
        proposal_id="p_1",
        tool="batch_recording",
        status=status,
        outcome=outcome,
        verification=verification,
        action="start",
        targets=("29088800004",),
        target_names=("Sandbox Classroom",),
    )
    assert proposal_status(state) == key
    english, spanish = (
        proposal_line("p_1", state, "en", tool="batch_recording"),
        proposal_line("p_1", state, "es", tool="batch_recording"),
    )
    assert english.state == spanish.state == key
    assert english.text.startswith("Proposal p_1: start recording in “Sandbox Classroom”: ")
    assert spanish.text.startswith("Propuesta p_1: empezar a grabar en «Sandbox Classroom»: ")
    assert english.text != spanish.text
    words = [line.text.replace("p_1", "") for line in (english, spanish)]  # the fake ID has an underscore
    assert [SNAKE_CASE.findall(w) for w in words] == [[], []]


@pytest.mark.parametrize(
    ("status", "outcome", "verification", "acknowledged", "existing", "key"),
    [
        ("pending", None, None, False, True, "already_waiting"),
        ("not_run", None, None, False, False, "not_run"),
        ("executed", "unknown", None, True, False, "acknowledged"),
        ("executed", "ok", "not_observed", True, False, "acknowledged"),
        ("executed", "ok", "verified", True, False, "verified"),
    ],
)
def test_a_proposal_already_waiting_not_run_or_acknowledged_says_so(
    status, outcome, verification, acknowledged, existing, key
):
    state = ProposalState(
        proposal_id="p_1",
        tool="batch_reboot",
        status=status,
        outcome=outcome,
        verification=verification,
        acknowledged=acknowledged,
        targets=("29088800001",),
    )
    line = proposal_line("p_1", state, "es", tool="batch_reboot", existing=existing)
    assert line.state == key
    assert line.text.startswith("Propuesta p_1: reiniciar en el dispositivo 29088800001: ")


def test_a_name_read_in_the_question_stands_in_for_one_the_state_lacks():
    state = ProposalState(proposal_id="p_1", tool="batch_reboot", status="pending", targets=("29088800001",))
    line = proposal_line("p_1", state, "en", tool="batch_reboot", names={"29088800001": "Sandbox Pearl-2"})
    assert line.text == "Proposal p_1: reboot in “Sandbox Pearl-2”: waiting for approval on the approval page."


def test_a_state_that_could_not_be_read_says_so():
    line = proposal_line("p_2", None, "en", tool="batch_reboot")
    assert line.state == "unreadable" and "could not be read" in line.text
    assert line.text.startswith("Proposal p_2: reboot: ")
