"""The page's languages: English and Spanish (Latin America), picked from ``Accept-Language``.

The words come from the one catalogue (`shared.text.catalogue`: ``shared/text/locales``, shared
with the ``fleetwatch`` command), read once when the app starts. Texts the code builds
(card words, outcomes, refusal reasons) are `Words`; templates translate them with
``say(words)`` and show times with ``when(utc)`` (the operator's zone, relative to now), both
made for each render (`make_say`, `make_when`). The Jinja2 environments (`page_environments`,
one per language, autoescaping on, i18n extension) are built once per app.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Mapping
from gettext import GNUTranslations
from pathlib import Path
from typing import Final

import jinja2
from markupsafe import Markup, escape

from services.approval_web.page.words import Moment, Words
from shared.text.catalogue import Joined, Param
from shared.text.change_words import change, rooms_words
from shared.text.languages import LANGUAGES, Language
from shared.text.times import say_time

HTML_LANG: Final = {"en": "en", "es": "es-419"}
"""The ``lang`` attribute of each language's pages."""
PAGE_DIR: Final = Path(__file__).resolve().parent
TEMPLATES_DIR: Final = PAGE_DIR / "templates"


def _change_words(tool: str, action: str | None = None, *, language: str) -> str:
    """What a change does, in words of `language` (`shared.text.change_words.change`)."""
    return change(tool, action, language)


def page_environments(translations: Mapping[str, GNUTranslations]) -> dict[str, jinja2.Environment]:
    """One Jinja2 environment per language: templates from `TEMPLATES_DIR`, autoescaping on,
    undefined variables an error, newstyle gettext (``_("... %(name)s", name=x)`` escapes x)."""
    envs: dict[str, jinja2.Environment] = {}
    for lang in LANGUAGES:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            extensions=["jinja2.ext.i18n"],
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.install_gettext_translations(translations[lang], newstyle=True)
        env.globals["html_lang"] = HTML_LANG[lang]
        env.globals["language"] = lang
        env.globals["change_words"] = functools.partial(_change_words, language=lang)
        env.globals["rooms"] = rooms_words
        envs[lang] = env
    return envs


def make_when(*, zone: dt.tzinfo, now: dt.datetime, language: Language) -> Callable[..., str]:
    """``when(utc_text, relative=True) -> str``: a UTC time as the reader reads it (their zone,
    their language, the distance from `now`: `shared.text.times.say_time`)."""

    def when(moment: str | None, relative: bool = True) -> str:
        return say_time(moment, zone=zone, now=now, language=language, relative=relative)

    return when


def make_say(translations: GNUTranslations, when: Callable[..., str]) -> Callable[[Words | Joined], Markup]:
    """``say(words) -> Markup``: `words` translated by `translations`, its parameters (text,
    nested `Words` translated first, a `Moment` through `when`) escaped into the catalogue's
    text; `Joined` words (``rooms(...)``) each said and joined."""

    def say(words: Words | Joined) -> Markup:
        if isinstance(words, Joined):
            return _value(words)
        text = escape(words.template(translations))
        if not words.params:
            return text
        values = {k: _value(v) for k, v in words.params}
        return text % values

    def _value(value: Param) -> Markup:
        if isinstance(value, Words):
            return say(value)
        if isinstance(value, Moment):
            return escape(when(value.utc, value.relative))
        if isinstance(value, Joined):
            return _value(value.separator).join(_value(item) for item in value.items)
        return escape(value)

    return say
