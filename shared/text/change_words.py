"""Changes and refusals in words, in English and Latin American Spanish, from the one
catalogue (`shared.text.catalogue`: the messages here are its English IDs; a translator edits
the Spanish in ``shared/text/locales/es``). Pure.

A person reads rooms and changes in words, never tool names or codes alone: "start recording
in Sandbox Classroom", "the queue already holds 3 proposals; approve or deny one first". Used
by the assistant's code-built lines (proposals made, proposals refused), ``fleetwatch status``
and ``fleetwatch demo``. Every name from the fleet passes through `shared.text.display.visible`
and stands in the reader's quote marks (`shared.text.changes.quoted_name`).

The catalogue has a sentence, keyed by the code (``msgctxt "why"``), for every code a proposal
can be refused with, or an answer can end on (the assistant's manifest: ``propose_change``,
``list_writable_devices``, reads, ``ask``); a test holds the two together and checks that no
sentence holds a snake_case word. A sentence may name ``%(max_pending)s``, ``%(per_hour)s``
(the policy's numbers), nothing else.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from shared.errors import Code
from shared.text.catalogue import C_, N_, Joined, Words, keyed, say_text
from shared.text.changes import quoted_name
from shared.text.display import visible
from shared.text.languages import language_of

CHANGES: Final[Mapping[tuple[str, str | None], str]] = MappingProxyType(
    {
        ("batch_recording", "start"): N_("start recording"),
        ("batch_recording", "stop"): N_("stop recording"),
        ("batch_recording", None): N_("start or stop recording"),
        ("start_stream_endpoint", None): N_("start streaming"),
        ("stop_stream_endpoint", None): N_("stop streaming"),
        ("confirm_cms_event_on_device", None): N_("confirm the scheduled event"),
        ("batch_reboot", None): N_("reboot"),
        ("batch_firmware_update", None): N_("update the firmware"),
    }
)
"""(tool, its ``action`` argument or None) -> what the change does (a catalogue message)."""
OTHER_CHANGE: Final = N_("a change")

_NOT_PROPOSED: Final = N_("Not proposed")
_UNKNOWN_ROOM: Final = C_("room", "device %(id)s")
_CANNOT: Final = N_("it could not be done")
SNAKE_CASE: Final = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
"""What a raw code or tool name looks like (``queue_full``, ``batch_recording``)."""


def _say(words: Words, language: str) -> str:
    return say_text(words, language_of(language), zone=dt.UTC, now=dt.datetime.now(dt.UTC))


def change_words_of(tool: str, action: str | None) -> Words:
    """What a change does, in words: ``start recording``, ``reboot``..."""
    return Words.of(CHANGES.get((tool, action)) or CHANGES.get((tool, None)) or OTHER_CHANGE)


def change(tool: str, action: str | None, language: str) -> str:
    """`change_words_of` said in `language`."""
    return _say(change_words_of(tool, action), language)


def rooms_words(names: Sequence[str], ids: Sequence[str]) -> Joined:
    """The rooms a change names: their names (made visible and quoted: `quoted_name`), or
    ``device <ID>`` where a name is not known; joined with commas."""
    return Joined(
        ", ",
        tuple(
            quoted_name(names[i])
            if i < len(names) and names[i]
            else Words.in_context("room", _UNKNOWN_ROOM, id=visible(d, 40))
            for i, d in enumerate(ids)
        ),
    )


def change_in_words(tool: str, action: str | None, names: Sequence[str], ids: Sequence[str]) -> Words:
    """``start recording in Sandbox Classroom`` (no rooms known: the change alone)."""
    what = change_words_of(tool, action)
    return Words.of(N_("%(what)s in %(where)s"), what=what, where=rooms_words(names, ids)) if ids else what


def change_in(tool: str, action: str | None, names: Sequence[str], ids: Sequence[str], language: str) -> str:
    """`change_in_words` said in `language`."""
    return _say(change_in_words(tool, action, names, ids), language)


def why_words(code: Code, *, max_pending: int = 3, per_hour: int = 10) -> Words:
    """Why, in words, for a stable code (the catalogue's ``why`` entry); a code without one
    gets the plain "it could not be done" (never the code itself)."""
    return keyed("why", code, max_pending=max_pending, per_hour=per_hour) or Words.of(_CANNOT)


def why(code: Code, language: str, *, max_pending: int = 3, per_hour: int = 10) -> str:
    """`why_words` said in `language`."""
    return _say(why_words(code, max_pending=max_pending, per_hour=per_hour), language)


def not_proposed(what: str, code: Code, language: str, **numbers: int) -> str:
    """``Not proposed: start recording in Sandbox Classroom: the queue already holds …``."""
    words = Words.of(
        N_("%(label)s: %(what)s: %(why)s."),
        label=Words.of(_NOT_PROPOSED),
        what=what,
        why=why_words(code, **numbers),
    )
    return _say(words, language)
