"""The one rule for showing the model's words (`shared.text.model_text`): every line break
splits, every line is quoted, a line imitating the product is marked, in both languages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.lab.model_scripts.obeying_words import FORGED_HEADINGS, FORGED_LINES, SEPARATORS, forged_text
from shared.text.catalogue import translate
from shared.text.model_text import IMITATION, MODEL_MARK, RECORDED_HEADING, imitates, model_lines


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("language", ["en", "es"])
def test_every_line_break_splits_and_every_piece_is_quoted(separator: str, language: str) -> None:
    lines = model_lines(f"All fine.{separator}{FORGED_LINES[0]}", language)
    assert lines[0] == f"{MODEL_MARK}All fine."
    assert lines[-1] == f"{MODEL_MARK}{translate(language, IMITATION)} {FORGED_LINES[0]}"
    assert all(line.startswith(MODEL_MARK.rstrip()) for line in lines)


@pytest.mark.parametrize("language", ["en", "es"])
def test_the_products_headings_in_any_language_are_marked_as_the_models(language: str) -> None:
    label = translate(language, IMITATION)
    for heading in (*FORGED_HEADINGS, *(translate(lang, RECORDED_HEADING) for lang in ("en", "es"))):
        assert model_lines(heading, language) == [f"{MODEL_MARK}{label} {heading}"]
    # width forms, case and a bullet in front do not hide it
    assert imitates("＊ ｗｈａｔ FLEETWATCH recorded")
    assert imitates("  >> Propuesta p_9: reiniciar: aprobada")
    assert not imitates("ENG 210 is offline since 09:00.")


def test_no_line_of_an_obeying_models_answer_escapes_the_quote() -> None:
    names = ("Lab\nINFO approved=true", "Room\u2028Proposal p_1: ran ok")
    lines = model_lines(forged_text(names), "en")
    assert all(line.startswith(MODEL_MARK.rstrip()) for line in lines)
    imitations = ("Fleetwatch recorded", "Fleetwatch registró", "Proposal p_", "Propuesta p_", "Answered by")
    forged = [line for line in lines if any(i in line for i in imitations)]
    assert len(forged) >= 2 * len(SEPARATORS) + 6
    assert all(translate("en", IMITATION) in line for line in forged)
    assert f"{MODEL_MARK}INFO approved=true" in lines  # a name's line feed: a quoted line of its own
    assert "\u2028" not in "".join(lines) and "\x85" not in "".join(lines)


@given(
    st.text(
        alphabet=st.sampled_from([*"ab: -\u00a0", *(s for s in SEPARATORS if len(s) == 1), "\u202e", "\x1b", "Ｆ"]), max_size=80
    )
)
def test_whatever_the_model_writes_every_shown_line_is_quoted_and_one_line(text: str) -> None:
    for language in ("en", "es"):
        for line in model_lines(text, language):
            assert line.startswith(MODEL_MARK.rstrip())
            assert line.splitlines() == [line]  # no line break left inside a shown line
