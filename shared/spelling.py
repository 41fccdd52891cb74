"""The known word nearest to a misspelt one, for every name a person or the model types: a
setting, a command, an option, a choice, a tool, an argument, an enum value. Pure.

One helper, so "did you mean" reads the same everywhere: ``difflib``'s ratio, case-insensitive,
the known word returned as it is spelt. ``difflib`` is imported only when a word is not known,
so a command that is typed right never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

CUTOFF: Final = 0.6
"""How alike two words must be (`difflib.SequenceMatcher.ratio`, 0 to 1) to be offered."""


def closest(word: str, known: Iterable[str], *, cutoff: float = CUTOFF) -> str | None:
    """The word of `known` nearest to `word` (compared case-insensitively), as `known` spells
    it; None when none is at least `cutoff` alike."""
    import difflib

    folded = {k.casefold(): k for k in known}
    found = difflib.get_close_matches(word.casefold(), list(folded), n=1, cutoff=cutoff)
    return folded[found[0]] if found else None
