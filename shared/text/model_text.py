"""The model's words shown as quoted text: the one rule every surface uses. Pure.

What the model writes is untrusted (it read fleet names that may say anything, and it may obey
them), so it must never pass for what Fleetwatch recorded. `model_lines` is the one splitting and
marking rule for the CLI (``fleetwatch ask``), the ask page and Slack:

- the text is split at every line break Python knows (`str.splitlines`: LF, CR, CR LF, VT, FF,
  U+001C-U+001E, NEL U+0085, U+2028, U+2029), so no separator can start a line of its own
  unmarked;
- each line passes `shared.text.display.visible` (hidden, control and bidi characters shown as
  ``⟦U+XXXX⟧``) and starts with `MODEL_MARK` (``│ ``): quoted, as the model's;
- a line that imitates one of Fleetwatch's own headings or markers (`imitates`: the recorded
  heading, who answered, a code-built proposal or refusal line, the product's name; in any of
  `shared.text.languages.LANGUAGES`, ignoring case, width forms and leading bullets) also carries
  `IMITATION` in the reader's language, so a forged "What Fleetwatch recorded" reads as the
  model's.

Code-built lines (proposals, refusals, notes) are never passed through here: they are shown
apart, under the recorded heading, without the mark.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final

from shared.text.answered_by import ANSWERED_BY
from shared.text.catalogue import N_, translate
from shared.text.display import visible
from shared.text.languages import LANGUAGES, language_of

MODEL_MARK: Final = "│ "
"""What starts every line of the model's words on every surface (U+2502 and a space)."""
LINE_CAP: Final = 2000
"""Longest line of the model's words shown (characters, markers included)."""
RECORDED_HEADING: Final = N_("What Fleetwatch recorded (not the assistant's words):")
"""The heading above the code-built lines (proposals, changes not proposed)."""
MODEL_HEADING: Final = N_("The assistant's words (not checked by Fleetwatch):")
"""The heading above the model's quoted words."""
NOTES_HEADING: Final = N_("Room notes (operators' words):")
"""The heading above the operators' notes on the rooms an answer names (`Answer.notes`)."""
IMITATION: Final = N_("[written by the assistant, not by Fleetwatch]")
"""Put after `MODEL_MARK` on a model line that imitates a heading or marker of the product."""
PRODUCT_MARKERS: Final = (
    RECORDED_HEADING,
    MODEL_HEADING,
    IMITATION,
    N_("Proposal"),
    N_("Not proposed"),
    NOTES_HEADING,
    "Fleetwatch",
)
"""Headings and line starts only Fleetwatch's code writes (catalogue messages, each said in
every language when compared), besides the words of who answered (``answered by``)."""


def _folded(text: str) -> str:
    """`text` for comparing: compatibility forms folded (fullwidth, ligatures), case ignored,
    leading bullets, quote marks and spaces dropped, runs of spaces folded."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    start = 0
    while start < len(folded) and not folded[start].isalnum():
        start += 1
    return " ".join(folded[start:].split())


@functools.cache
def _markers() -> tuple[str, ...]:
    said = {translate(lang, marker) for marker in PRODUCT_MARKERS for lang in LANGUAGES}
    said |= {ANSWERED_BY[lang][key] for lang in LANGUAGES for key in ("model", "demo_model", "keyword")}
    return tuple(sorted(m for m in (_folded(s).rstrip(":.") for s in said) if m))


def imitates(line: str) -> bool:
    """True when `line` (one line of the model's words) could pass for a line of Fleetwatch's:
    it starts with, or holds, one of the product's headings or markers in any language."""
    folded = _folded(line)
    return any(folded.startswith(marker) or marker in folded for marker in _markers())


def model_lines(text: str, language: str) -> list[str]:
    """The model's `text` as the lines a surface shows, each one quoted (see the module
    docstring); a line that imitates the product is marked in `language`. An empty text gives
    no line; a blank line inside it stays a bare `MODEL_MARK` (stripped)."""
    label = translate(language_of(language), IMITATION)
    out = []
    for raw in text.splitlines():
        line = visible(raw.rstrip(), LINE_CAP)
        if not line.strip():
            out.append(MODEL_MARK.rstrip())
        elif imitates(raw):
            out.append(f"{MODEL_MARK}{label} {line}")
        else:
            out.append(f"{MODEL_MARK}{line}")
    while out and out[-1] == MODEL_MARK.rstrip():
        out.pop()
    return out
