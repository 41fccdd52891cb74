"""The one "did you mean": the known word nearest to a misspelt one, as it is spelt."""

from __future__ import annotations

from shared.spelling import closest


def test_the_closest_known_word_is_given_as_it_is_spelt_whatever_the_case_typed() -> None:
    assert closest("stauts", ["status", "pending", "audit"]) == "status"
    assert closest("ES", ["en", "es"]) == "es"
    assert closest("FLEETWATCH_APROVE_PORT", ["FLEETWATCH_APPROVE_PORT"], cutoff=0.75) == (
        "FLEETWATCH_APPROVE_PORT"
    )


def test_a_word_like_none_of_them_gets_no_guess() -> None:
    assert closest("xyzzy", ["status", "pending"]) is None
    assert closest("anything", []) is None
