"""Why something was refused, in words, for every stable code a page or a command can show:
a refusal the page shows (``Nothing ran: …``, a card's blocker) never reads ``error code …``."""

from __future__ import annotations

import datetime as dt

import pytest

from shared.errors import Code
from shared.text.catalogue import Words, say_text
from shared.text.refusals import refusal_words

NOW = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)


def said(words: Words, language: str) -> str:
    return say_text(words, language, zone=dt.UTC, now=NOW)  # type: ignore[arg-type]


@pytest.mark.parametrize("code", list(Code))
def test_every_code_has_refusal_words_in_english_and_in_spanish(code: Code) -> None:
    english, spanish = said(refusal_words(code), "en"), said(refusal_words(code), "es")
    assert code.value not in english and code.value not in spanish, (english, spanish)
    assert english != spanish and "%(" not in english + spanish


def test_observe_mode_on_the_page_says_the_policy_only_watches() -> None:
    page = Words.of("Nothing ran: %(why)s", why=refusal_words("observe_mode"))
    assert said(page, "en") == "Nothing ran: the policy is set to only watch, so nothing may be proposed"
    assert said(page, "es").startswith("No se ejecutó nada: la política está configurada solo para observar")


def test_a_code_nobody_declared_is_still_shown_as_itself() -> None:
    assert said(refusal_words("no_such_code"), "en") == "error code no_such_code"
