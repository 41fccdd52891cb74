"""Fleet text made safe to show a person: hidden characters made visible, length capped.

Names, labels and reasons come from the fleet or the model and are untrusted. Before a terminal
or a page shows one, every hidden, control, format or bidi character (the set
`shared.canonical.hidden_character` refuses in arguments) is replaced by a visible marker such
as ``⟦U+202E⟧``, so a right-to-left override or a terminal escape cannot change what is seen.
HTML escaping is still the template's job; this only makes the invisible visible.
"""

from __future__ import annotations

import unicodedata

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
