"""Fleet text made safe to show a person: the one escaping helper for every output of a name.

Names, labels and reasons come from the fleet or the model and are untrusted. Every hidden,
control, format or bidi character (the set `shared.canonical.hidden_character` refuses in
arguments) is made harmless before a terminal or a page shows it, so a right-to-left override
or a terminal escape cannot change what is seen:

- in text (`visible`), it becomes a visible marker such as ``⟦U+202E⟧``, and the text is capped;
- in JSON (`safe_json`), it becomes a ``\\uXXXX`` escape: valid, lossless JSON a terminal
  cannot be tricked by.

Every surface that prints a name uses one of these two: the CLI's text and ``--json`` output,
the answers' sentences, the page (through Jinja, which also escapes HTML).
"""

from __future__ import annotations

import json
import pwd
import unicodedata
from datetime import UTC, datetime
from typing import Any

import msgspec

from shared.canonical import HIDDEN_CATEGORIES, HIDDEN_CODEPOINTS

ELLIPSIS = "…"


def _is_hidden(char: str) -> bool:
    return ord(char) in HIDDEN_CODEPOINTS or unicodedata.category(char) in HIDDEN_CATEGORIES


def visible(text: str, cap: int = 200) -> str:
    """``text`` with hidden characters shown as ``⟦U+XXXX⟧`` and cut to ``cap`` characters.

    A cut string ends with ``…``; ``cap`` counts characters of the result, markers included.
    """
    out = "".join(f"⟦U+{ord(c):04X}⟧" if _is_hidden(c) else c for c in text)
    return out if len(out) <= cap else out[: max(cap - 1, 0)] + ELLIPSIS


def has_hidden(text: str) -> bool:
    """True when ``text`` holds any character `visible` would mark."""
    return any(_is_hidden(c) for c in text)


LOOKALIKE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})
"""Scripts whose letters look like Latin ones (``а`` U+0430 beside ``a``)."""


def lookalike(text: str) -> bool:
    """True when `text` could pass for another name: a letter from a script that looks like
    Latin (`LOOKALIKE_SCRIPTS`), a compatibility form such as fullwidth ``Ｌａｂ`` (NFKC changes
    it), a combining mark that does not compose into its letter, or a digit of another script
    (any decimal digit, category ``Nd``, but ASCII ``0``-``9``: ``١٢`` or ``߁`` read as another
    room's number or device ID). A surface that shows such a name (a room's or a channel's) for
    a room a person decides about marks it and shows the device ID beside it."""
    if unicodedata.normalize("NFKC", text) != text:
        return True
    for char in unicodedata.normalize("NFC", text):
        if unicodedata.category(char).startswith("M"):
            return True
        if unicodedata.category(char) == "Nd" and not "0" <= char <= "9":
            return True
        if char.isalpha() and unicodedata.name(char, "").split(" ")[0] in LOOKALIKE_SCRIPTS:
            return True
    return False


def width(text: str) -> int:
    """Columns `text` takes on a terminal (East Asian wide and fullwidth letters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _escaped(char: str) -> str:
    data = char.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(data[i : i + 2], 'big'):04x}" for i in range(0, len(data), 2))


def _json_default(value: object) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    raise TypeError(type(value).__name__)


def safe_json(value: Any) -> str:
    """Indented, key-sorted JSON of `value` (builtins, msgspec Structs, datetimes as UTC ISO
    text) in which every hidden
    character is written as a ``\\uXXXX`` escape: lossless, and inert on a terminal.

    Raises:
        TypeError: `value` holds something JSON cannot carry.
    """
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=_json_default)
    # json.dumps already escapes U+0000-U+001F inside strings: raw ones are the indentation.
    return "".join(_escaped(c) if c >= "\x7f" and _is_hidden(c) else c for c in text)


def account_name(uid: int) -> str:
    """The name of the local account `uid`, made visible (``uid N`` when it has none): who
    decided, as the page and ``fleetwatch audit decisions`` name a person."""
    try:
        return visible(pwd.getpwuid(uid).pw_name, 64)
    except KeyError:
        return f"uid {uid}"
