"""Tool results as one escaped data block: the only form in which fleet data reaches the model.

Every tool result (data or error) becomes exactly one block::

    <fleet_data source="get_devices_in_my_team">
    {"devices":[{"Id":"19012340101","Name":"SCI 101 Lecture Hall",...}]}
    </fleet_data>

Before anything else the payload goes through `shared.epiphan.model_data.for_model`: secrets are
redacted, and IP addresses, serial numbers, MAC addresses and host names are withheld (the
list `shared.epiphan.model_data.NEVER_SENT`), whatever produced the payload (an Epiphan read, an error
message, the sandbox list relayed by approval.sock).

The body is JSON in which ``<``, ``>`` and ``&`` and every hidden, control, format or bidi
character (`shared.canonical.HIDDEN_CODEPOINTS` and categories) are written as ``\\uXXXX``
escapes, so no name can close the block, open a tag, or hide text; the JSON still decodes to
the same strings. Caps keep a block small: lists and maps keep their first `MAX_ITEMS` entries
(a ``"…": "<n> more not shown"`` marker says so), strings are cut at `MAX_STRING` characters,
nesting below `MAX_DEPTH` is replaced by a marker, and a block over `MAX_BLOCK_CHARS` is
rebuilt with smaller item caps. The ``source`` attribute is a tool name we offered (or
``error``), never text from the fleet or the model. Pure functions.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any, Final

from shared.canonical import HIDDEN_CATEGORIES, HIDDEN_CODEPOINTS
from shared.epiphan.model_data import WithheldValues, for_model

MAX_ITEMS: Final = 60
MAX_STRING: Final = 240
MAX_KEY: Final = 64
MAX_DEPTH: Final = 8
MAX_BLOCK_CHARS: Final = 48_000
OPEN: Final = "<fleet_data"
CLOSE: Final = "</fleet_data>"
MORE: Final = "…"
_ALWAYS_ESCAPED: Final = frozenset("<>&")


def _capped_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}{MORE}[{len(text) - limit} more characters]"


def cap(value: Any, *, max_items: int = MAX_ITEMS, depth: int = 0) -> Any:
    """A copy of a JSON-like `value` within the caps (see the module docstring)."""
    if isinstance(value, str):
        return _capped_text(value, MAX_STRING)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if depth >= MAX_DEPTH:
        return f"{MORE}[nested data not shown]"
    if isinstance(value, Mapping):
        items = list(value.items())
        out: dict[str, Any] = {
            _capped_text(str(k), MAX_KEY): cap(v, max_items=max_items, depth=depth + 1)
            for k, v in items[:max_items]
        }
        if len(items) > max_items:
            out[MORE] = f"{len(items) - max_items} more entries not shown"
        return out
    if isinstance(value, list | tuple):
        kept = [cap(v, max_items=max_items, depth=depth + 1) for v in value[:max_items]]
        if len(value) > max_items:
            kept.append({MORE: f"{len(value) - max_items} more items not shown"})
        return kept
    return _capped_text(str(value), MAX_STRING)


def _hidden(char: str) -> bool:
    return ord(char) in HIDDEN_CODEPOINTS or unicodedata.category(char) in HIDDEN_CATEGORIES


def _escape_char(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape_json(text: str) -> str:
    """JSON text with ``<``, ``>``, ``&`` and hidden characters as ``\\uXXXX`` escapes.

    Safe on JSON produced by `json.dumps`: those characters can only occur inside strings,
    where an escape decodes back to the same character.
    """
    return "".join(_escape_char(c) if c in _ALWAYS_ESCAPED or _hidden(c) else c for c in text)


def data_block(source: str, payload: Any, seen: WithheldValues | None = None) -> str:
    """One data block holding `payload` as the model may see it (see the module docstring).
    `source` must be a tool name we offered, or ``error``; it is not escaped. `seen`: the
    withheld values of this assistant (`shared.epiphan.model_data.WithheldValues`)."""
    shown = for_model(payload, seen)
    max_items = MAX_ITEMS
    while True:
        body = escape_json(
            json.dumps(cap(shown, max_items=max_items), ensure_ascii=False, separators=(",", ":"))
        )
        if len(body) <= MAX_BLOCK_CHARS or max_items <= 1:
            break
        max_items //= 2
    if len(body) > MAX_BLOCK_CHARS:
        body = escape_json(json.dumps({MORE: "result too large to show"}))
    return f'{OPEN} source="{source}">\n{body}\n{CLOSE}'


def error_block(
    source: str, code: str, message: str, /, seen: WithheldValues | None = None, **facts: Any
) -> str:
    """A data block holding ``{"error": {"code", "message", ...facts}}``."""
    return data_block(source, {"error": {"code": code, "message": message, **facts}}, seen)


def strip_blocks(text: str) -> str:
    """`text` with every data block removed (tests check that nothing else carries fleet text)."""
    out, rest = [], text
    while True:
        start = rest.find(OPEN)
        if start < 0:
            out.append(rest)
            return "".join(out)
        end = rest.find(CLOSE, start)
        if end < 0:
            out.append(rest[:start])
            return "".join(out)
        out.append(rest[:start])
        rest = rest[end + len(CLOSE) :]
