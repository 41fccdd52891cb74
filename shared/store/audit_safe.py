"""What a refusal's audit row may copy of what it refuses.

A refusal is about input from outside (a forged ID, a huge field), so its row keeps such a
value only when it is short plain text; anything longer, or holding a hidden character, is
replaced by ``{"length", "prefix", "sha256"}``: its length in characters, its first
`PREFIX_CHARS` characters made visible (`shared.text.display.visible`), and the first 16 hex digits
of the SHA-256 of its UTF-8 bytes (enough to match it against a log, never enough to hold it).
Lists and maps are cut to `MAX_ITEMS` entries. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from shared.text.display import has_hidden, visible

MAX_TEXT_CHARS: Final = 200
"""Longest text a refusal row copies as it is."""
MAX_MESSAGE_CHARS: Final = 300
"""Longest message (words written by our code) a refusal row keeps."""
PREFIX_CHARS: Final = 16
MAX_KEY_CHARS: Final = 64
MAX_ITEMS: Final = 32


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def stand_in(text: str) -> dict[str, Any]:
    """Length, a short visible prefix and a short hash of `text`, in place of `text`."""
    return {
        "length": len(text),
        "prefix": visible(text[:PREFIX_CHARS], 4 * PREFIX_CHARS),
        "sha256": _digest(text),
    }


def _key(key: object) -> str:
    text = str(key)
    if len(text) <= MAX_KEY_CHARS and not has_hidden(text):
        return text
    return f"{visible(text[:PREFIX_CHARS], 4 * PREFIX_CHARS)}…#{_digest(text)}"


def safe_value(value: Any) -> Any:
    """`value` as a refusal row may hold it (see the module doc); numbers, booleans and None
    unchanged."""
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT_CHARS and not has_hidden(value) else stand_in(value)
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {_key(k): safe_value(v) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            out["…"] = f"{len(items) - MAX_ITEMS} more"
        return out
    if isinstance(value, list | tuple):
        kept = [safe_value(v) for v in value[:MAX_ITEMS]]
        return kept + ([f"… {len(value) - MAX_ITEMS} more"] if len(value) > MAX_ITEMS else [])
    return value


def safe_message(text: str) -> str:
    """A refusal's message made visible and cut to `MAX_MESSAGE_CHARS`."""
    return visible(text, MAX_MESSAGE_CHARS)
