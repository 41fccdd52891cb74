"""The one catalogue of words a person reads, in English and Latin American Spanish.

Plain gettext, edited by a translator with any PO editor:
``shared/text/locales/<lang>/LC_MESSAGES/messages.po`` holds every fixed text of the approval
page (templates and the words its code builds), the ``fleetwatch`` command's headings and
messages, and the policy's summaries. The ``.po`` file is the source; a process reads its
compiled twin ``messages.mo`` beside it with the standard library's `gettext` when that twin
was compiled from exactly this ``.po`` (it carries the ``.po``'s SHA-256), and otherwise
compiles the ``.po`` in memory with Babel, so an edited ``.po`` shows at once, only slower.
``./scripts/setup`` and ``deploy/install.sh`` compile the twins (``python -m
shared.text.catalogue``, `compile_catalogues`); nothing compiles at run time into the package
(issue 14: parsing the ``.po`` files took a ``fleetwatch`` command 0.2 s and approval_web its
Babel message modules' memory). A message missing from a catalogue shows in English.

Code marks a text with `N_` (Babel's extractor finds it), or with `C_` under a context; a code's
or an enum value's words, and the fixed tables of fleet words (`Lexicon`: findings, priorities,
headings), are keyed entries of the catalogue alone (`CODE_CONTEXTS`, `keyed`). Code builds
`Words`: a message ID and
its parameters (text, nested `Words`, or a `Moment`: a time shown in the reader's zone). A page
translates them into escaped HTML (``services.approval_web.page.i18n``); the command into plain
text (`say_text`).

To update the catalogues after changing texts (from the repository root)::

    pybabel extract --no-location -F shared/text/babel.cfg -k N_ -k C_:1c,2 -k Nn_:1,2 -k Cn_:1c,2,3 \
        -o /tmp/messages.pot .
    pybabel update -w 100 -i /tmp/messages.pot -d shared/text/locales
    python -m shared.text.catalogue     # the compiled twins (or ./scripts/setup)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import gettext
import hashlib
import io
import os
import struct
import sys
from collections.abc import Iterator, Mapping
from gettext import GNUTranslations
from pathlib import Path
from typing import BinaryIO, Final, Union, cast

from shared.text.languages import LANGUAGES, Language
from shared.text.times import say_time

LOCALES_DIR: Final = Path(__file__).resolve().parent / "locales"
DOMAIN: Final = "messages"
"""The catalogue's gettext domain: ``locales/<lang>/LC_MESSAGES/messages.mo`` (argparse's words
are read through it: `services.ctl.main.said_in`)."""
BABEL_CFG: Final = Path(__file__).resolve().parent / "babel.cfg"
SOURCE_CONTEXT: Final = "fleetwatch-compiled-from"
"""The context of the one message a compiled catalogue adds to its ``.po``'s: ``pgettext(
SOURCE_CONTEXT, "sha256")`` is the SHA-256 (hex) of the ``.po`` it was compiled from. No text of
the code uses this context."""
SOURCE_KEY: Final = "sha256"
"""The message id under `SOURCE_CONTEXT` (a name, not a literal, at its use: Babel's extractor
must not take it for a text to translate)."""

Param = Union[str, "Words", "Moment", "Joined"]
CODE_CONTEXTS: Final = ("refusal", "why")
"""The contexts whose keys are stable codes (`shared.errors.Code`): ``msgctxt "refusal"``,
``msgid`` the code, each language's words its ``msgstr``.

Such a keyed entry (a context, and English words in the English catalogue's ``msgstr``: a code,
an enum's value, a table's key) lives in the catalogue only, no code names its words: adding a
code's words is adding its entries (`keyed`, `Lexicon`; Babel's extraction keeps them from the
English catalogue: `extract_keyed`)."""


def N_(message: str) -> str:
    """Mark `message` for the catalogue without translating it now (it is, when shown)."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a plural message (``ngettext``'s two English forms) for the catalogue without
    translating it now: ``Words.counted(n, Nn_("%(n)s row", "%(n)s rows"))``. A count is said by
    the catalogue's plural forms, never as ``row(s)``."""
    return singular, plural


def C_(context: str, message: str) -> str:
    """Mark `message` for the catalogue under `context` (a ``msgctxt``: the same English words
    may read differently in another table), without translating it now."""
    return message


PLACEHOLDER: Final = "placeholder"
"""The context of a help text's placeholders (argparse's metavars: ``ROOM``, ``KEY=VALUE``):
keyed entries, ``msgid`` the English placeholder, each language's its ``msgstr``."""


def placeholder(name: str) -> str:
    """The placeholder `name` (a metavar, English: ``ROOM``) in the language `gettext`'s own
    functions read while ``services.ctl.main.said_in`` holds (``SALA`` in Spanish): argparse's
    usage, help and complaints name it so. `name` itself when the catalogue has no entry."""
    return gettext.pgettext(PLACEHOLDER, name)


def key_of(key: object) -> str:
    """A table's key as a catalogue ``msgid``: an enum's value (an `enum.IntEnum`'s number, so
    the number itself finds it too), or the key as text."""
    return str(key.value if isinstance(key, enum.Enum) else key)


def has_words(context: str, key: str) -> bool:
    """Whether the catalogue has words for `key` under `context` (a keyed entry: in some
    language they differ from the key; gettext says a missing entry as the key itself)."""
    return any(catalogue.pgettext(context, key) != key for catalogue in translations().values())


@functools.cache
def keys_of(context: str) -> tuple[str, ...]:
    """The keys of the keyed entries under `context`, as the English ``.po`` lists them (read
    with Babel: for a walk over a table, never on a command's or a page's path).

    Raises:
        OSError: the English ``.po`` is missing or unreadable.
    """
    from babel.messages.pofile import read_po

    with (LOCALES_DIR / LANGUAGES[0] / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        return tuple(
            m.id for m in read_po(handle) if m.context == context and isinstance(m.id, str) and m.string
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Keyed(Mapping[str, str]):
    """One language's words of a `Lexicon`: ``keyed["more"]``, ``keyed.get(key, default)``."""

    catalogue: GNUTranslations
    context: str

    def get(self, key: object, default: str | None = None) -> str | None:
        """The words of `key` (`key_of`), or `default` when the catalogue has none."""
        msgid = key_of(key)
        return self.catalogue.pgettext(self.context, msgid) if has_words(self.context, msgid) else default

    def counted(self, key: object, n: int) -> str | None:
        """The words of `key` for a count of `n` when its entry is a plural one (``msgid`` and
        ``msgid_plural`` both the key, each language's forms its ``msgstr[i]``: ``npgettext``),
        else None."""
        msgid = key_of(key)
        said = self.catalogue.npgettext(self.context, msgid, msgid, n)
        return None if said == msgid else said

    def __getitem__(self, key: object) -> str:
        said = self.get(key)
        if said is None:
            raise KeyError(key)
        return said

    def __iter__(self) -> Iterator[str]:
        return iter(keys_of(self.context))

    def __len__(self) -> int:
        return len(keys_of(self.context))


class Lexicon(Mapping[str, Keyed]):
    """Words by a stable key (an enum's value, a phrase's name) under one `context`, all of them
    in the catalogue (``msgctxt`` the context, ``msgid`` the key, each language's words its
    ``msgstr``, English too): ``table["es"]["more"]``. A list's items are keys ``<key>.0``,
    ``<key>.1``..."""

    def __init__(self, context: str) -> None:
        self._context = context

    def __getitem__(self, language: str) -> Keyed:
        if language not in LANGUAGES:
            raise KeyError(language)
        return Keyed(translations()[cast(Language, language)], self._context)

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
class Joined:
    """`items` (each said first) joined by `separator` (a mark such as ``", "``, or words)."""

    separator: Param
    items: tuple[Param, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Words:
    """A catalogue message (`msgid`, English, under `context` when not None) and its
    parameters, translated when shown."""

    msgid: str
    params: tuple[tuple[str, Param], ...] = ()
    context: str | None = None
    plural: str | None = None
    """The English plural form (`counted`): the catalogue chooses a form for `count`."""
    count: int = 1

    def template(self, catalogue: GNUTranslations) -> str:
        """The message in `catalogue`'s language, its parameters not yet put in (the plural
        form for `count` when the message has one)."""
        if self.plural is not None:
            if self.context is None:
                return catalogue.ngettext(self.msgid, self.plural, self.count)
            return catalogue.npgettext(self.context, self.msgid, self.plural, self.count)
        if self.context is None:
            return catalogue.gettext(self.msgid)
        return catalogue.pgettext(self.context, self.msgid)

    @classmethod
    def counted(cls, n: int, forms: tuple[str, str], **params: object) -> Words:
        """``Words.counted(3, Nn_("%(n)s row", "%(n)s rows"))``: the form for `n` (given as the
        ``n`` parameter), as the reader's language counts."""
        singular, plural = forms
        return cls(singular, _params({"n": n, **params}), None, plural, n)

    @classmethod
    def of(cls, msgid: str, **params: object) -> Words:
        """``Words.of("Device %(id)s was not found.", id=device_id)``; values that are neither
        `Words` nor `Moment` become text."""
        return cls(
            msgid,
            _params(params),
        )

    @classmethod
    def in_context(cls, context: str, msgid: str, **params: object) -> Words:
        """`of`, under `context` (a ``msgctxt``, the message marked ``C_(context, msgid)``)."""
        return cls(msgid, _params(params), context)


def _params(params: Mapping[str, object]) -> tuple[tuple[str, Param], ...]:
    return tuple(
        sorted((k, v if isinstance(v, Words | Moment | Joined) else str(v)) for k, v in params.items())
    )


def keyed(context: str, key: str, **params: object) -> Words | None:
    """The words of `key` (a code, an enum's value) under `context`, or None when the
    catalogue has none (`has_words`)."""
    return Words(key, _params(params), context) if has_words(context, key) else None


def _catalogue_files(locales_dir: Path, language: Language) -> tuple[bytes, Path, GNUTranslations | None]:
    """`language`'s ``.po`` file (its bytes), the path of its compiled twin ``messages.mo``, and
    that twin when it is current (`_current_twin`).

    Raises:
        OSError: the ``.po`` file is missing or unreadable.
    """
    folder = locales_dir / language / "LC_MESSAGES"
    source, mo = (folder / "messages.po").read_bytes(), folder / "messages.mo"
    return source, mo, _current_twin(mo, hashlib.sha256(source).hexdigest())


def compile_po(source: bytes, language: Language) -> bytes:
    """The ``.mo`` bytes of a ``.po`` file's `source` (Babel; fuzzy entries left out, as
    ``pybabel compile`` does), with the `SOURCE_CONTEXT` message naming `source`'s SHA-256.

    Raises:
        babel.messages.pofile.PoFileError: `source` does not parse.
    """
    # Babel's message modules only here: a process whose compiled twins are current never
    # loads them (their import time and memory are what issue 14 took out).
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    catalog = read_po(io.BytesIO(source), locale=language, abort_invalid=True)
    catalog.add(SOURCE_KEY, hashlib.sha256(source).hexdigest(), context=SOURCE_CONTEXT)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


def compiled_from(catalogue: GNUTranslations) -> str:
    """The SHA-256 (hex) of the ``.po`` `catalogue` was compiled from (`compile_po`), or ``""``."""
    digest = catalogue.pgettext(SOURCE_CONTEXT, SOURCE_KEY)
    return "" if digest == SOURCE_KEY else digest


def _current_twin(mo: Path, digest: str) -> GNUTranslations | None:
    """The compiled twin `mo` when it exists, parses and was compiled from the ``.po`` whose
    SHA-256 is `digest`; else None (the caller compiles the ``.po`` itself)."""
    try:
        with mo.open("rb") as handle:
            twin = GNUTranslations(handle)
    except (OSError, ValueError, struct.error):  # missing, truncated, not a catalogue
        return None
    return twin if compiled_from(twin) == digest else None


def load_translations(locales_dir: Path = LOCALES_DIR) -> dict[Language, GNUTranslations]:
    """Each language's catalogue: its compiled twin ``messages.mo`` (stdlib `gettext`) when it
    was compiled from the ``.po`` beside it as it is now, else the ``.po`` compiled in memory
    (`compile_po`). Either way the words are the ``.po``'s.

    Raises:
        OSError: a ``.po`` file is missing or unreadable.
        babel.messages.pofile.PoFileError: a ``.po`` file without a current twin does not parse.
    """
    out: dict[Language, GNUTranslations] = {}
    for lang in LANGUAGES:
        source, _, twin = _catalogue_files(locales_dir, lang)
        out[lang] = twin if twin is not None else GNUTranslations(io.BytesIO(compile_po(source, lang)))
    return out


def compile_catalogues(locales_dir: Path = LOCALES_DIR) -> list[Path]:
    """Write each language's compiled twin ``messages.mo`` beside its ``.po`` where it is
    missing or not compiled from that ``.po`` (atomically: a reader sees the old file or the
    new one). The twins written (none when all are current).

    Raises:
        OSError: a twin cannot be written (the folder is not this user's).
        babel.messages.pofile.PoFileError: a ``.po`` file does not parse.
    """
    written = []
    for lang in LANGUAGES:
        source, mo, twin = _catalogue_files(locales_dir, lang)
        if twin is not None:
            continue
        import tempfile  # only when compiling (setup, install)

        handle, scratch = tempfile.mkstemp(dir=mo.parent, prefix=".messages-", suffix=".mo")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(compile_po(source, lang))
            os.chmod(scratch, 0o644)  # package data: readable by every service's user
            os.replace(scratch, mo)
        finally:
            Path(scratch).unlink(missing_ok=True)  # gone already once replaced
        written.append(mo)
    return written


@functools.cache
def translations() -> dict[Language, GNUTranslations]:
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
        if isinstance(param, Joined):
            return value(param.separator).join(value(item) for item in param.items)
        return param

    text = words.template(translations()[language])
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


def extract_keyed(
    fileobj: BinaryIO, keywords: object, comment_tags: object, options: object
) -> Iterator[tuple[int, str, tuple[str, ...], list[str]]]:
    """Babel extraction method for the English catalogue: its keyed entries (a context, and
    English words in the ``msgstr``: `CODE_CONTEXTS`), which no code names, so ``pybabel
    update`` keeps them. Yields ``(line, "C_", (context, key), [])``, read as ``C_``'s context
    and message."""
    from babel.messages.pofile import read_po  # only when Babel extracts

    for message in read_po(fileobj):
        if not message.context or not message.string:
            continue
        if isinstance(message.id, str) and isinstance(message.string, str):
            yield message.lineno, "C_", (message.context, message.id), []
        elif isinstance(message.id, tuple | list) and all(message.string):
            # a keyed plural entry (`Keyed.counted`), read as ``Cn_(context, key, key)``
            yield message.lineno, "Cn_", (message.context, *message.id), []


if __name__ == "__main__":
    # python -m shared.text.catalogue: compile the twins (scripts/setup, deploy/install.sh).
    for path in compile_catalogues():
        print(f"compiled {path}", file=sys.stderr)
