"""Why a question cannot be asked, in the same words on every surface that takes one (the
``fleetwatch ask`` command, the ask page): one catalogue entry for an empty question, with an
example question in the reader's language, and one for a question that is too long. Pure.

Each surface gives the example as its reader would write it: the command as a command to copy
(``fleetwatch ask 'What needs attention?'``), the page as the question in quote marks.
"""

from __future__ import annotations

from typing import Final

from shared.text.catalogue import N_, Words

EXAMPLE_QUESTION: Final = N_("What needs attention?")
"""The example question the words give (translated by the surface into the reader's language)."""


def question_refusal(question: str, *, example: str, most: int) -> Words | None:
    """Why `question` cannot be asked, or None when it can: empty or blank (the words give
    `example`, the surface's way to ask `EXAMPLE_QUESTION`), or longer than `most` characters
    (``shared.wire.formats.MAX_QUESTION_CHARS``; the words say how long it is and the most)."""
    if not question.strip():
        return Words.of(N_("The question is empty: write it in words, e.g. %(example)s"), example=example)
    if len(question) > most:
        return Words.of(
            N_("The question has %(n)s characters; ask it in at most %(max)s."),
            n=len(question),
            max=most,
        )
    return None
