"""A count is said as each language counts it, never as "fila(s)" (issue 28, item 9): plural
entries of the catalogue (``ngettext``), keyed ones too."""

from __future__ import annotations

import datetime as dt
import re

from services.assistant.watch.words import word
from shared.text.catalogue import Nn_, Words, say_text
from tests.shared.text.test_spanish_terms import spanish

NOW = dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC)


def test_no_message_says_a_count_with_a_bracketed_plural() -> None:
    def bracketed(text: str) -> bool:
        return re.search(r"\w\((?:s|es)\)", text.replace("http(s)", "")) is not None

    assert [english for english, _ in spanish() if bracketed(english)] == []
    assert [said for _, said in spanish() if bracketed(said)] == []


def test_a_counted_message_takes_the_form_of_its_count_in_each_language() -> None:
    rows = Nn_("The audit chain verifies: %(n)s row.", "The audit chain verifies: %(n)s rows.")

    def said(n: int, language: str) -> str:
        return say_text(Words.counted(n, rows), language, zone=dt.UTC, now=NOW)

    assert said(1, "en") == "The audit chain verifies: 1 row."
    assert said(3, "en") == "The audit chain verifies: 3 rows."
    assert said(1, "es") == "La cadena de auditoría se verifica: 1 fila."
    assert said(3, "es") == "La cadena de auditoría se verifica: 3 filas."
    assert said(0, "es") == "La cadena de auditoría se verifica: 0 filas."


def test_the_watchs_counts_take_the_form_of_their_count() -> None:
    assert word("es", "count_new", n=1) == "1 nuevo" and word("es", "count_new", n=2) == "2 nuevos"
    assert word("es", "count_missed", n=1) == "1 grabación perdida"
    assert (
        word("en", "count_rooms", n=1) == "1 room change"
        and word("en", "count_rooms", n=4) == "4 room changes"
    )
    assert word("es", "wall_problem", n=1, code="epiphan_timeout") == (
        "El último latido no pudo leer la flota (epiphan_timeout)."
    )
    assert word("es", "h_read_recovered", n="?").endswith(
        "latidos fallidos"
    )  # an unknown count reads as many
