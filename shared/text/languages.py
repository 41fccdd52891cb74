"""The languages Fleetwatch speaks, declared once: English and Latin American Spanish.

`Language` is the type of a language on the wire (msgspec refuses any other value) and in
code; `LANGUAGES` lists them, the first the default. The words themselves live with each
surface (the page's catalogues, `shared.text.fleet_words`, the assistant's lines). Pure.
"""

from __future__ import annotations

import typing
from typing import Final, Literal

Language = Literal["en", "es"]
"""A language's primary tag: ``en`` or ``es`` (the page says ``es-419``)."""
LANGUAGES: Final[tuple[Language, ...]] = typing.get_args(Language)
"""Every language, the first the default."""


def language_of(tag: str | None) -> Language:
    """`tag` when it is one of `LANGUAGES`, else the default (the first)."""
    return next((language for language in LANGUAGES if language == tag), LANGUAGES[0])
