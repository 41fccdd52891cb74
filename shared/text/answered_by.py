"""Which path answered a question, in words: the ask page and ``fleetwatch ask`` say the same."""

from __future__ import annotations

from typing import Final

from shared.text.catalogue import Lexicon
from shared.text.languages import language_of

ANSWERED_BY: Final = Lexicon("answered by")
"""Which path answered (`Answer.answered_by`: ``model``, ``demo_model``, ``keyword``), in words
(keyed catalogue entries)."""


def answered_by(path: str, language: str) -> str:
    """Who answered, in `language`; an unknown path as the model."""
    words = ANSWERED_BY[language_of(language)]
    return words.get(path) or words["model"]
