"""The watch's words come from the one catalogue: keyed entries, English and Spanish in the ``.po``."""

from __future__ import annotations

import re

from services.assistant.watch.words import WORDS, word

SAME_IN_BOTH = {"h_finding_opened", "h_proposal_status", "more"}
"""Phrases that are only fields and punctuation (or read the same) in both languages."""


def test_every_phrase_has_its_spanish_and_the_same_fields() -> None:
    english, spanish = WORDS["en"], WORDS["es"]
    assert len(english) > 100 and list(english) == list(spanish)
    untranslated = [k for k in english if english[k] == spanish[k] and k not in SAME_IN_BOTH]
    assert untranslated == []
    for key in english:
        fields = set(re.findall(r"%\((\w+)\)", english[key]))
        assert fields == set(re.findall(r"%\((\w+)\)", spanish[key])), key


def test_the_fleet_is_la_flota_a_room_is_feminine_and_the_operator_is_usted() -> None:
    assert word("es", "wall_title") == "Fleetwatch: la flota ahora"
    assert word("en", "wall_title") == "Fleetwatch: the fleet now"
    assert word("es", "whole_fleet") == "Toda la flota"
    assert (
        word("es", "read_recovered", n=3)
        == "Fleetwatch lee la flota de nuevo, después de 3 latidos fallidos."
    )
    assert word("es", "why_offline") == "desconectada"
    assert word("es", "notice_page", url="http://127.0.0.1:1/").startswith("Apruébelo o rechácelo")
    assert not [k for k, text in WORDS["es"].items() if "equipo" in text]


def test_the_weekly_decisions_line_reads_right_for_one_approval_in_both_languages() -> None:
    """Walk item 12: "1 aprobadas … 1 decididas": counts stand after their label, so no
    participle has to agree with a number."""
    from services.assistant.watch.compose import decisions_line
    from shared.wire.approval import ApproverLine, ApproverReport

    report = ApproverReport(days=7, threshold_seconds=3, people=(ApproverLine(1001, 1, 1, 0, 6, 1),))
    assert decisions_line(report, "es") == (
        "Aprobaciones, últimos 7 días: aprobadas 1, rechazadas 0, por 1 persona; aprobadas más rápido "
        "de lo que se puede leer la tarjeta (menos de 3 s): 1. Más: fleetwatch audit decisions"
    )
    assert decisions_line(report, "en") == (
        "Approvals, last 7 days: approved 1, denied 0, by 1 person; approved faster than the card can "
        "be read (under 3 s): 1. More: fleetwatch audit decisions"
    )
