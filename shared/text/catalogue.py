"""The one catalogue of words a person reads, in English and Latin American Spanish.

Plain gettext, edited by a translator with any PO editor:
``shared/text/locales/<lang>/LC_MESSAGES/messages.po`` holds every fixed text of the approval
page (templates and the words its code builds), the ``fleetwatch`` command's headings and
messages, and the policy's summaries. There is no build step: each process reads the ``.po``
files with Babel and compiles them in memory (`load_translations`). A message missing from a
catalogue shows in English.

Code marks a text with `N_` (Babel's extractor finds it), or with `C_` under a context for the
fixed tables of fleet words (`Lexicon`: findings, priorities, headings), and builds `Words`: a message ID and
its parameters (text, nested `Words`, or a `Moment`: a time shown in the reader's zone). A page
translates them into escaped HTML (``services.approval_web.page.i18n``); the command into plain
text (`say_text`).

To update the catalogues after changing texts (from the repository root)::

    pybabel extract --no-location -F shared/text/babel.cfg -k N_ -k C_:1c,2 -o /tmp/messages.pot .
    pybabel update -w 100 -i /tmp/messages.pot -d shared/text/locales
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import io
from collections.abc import Hashable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import BinaryIO, Final, TypeVar, Union, cast

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from shared.text.languages import LANGUAGES, Language
from shared.text.times import say_time

LOCALES_DIR: Final = Path(__file__).resolve().parent / "locales"
BABEL_CFG: Final = Path(__file__).resolve().parent / "babel.cfg"

Param = Union[str, "Words", "Moment"]


def N_(message: str) -> str:
    """Mark `message` for the catalogue without translating it now (it is, when shown)."""
    return message


def C_(context: str, message: str) -> str:
    """Mark `message` for the catalogue under `context` (a ``msgctxt``: the same English words
    may read differently in another table), without translating it now."""
    return message


K = TypeVar("K", bound=Hashable)
V = TypeVar("V", str, tuple[str, ...])


class Lexicon(Mapping[str, Mapping[K, V]]):
    """A table of fixed words by key, English in code (each marked with `C_` under one
    `context`, or ``context:key`` when `keyed`: the same English may need another translation
    per key), read per language from the catalogue: ``table["es"][key]``. An entry is a text or
    a tuple of texts (each translated); a text without a translation stays English."""

    def __init__(self, context: str, english: Mapping[K, V], *, keyed: bool = False) -> None:
        self._context = context
        self._keyed = keyed
        self._english = dict(english)
        self._cache: dict[str, Mapping[K, V]] = {}

    def __getitem__(self, language: str) -> Mapping[K, V]:
        if language not in LANGUAGES:
            raise KeyError(language)
        if language not in self._cache:
            catalogue = translations()[language]

            def one(key: K, text: str) -> str:
                return catalogue.pgettext(f"{self._context}:{key}" if self._keyed else self._context, text)

            self._cache[language] = MappingProxyType(
                {
                    key: cast(
                        V, one(key, entry) if isinstance(entry, str) else tuple(one(key, t) for t in entry)
                    )
                    for key, entry in self._english.items()
                }
            )
        return self._cache[language]

    def __iter__(self) -> Iterator[str]:
        return iter(LANGUAGES)

    def __len__(self) -> int:
        return len(LANGUAGES)


@dataclasses.dataclass(frozen=True, slots=True)
class Moment:
    """A time (UTC text, as the store and Epiphan give it) shown in the reader's zone and
    language, with the distance from now unless `relative` is False
    (`shared.text.times.say_time`)."""

    utc: str
    relative: bool = True


@dataclasses.dataclass(frozen=True, slots=True)
class Words:
    """A catalogue message (`msgid`, English) and its parameters, translated when shown."""

    msgid: str
    params: tuple[tuple[str, Param], ...] = ()

    @classmethod
    def of(cls, msgid: str, **params: object) -> Words:
        """``Words.of("Device %(id)s was not found.", id=device_id)``; values that are neither
        `Words` nor `Moment` become text."""
        return cls(
            msgid,
            tuple(sorted((k, v if isinstance(v, Words | Moment) else str(v)) for k, v in params.items())),
        )


def load_translations(locales_dir: Path = LOCALES_DIR) -> dict[Language, Translations]:
    """Each language's catalogue, compiled in memory from its ``.po`` file.

    Raises:
        OSError: a ``.po`` file is missing or unreadable.
        babel.messages.pofile.PoFileError: a ``.po`` file does not parse.
    """
    out: dict[Language, Translations] = {}
    for lang in LANGUAGES:
        with (locales_dir / lang / "LC_MESSAGES" / "messages.po").open("rb") as handle:
            catalog = read_po(handle, locale=lang, abort_invalid=True)
        buffer = io.BytesIO()
        write_mo(buffer, catalog)
        buffer.seek(0)
        out[lang] = Translations(buffer)
    return out


@functools.cache
def translations() -> dict[Language, Translations]:
    """`load_translations` of the shipped catalogue, read once per process (read-only data)."""
    return load_translations()


def translate(language: Language, message: str) -> str:
    """`message` (a catalogue message ID) in `language`; English when it has no translation."""
    return translations()[language].gettext(message)


def say_text(words: Words, language: Language, *, zone: dt.tzinfo, now: dt.datetime) -> str:
    """`words` as plain text in `language` (the command's output): parameters translated
    first, times in `zone` relative to `now`."""

    def value(param: Param) -> str:
        if isinstance(param, Words):
            return say_text(param, language, zone=zone, now=now)
        if isinstance(param, Moment):
            return say_time(param.utc, zone=zone, now=now, language=language, relative=param.relative)
        return param

    text = translate(language, words.msgid)
    return text % {k: value(v) for k, v in words.params} if words.params else text


def extract_policy(
    fileobj: BinaryIO, keywords: object, comment_tags: object, options: object
) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel extraction method for ``policy/tool_policy.yaml``: each propose rule's ``summary``
    and ``undo``, so the catalogue holds them. Yields ``(line, None, text, [comment])`` as
    Babel expects."""
    import yaml  # only when Babel extracts; the catalogue itself loads without it

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
