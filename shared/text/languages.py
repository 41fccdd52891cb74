"""The languages Fleetwatch speaks, for the words' modules: `Language` and `LANGUAGES` (declared
once, in `shared.language_tags`, with how a person names one), and `language_of`. The words
themselves live with each surface (the page's catalogues, `shared.text.fleet_words`, the
assistant's lines). Pure.
"""

from __future__ import annotations

from shared.language_tags import LANGUAGES, Language, parse_language, system_language

__all__ = ["LANGUAGES", "Language", "language_of", "parse_language", "system_language"]


def language_of(tag: str | None) -> Language:
    """`tag` when it is one of `LANGUAGES`, else the default (the first)."""
    return next((language for language in LANGUAGES if language == tag), LANGUAGES[0])
