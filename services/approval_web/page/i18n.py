"""The page's languages: English and Spanish (Latin America), picked from ``Accept-Language``.

The catalogue is plain gettext: ``locales/<lang>/LC_MESSAGES/messages.po`` beside this file,
edited by a translator with any PO editor. There is no build step: at start each ``.po`` is
read with Babel and compiled to ``.mo`` bytes in memory (`load_translations`). A message
missing from a catalogue shows in English.

Texts the code builds (card words, outcomes, refusal reasons) are marked with
`services.approval_web.page.words.N_` so Babel's extractor finds them; templates translate
them with ``say(words)`` when they render. The Jinja2
environments (`page_environments`, one per language, autoescaping on, i18n extension) are
built once per app.

To update the catalogues after changing texts::

    pybabel extract -F services/approval_web/page/babel.cfg -k N_ -o /tmp/messages.pot .   # from the repository root
    pybabel update -i /tmp/messages.pot -d services/approval_web/page/locales
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, Final

import jinja2
import yaml
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from markupsafe import Markup, escape

from services.approval_web.page.words import Words
from shared.text.change_words import change
from shared.text.languages import LANGUAGES

HTML_LANG: Final = {"en": "en", "es": "es-419"}
"""The ``lang`` attribute of each language's pages."""
PAGE_DIR: Final = Path(__file__).resolve().parent
LOCALES_DIR: Final = PAGE_DIR / "locales"
TEMPLATES_DIR: Final = PAGE_DIR / "templates"
MAX_ACCEPT_LANGUAGE: Final = 400


def load_translations(locales_dir: Path = LOCALES_DIR) -> dict[str, Translations]:
    """Each language's catalogue, compiled in memory from its ``.po`` file.

    Raises:
        OSError: a ``.po`` file is missing or unreadable.
        babel.messages.pofile.PoFileError: a ``.po`` file does not parse.
    """
    out: dict[str, Translations] = {}
    for lang in LANGUAGES:
        with (locales_dir / lang / "LC_MESSAGES" / "messages.po").open("rb") as handle:
            catalog = read_po(handle, locale=lang, abort_invalid=True)
        buffer = io.BytesIO()
        write_mo(buffer, catalog)
        buffer.seek(0)
        out[lang] = Translations(buffer)
    return out


def negotiate(accept_language: str | None) -> str:
    """The language to use for an ``Accept-Language`` header: the supported one with the
    highest q-value (``es-MX``, ``es-419`` -> ``es``), English when none is supported."""
    if not accept_language:
        return LANGUAGES[0]
    best, best_q = LANGUAGES[0], 0.0
    for order, part in enumerate(accept_language[:MAX_ACCEPT_LANGUAGE].split(",")):
        tag, _, params = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                continue
        if primary in LANGUAGES and (q > best_q or (q == best_q and order == 0)) and q > 0:
            best, best_q = primary, q
    return best


def _change_words(tool: str, action: str | None = None, *, language: str) -> str:
    """What a change does, in words of `language` (`shared.text.change_words.change`)."""
    return change(tool, action, language)


def page_environments(translations: Mapping[str, Translations]) -> dict[str, jinja2.Environment]:
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
        env.globals["say"] = make_say(translations[lang])
        env.globals["change_words"] = functools.partial(_change_words, language=lang)
        envs[lang] = env
    return envs


def make_say(translations: Translations) -> Callable[[Words], Markup]:
    """``say(words) -> Markup``: `words` translated by `translations`, its parameters (text or
    nested `Words`, translated first) escaped into the catalogue's text."""

    def say(words: Words) -> Markup:
        text = escape(translations.gettext(words.msgid))
        if not words.params:
            return text
        values = {k: say(v) if isinstance(v, Words) else escape(v) for k, v in words.params}
        return text % values

    return say


def extract_policy(
    fileobj: BinaryIO, keywords: object, comment_tags: object, options: object
) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel extraction method for ``policy/tool_policy.yaml``: each propose rule's ``summary``
    and ``undo`` (the card's "What happens" and "How to undo it"), so the catalogue holds them.
    Yields ``(line, None, text, [comment])`` as Babel expects."""
    lines = fileobj.read().decode("utf-8").splitlines()
    rules = (yaml.safe_load("\n".join(lines)) or {}).get("propose") or {}
    for tool, rule in rules.items():
        for field in ("summary", "undo"):
            text = rule.get(field)
            if isinstance(text, str):
                line = next(
                    (
                        n
                        for n, t in enumerate(lines, 1)
                        if t.strip().startswith(f"{field}:") and text[:20] in t
                    ),
                    0,
                )
                yield line, None, text, [f"tool_policy.yaml: {tool}.{field}"]
