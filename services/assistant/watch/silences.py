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
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

MAX_SILENCE: Final = timedelta(days=14)
"""The longest silence; a longer one is refused (``invalid_message``)."""
CLASS_KINDS: Final = frozenset({"not_recording_in_event", "missed_recording", "missed_recording_maybe"})
"""What a silence hides only with ``include_classes``."""


@dataclass(frozen=True, slots=True)
class Silence:
    """One silence as the watch store keeps it (times are UTC text, `times.utc_text`).
    ``target_kind``: ``room`` (``target`` a device ID) or ``group`` (``target`` the group's or
    building's name); ``target_name`` as the operator's words show it."""

    id: int
    target_kind: str
    target: str
    target_name: str
    reason: str
    include_classes: bool
    set_by: int
    set_by_name: str
    set_at: str
    until: str
    lifted_at: str | None = None

    @property
    def ends(self) -> str:
        """When it stops holding: its ``until``, or when it was lifted if sooner."""
        return self.lifted_at if self.lifted_at is not None and self.lifted_at < self.until else self.until

    def holds_at(self, at: str) -> bool:
        """True when it holds at `at` (UTC text)."""
        return self.set_at <= at < self.ends

    def covers(self, device_id: str, group: str) -> bool:
        """True when it names the room `device_id` or its group (or building) `group`."""
        if self.target_kind == "room":
            return self.target == device_id
        return bool(group) and self.target == group


def silencing(
    silences: Iterable[Silence], *, at: str, device_id: str, group: str, kind: str | None
) -> Silence | None:
    """The silence that hides a change of kind `kind` (a finding's kind, or a history row's)
    in room `device_id` of group `group` at `at`, if any (see the module docstring)."""
    for silence in silences:
        if not silence.holds_at(at) or not silence.covers(device_id, group):
            continue
        if kind in CLASS_KINDS and not silence.include_classes:
            continue
        return silence
    return None
