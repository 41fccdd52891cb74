"""Room notes: an operator's one line per room. Pure.

`clean_note` strips what a note must not carry (control, format and bidi characters, line and
paragraph separators: a note is one line that shows as typed), folds runs of spaces and cuts
it to `MAX_NOTE_CHARS`. `match_room` finds the one room a name means among the rooms the
watch last read: the room whose name (or device ID) is exactly the query, ignoring case,
accents and repeated spaces; else the rooms whose name holds it. More than one: ambiguous,
and nothing is saved. A note is data: it is shown under its room (digest, wall, answers) and
reaches the model only inside the data block.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Final, TypeVar

from shared.canonical import HIDDEN_CATEGORIES, HIDDEN_CODEPOINTS
from shared.wire.assistant import MAX_NOTE_CHARS

MAX_CANDIDATES: Final = 20
"""Most candidates an ambiguous room name lists."""
_STRIPPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}) | HIDDEN_CATEGORIES

R = TypeVar("R")


def clean_note(text: str) -> str:
    """`text` as a note: hidden, control, format and bidi characters removed (a tab or line
    break becomes a space), spaces folded, trimmed, cut to `MAX_NOTE_CHARS` (an ellipsis marks
    a cut)."""
    kept = []
    for char in unicodedata.normalize("NFC", text):
        if char in "\t\n\r\v\f\u2028\u2029":
            kept.append(" ")
        elif ord(char) in HIDDEN_CODEPOINTS or unicodedata.category(char) in _STRIPPED_CATEGORIES:
            continue
        else:
            kept.append(char)
    folded = " ".join("".join(kept).split())
    return folded if len(folded) <= MAX_NOTE_CHARS else folded[: MAX_NOTE_CHARS - 1].rstrip() + "…"


def fold(text: str) -> str:
    """`text` for comparing names: case and accents ignored, spaces folded."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.split())


def match_room(query: str, rooms: Sequence[tuple[str, str, R]]) -> list[R]:
    """The rooms `query` names, from ``(device_id, name, room)`` triples: the exact matches
    (name or device ID) if any, else the rooms whose name holds the query. One item: found;
    none: not found; several: ambiguous (at most `MAX_CANDIDATES` returned)."""
    wanted = fold(query)
    if not wanted:
        return []
    exact = [room for device_id, name, room in rooms if fold(name) == wanted or device_id == query.strip()]
    if exact:
        return exact[:MAX_CANDIDATES]
    return [room for _, name, room in rooms if wanted in fold(name)][:MAX_CANDIDATES]
