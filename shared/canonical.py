"""The one canonical form for hashing and sending (DESIGN §4). Pure functions, no I/O.

Canonical JSON here means: keys sorted by code point, UTF-8, compact separators
(``,`` and ``:``), non-ASCII kept as is (``ensure_ascii=False``), every string (keys and values)
in Unicode NFC, integers kept as integers and booleans as booleans. Values with no canonical
form are refused rather than coerced: floats (including NaN and infinities), integers outside
the signed 64-bit range, non-string keys, two keys that are equal after NFC, lone surrogates,
nesting deeper than `MAX_DEPTH`, and any type that is not JSON's.

Arguments of a proposed change get one more check (`canonicalize_arguments`): hidden, format,
control and bidirectional characters are refused with `Code.HIDDEN_CHARACTER`, naming the path
(``arguments.device_ids[0]``). The same function runs at proposal time and at run time.

Errors: `CanonicalError` (a `FleetwatchError`) with code `not_canonicalizable` or
`hidden_character`, and ``.path`` naming where the bad value sits.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from shared.errors import Code, FleetwatchError

MAX_DEPTH = 64
"""Deepest nesting of lists and objects accepted (the root counts as depth 0)."""

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
"""Unicode general categories refused in arguments: control, format, private use, surrogate,
line and paragraph separators."""

HIDDEN_CODEPOINTS = frozenset(
    [
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0x200E,
        0x200F,
        0x061C,
        *range(0x200B, 0x200E),
        0x2060,
        0xFEFF,
    ]
)
"""Bidi embeddings/overrides/isolates, directional marks, zero-width characters and the BOM.
Most are in category Cf already; they are listed so the refusal does not depend on the Unicode
version Python ships."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")


class CanonicalError(FleetwatchError):
    """A value has no canonical form.

    Attributes:
        code: `Code.NOT_CANONICALIZABLE` or `Code.HIDDEN_CHARACTER`.
        path: where the bad value sits, e.g. ``arguments.device_ids[0]`` (``$`` is the root).
    """

    def __init__(self, code: Code, path: str, problem: str) -> None:
        self.path = path
        super().__init__(code, f"{problem} at {path}")


def hidden_character(text: str) -> str | None:
    """The first hidden, format, control or bidi character in `text`, or None.

    Source of the list: `HIDDEN_CATEGORIES` and `HIDDEN_CODEPOINTS`.
    """
    for char in text:
        if ord(char) in HIDDEN_CODEPOINTS or unicodedata.category(char) in HIDDEN_CATEGORIES:
            return char
    return None


def describe_char(char: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``: a printable name for any character."""
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"


def child_path(path: str, key: str | int) -> str:
    """The path of a child: ``a.b`` for identifier keys, ``a["x y"]`` (ASCII-escaped) otherwise,
    ``a[3]`` for list indexes. Hidden characters in keys are shown escaped, never raw."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=True)}]"


def _string(text: str, path: str, refuse_hidden: bool) -> str:
    if refuse_hidden:
        bad = hidden_character(text)
        if bad is not None:
            raise CanonicalError(Code.HIDDEN_CHARACTER, path, f"hidden character {describe_char(bad)}")
    if _SURROGATE.search(text):
        raise CanonicalError(Code.NOT_CANONICALIZABLE, path, "lone surrogate in a string")
    return unicodedata.normalize("NFC", text)


def _normalize(value: Any, path: str, refuse_hidden: bool, depth: int) -> Any:
    """A plain JSON value (dict/list/str/int/bool/None) equal to `value` in canonical terms."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise CanonicalError(Code.NOT_CANONICALIZABLE, path, "integer outside the signed 64-bit range")
        return int(value)
    if isinstance(value, float):
        raise CanonicalError(Code.NOT_CANONICALIZABLE, path, f"float {value!r} (only integers are allowed)")
    if isinstance(value, str):
        return _string(value, path, refuse_hidden)
    if depth >= MAX_DEPTH:
        raise CanonicalError(Code.NOT_CANONICALIZABLE, path, f"nested deeper than {MAX_DEPTH}")
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalError(
                    Code.NOT_CANONICALIZABLE, path, f"non-string key of type {type(key).__name__}"
                )
            here = child_path(path, key)
            norm_key = _string(key, here, refuse_hidden)
            if norm_key in out:
                raise CanonicalError(
                    Code.NOT_CANONICALIZABLE, here, "duplicate key after Unicode normalisation"
                )
            out[norm_key] = _normalize(item, here, refuse_hidden, depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [
            _normalize(item, child_path(path, i), refuse_hidden, depth + 1) for i, item in enumerate(value)
        ]
    raise CanonicalError(Code.NOT_CANONICALIZABLE, path, f"value of type {type(value).__name__}")


def normalize(value: Any, *, path: str = "$", refuse_hidden: bool = False) -> Any:
    """`value` as plain JSON data in canonical terms: dicts, lists (tuples become lists), NFC
    strings, ints, bools and None. Idempotent.

    Raises:
        CanonicalError: `not_canonicalizable` (float, huge int, bad key, duplicate key after
            NFC, foreign type, too deep); `hidden_character` when `refuse_hidden` is set.
    """
    return _normalize(value, path, refuse_hidden, 0)


def _dumps(normalized: Any) -> bytes:
    return json.dumps(
        normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def canonical_json(value: Any) -> bytes:
    """The canonical JSON bytes (UTF-8) of `value`; equal values give equal bytes.

    Hidden characters are allowed here (audit details and a reason may hold a newline); use
    `canonicalize_arguments` for a change's arguments. ``True`` and ``1`` stay distinct.

    Raises:
        CanonicalError: `not_canonicalizable`, see `normalize`.
    """
    return _dumps(normalize(value))


def canonical_flat_json(fields: Mapping[str, str | int | None]) -> bytes:
    """`canonical_json` of a flat object whose keys are plain identifiers and whose values are
    strings, integers or None (an audit row's hashed fields), without the general walk: the same
    bytes, several times faster, for a walk over a long audit chain.

    Raises:
        CanonicalError: `not_canonicalizable` for a value of another type, an integer outside
            the signed 64-bit range, or a lone surrogate; a key that is not a plain identifier.
    """
    out: dict[str, str | int | None] = {}
    for key, value in fields.items():
        if not _IDENTIFIER.match(key):
            raise CanonicalError(Code.NOT_CANONICALIZABLE, "$", f"key {key!r} is not a plain identifier")
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise CanonicalError(Code.NOT_CANONICALIZABLE, f"$.{key}", "lone surrogate in a string")
            out[key] = unicodedata.normalize("NFC", value)
        elif value is None or (type(value) is int and INT_MIN <= value <= INT_MAX):
            out[key] = value
        else:
            return canonical_json(fields)  # the general walk names the problem
    return _dumps(out)


def canonicalize_arguments(
    args: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A change's arguments in canonical form, with top-level `defaults` filled for absent keys.

    Every string (keys and values, at any depth) is NFC; an explicit ``None`` is kept (it is
    not "absent"). The result is a fresh dict; ``canonicalize_arguments(result, defaults)``
    returns an equal dict, so proposal time and run time agree. Paths start at ``arguments``
    (``defaults`` for a bad default).

    Raises:
        CanonicalError: `hidden_character` (hidden, format, control or bidi character) or
            `not_canonicalizable` (see `normalize`; also when `args` is not a mapping).
    """
    if not isinstance(args, Mapping):
        raise CanonicalError(
            Code.NOT_CANONICALIZABLE, "arguments", f"arguments are a {type(args).__name__}, not an object"
        )
    normalized: dict[str, Any] = normalize(args, path="arguments", refuse_hidden=True)
    if defaults:
        filled: dict[str, Any] = normalize(defaults, path="defaults", refuse_hidden=True)
        filled.update(normalized)
        normalized = filled
    return normalized


def _refuse_constant(name: str) -> Any:
    raise CanonicalError(Code.NOT_CANONICALIZABLE, "$", f"non-finite number {name}")


def _refuse_float(text: str) -> Any:
    raise CanonicalError(Code.NOT_CANONICALIZABLE, "$", f"float {text} (only integers are allowed)")


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for key, value in pairs:
        nfc = unicodedata.normalize("NFC", key)
        if nfc in seen:
            raise CanonicalError(Code.NOT_CANONICALIZABLE, child_path("$", key), "duplicate key")
        seen.add(nfc)
        out[key] = value
    return out


def parse_json_strict(text: str | bytes) -> Any:
    """Parse JSON text, refusing what has no canonical form: duplicate keys (also keys equal
    after NFC), floats and exponents, NaN/Infinity, and malformed text. Strings are returned
    as written (not normalised); pass the result to `normalize` or `canonical_json`.

    Raises:
        CanonicalError: `not_canonicalizable`. Paths in duplicate-key errors are relative to the
            enclosing object (``$`` marks it), as the parser does not track depth.
    """
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_without_duplicates,
            parse_float=_refuse_float,
            parse_constant=_refuse_constant,
        )
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, huge int digits
        raise CanonicalError(Code.NOT_CANONICALIZABLE, "$", f"not JSON: {exc}") from exc
