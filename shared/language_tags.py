"""The languages Fleetwatch speaks, declared once, and how a person names one. Pure.

English and Latin American Spanish. `Language` is the type of a language on the wire (msgspec
refuses any other value) and in code; `LANGUAGES` lists them, the first the default
(`shared.text.languages` hands them to the words' modules). A person names a language as they
please: `parse_language` reads ``es``, ``ES``, ``es-419``, ``es_ES.UTF-8`` (a locale) or
``Spanish`` / ``español``; `system_language` reads the locale variables of an environment
(``LC_ALL``, then ``LC_MESSAGES``, then ``LANG``, as POSIX orders them). Here, below the
settings, because `shared.config` parses ``FLEETWATCH_LANGUAGE`` with them.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Final, Literal

Language = Literal["en", "es"]
"""A language's primary tag: ``en`` or ``es`` (the page says ``es-419``)."""
LANGUAGES: Final[tuple[Language, ...]] = typing.get_args(Language)
"""Every language, the first the default."""
NAMES: Final[Mapping[str, Language]] = {
    "english": "en",
    "inglés": "en",
    "ingles": "en",
    "spanish": "es",
    "español": "es",
    "espanol": "es",
    "castellano": "es",
}
"""A language's name (lower case) in either language, as a person may type it."""
LOCALE_VARIABLES: Final = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The locale variables that choose the words' language, the first set one deciding (POSIX)."""


def parse_language(raw: str | None) -> Language | None:
    """The language `raw` names, or None when it names none of `LANGUAGES`.

    Case does not matter; a tag with a region, an encoding or a modifier names its primary
    language (``es-419``, ``es_ES.UTF-8``, ``es_MX@euro``); so does a language's name in English
    or Spanish (`NAMES`). ``C`` and ``POSIX`` (a locale without a language) name none."""
    text = (raw or "").strip().lower()
    if text in NAMES:
        return NAMES[text]
    primary = text.replace("-", "_").split(".", 1)[0].split("@", 1)[0].split("_", 1)[0]
    return next((language for language in LANGUAGES if language == primary), None)


def system_language(env: Mapping[str, str]) -> Language | None:
    """The language of `env`'s locale: the first set of `LOCALE_VARIABLES` (``LANG=es_ES.UTF-8``
    is ``es``), or None when it names none of `LANGUAGES` (``C.UTF-8``) or none is set."""
    chosen = next((env[name] for name in LOCALE_VARIABLES if env.get(name)), None)
    return parse_language(chosen)
