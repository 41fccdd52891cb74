"""The watch's words come from the one catalogue: English in code, Spanish in the ``.po``."""

from __future__ import annotations

from services.assistant.watch.words import WORDS, word

SAME_IN_BOTH = {"h_finding_opened", "h_proposal_status", "more"}
"""Phrases that are only fields and punctuation (or read the same) in both languages."""


def test_every_phrase_has_its_spanish_and_the_same_fields() -> None:
    english, spanish = WORDS["en"], WORDS["es"]
    assert english.keys() == spanish.keys()
    untranslated = [k for k in english if english[k] == spanish[k] and k not in SAME_IN_BOTH]
    assert untranslated == []
    for key in english:
        fields = {part.split("}")[0] for part in english[key].split("{")[1:]}
        assert fields == {part.split("}")[0] for part in spanish[key].split("{")[1:]}, key


def test_the_fleet_is_la_flota_a_room_is_feminine_and_the_operator_is_usted() -> None:
    assert word("es", "wall_title") == "Fleetwatch: la flota ahora"
    assert word("en", "wall_title") == "Fleetwatch: the fleet now"
    assert word("es", "whole_fleet") == "Toda la flota"
    assert (
        word("es", "read_recovered", beats=3)
        == "Fleetwatch lee la flota de nuevo, después de 3 latido(s) fallido(s)."
    )
    assert word("es", "why_offline") == "desconectada"
    assert word("es", "notice_page", url="http://127.0.0.1:1/").startswith("Apruébelo o recházelo")
    assert not [k for k, text in WORDS["es"].items() if "equipo" in text]
