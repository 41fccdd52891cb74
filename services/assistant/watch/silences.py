"""Silences: an operator's "say nothing about this room (or group) until then, because …".
Pure (no I/O, no clock: pass the time).

A silence names a room (its device ID) or a group (an Epiphan group's name, or a building of
the policy's ``watch.buildings``), a reason, who set it (the uid assistant.sock's peer had, and
that user's name) and until when: **every silence expires** (at most `MAX_SILENCE`), and may be
lifted sooner. While it holds, the digest leaves out what changed in its rooms, the problems
*and* their return to normal; the history keeps every change. It never hides a room's "not
recording during an event" (nor a missed recording) unless it was set with
``include_classes``: a class that is not captured is what the watch is for.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Final

from shared.wire.assistant import SilenceView

MAX_SILENCE: Final = timedelta(days=14)
"""The longest silence; a longer one is refused (``invalid_message``)."""
CLASS_KINDS: Final = frozenset({"not_recording_in_event", "missed_recording", "missed_recording_maybe"})
"""What a silence hides only with ``include_classes``."""


Silence = SilenceView
"""A silence as the watch store keeps it and assistant.sock shows it (times are UTC text,
`times.utc_text`): ``target_kind`` ``room`` (``target`` a device ID) or ``group`` (``target``
the group's or building's name); ``target_name`` as the operator's words show it."""


def ends(silence: Silence) -> str:
    """When `silence` stops holding: its ``until``, or when it was lifted if sooner."""
    lifted = silence.lifted_at
    return lifted if lifted is not None and lifted < silence.until else silence.until


def holds_at(silence: Silence, at: str) -> bool:
    """True when `silence` holds at `at` (UTC text)."""
    return silence.set_at <= at < ends(silence)


def covers(silence: Silence, device_id: str, group: str) -> bool:
    """True when `silence` names the room `device_id` or its group (or building) `group`."""
    if silence.target_kind == "room":
        return silence.target == device_id
    return bool(group) and silence.target == group


def silencing(
    silences: Iterable[Silence], *, at: str, device_id: str, group: str, kind: str | None
) -> Silence | None:
    """The silence that hides a change of kind `kind` (a finding's kind, or a history row's)
    in room `device_id` of group `group` at `at`, if any (see the module docstring)."""
    for silence in silences:
        if not holds_at(silence, at) or not covers(silence, device_id, group):
            continue
        if kind in CLASS_KINDS and not silence.include_classes:
            continue
        return silence
    return None
