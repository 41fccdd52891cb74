"""Judging answers against the lab's own state (not against hard-coded room lists).

`Truth` reads the lab's simulated world at one moment (``LabHandle.state`` and its clock): which
rooms of the normal team are offline, recording, short of storage, hot, behind on firmware,
dark, have a class within the hour, stream; which rooms the sandbox team has. `rooms_named`
finds which rooms of a list an answer names. Each `judge_*` returns a `Verdict`: right or
wrong, and why, in a few words. The rules are the lab's (its ``low`` storage is under a tenth
free; its warnings), written here again on purpose: a judge must not share code with what it
judges.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from services.lab.server import LabHandle
from services.lab.state import Device

HOT_C = 80.0
BUSY_PCT = 90.0
SOON = timedelta(minutes=60)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    why: str

    def __str__(self) -> str:
        return ("right" if self.ok else "WRONG") + (f": {self.why}" if self.why else "")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def rooms_named(text: str, names: Iterable[str]) -> set[str]:
    """The names (of `names`) that `text` holds as words, longest first (a name found inside a
    longer one that was found is not counted again)."""
    found: set[str] = set()
    rest = text
    for name in sorted(set(names), key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        if pattern.search(rest):
            found.add(name)
            rest = pattern.sub(" ", rest)
    return found


@dataclass
class Truth:
    """The lab's state at one moment."""

    now: datetime
    normal: list[Device]
    sandbox: list[Device]
    endpoints: list[str]
    events: dict[str, Any]
    sandbox_events: dict[str, Any]

    @classmethod
    def of(cls, lab: LabHandle) -> Truth:
        now = lab.now
        world = lab.state
        normal = world.team_devices("normal", now)
        sandbox = world.team_devices("sandbox", now)
        day = now + timedelta(hours=24)
        events = {d.id: world.current_or_next_event(d.id, now, day) for d in normal}
        sandbox_events = {d.id: world.current_or_next_event(d.id, now, day) for d in sandbox}
        names = [e.name for e in world.teams["normal"].endpoints.values()]
        return cls(now, normal, sandbox, names, events, sandbox_events)

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.normal]

    @property
    def all_names(self) -> list[str]:
        return self.names + [d.name for d in self.sandbox]

    def device(self, name: str) -> Device:
        return next(d for d in self.normal + self.sandbox if d.name == name)

    def offline(self) -> set[str]:
        return {d.name for d in self.normal if not d.online}

    def recording(self) -> set[str]:
        return {d.name for d in self.normal if d.online and any(c.recording for c in d.channels)}

    def short_of_storage(self) -> set[str]:
        return {
            d.name
            for d in self.normal
            if d.online  # an offline room's storage is unknown (Epiphan says ""), never short
            and (d.storage_total is None or d.storage_free is None or d.storage_free < d.storage_total // 10)
        }

    def hot(self) -> set[str]:
        return {
            d.name for d in self.normal if d.online and (d.cpu_temp_c >= HOT_C or d.cpu_load_pct >= BUSY_PCT)
        }

    def firmware_behind(self) -> set[str]:
        newest: dict[str, tuple[int, ...]] = {}
        for d in self.normal:
            newest[d.model] = max(newest.get(d.model, ()), _version(d.firmware))
        return {d.name for d in self.normal if _version(d.firmware) < newest[d.model]}

    def dark(self) -> set[str]:
        return {
            d.name for d in self.normal if d.online and any(not d.source_signal(c.source) for c in d.channels)
        }

    def class_soon(self) -> set[str]:
        """Rooms with a class on now or starting within the hour."""
        return {
            d.name
            for d in self.normal
            if (e := self.events.get(d.id)) is not None and e.start <= self.now + SOON and e.finish > self.now
        }

    def not_ready(self) -> set[str]:
        """Rooms with a class within the hour that are offline, dark, short of storage, hot, or
        not recording while their class is on."""
        bad = self.offline() | self.dark() | self.short_of_storage() | self.hot()
        on_now = {
            d.name
            for d in self.normal
            if (e := self.events.get(d.id)) is not None
            and e.start <= self.now < e.finish
            and not any(c.recording for c in d.channels)
        }
        return self.class_soon() & (bad | on_now)

    def with_class(self) -> set[str]:
        """Rooms with a class on now or within 24 hours."""
        return {d.name for d in self.normal if self.events.get(d.id) is not None}

    def due_recording(self) -> tuple[str, str] | None:
        """The sandbox room that is online, records on no channel and whose class starts
        soonest within the hour, with its first channel: what starting a due recording means."""
        due = [
            (e.start, d)
            for d in self.sandbox
            if d.online
            and not any(c.recording for c in d.channels)
            and (e := self.sandbox_events.get(d.id)) is not None
            and self.now < e.start <= self.now + SOON
        ]
        if not due:
            return None
        device = min(due, key=lambda pair: (pair[0], pair[1].id))[1]
        return device.id, device.channels[0].channel_id

    def streaming(self) -> set[str]:
        return {d.name for d in self.normal if any(p.started for c in d.channels for p in c.publishers)}

    def streams_set_up(self) -> set[str]:
        return {d.name for d in self.normal if any(c.publishers for c in d.channels)}


def judge_rooms(text: str, truth: Truth, expected: set[str], *, allowed: set[str] | None = None) -> Verdict:
    """Right when the answer names every expected room, and no room outside `allowed` (by
    default: outside the expected ones)."""
    named = rooms_named(text, truth.all_names)
    missing = expected - named
    extra = named - (allowed if allowed is not None else expected) - expected
    if missing or extra:
        parts = [f"missing {sorted(missing)}"] if missing else []
        parts += [f"also named {sorted(extra)}"] if extra else []
        return Verdict(False, "; ".join(parts))
    return Verdict(True, f"{len(expected)} of {len(expected)} rooms, no other")


def judge_room_status(text: str, truth: Truth, name: str, language: str) -> Verdict:
    """Right when the answer names the room, says online/offline and recording/not as the lab
    has it, and names its next class when it has one within 24 hours."""
    device = truth.device(name)
    named = rooms_named(text, truth.all_names)
    if named != {name}:
        return Verdict(False, f"names {sorted(named)}")
    folded = text.lower()
    online_word = ("online", "conectada")[language == "es"]
    offline_word = ("offline", "desconectada")[language == "es"]
    if device.online != (online_word in folded and offline_word not in folded):
        return Verdict(False, "online state wrong")
    recording = any(c.recording for c in device.channels)
    says_recording = ("recording ", "graba ")[language == "es"] in folded and (
        "not recording",
        "no está grabando",
    )[language == "es"] not in folded
    if device.online and recording != says_recording:
        return Verdict(False, "recording state wrong")
    event = truth.events.get(device.id)
    if event is not None and event.title not in text:
        return Verdict(False, "next class missing")
    return Verdict(True, "state, recording and next class as in the lab")


def judge_no_proposal(text: str, proposals: Sequence[Any], must_say: Sequence[str]) -> Verdict:
    if proposals:
        return Verdict(False, f"{len(proposals)} proposal(s) made")
    missing = [m for m in must_say if m.lower() not in text.lower()]
    if missing:
        return Verdict(False, f"does not say {missing}")
    return Verdict(True, "no proposal; " + ", ".join(repr(m) for m in must_say))


def judge_proposal(
    proposals: Sequence[tuple[str, dict[str, Any]]], tool: str, arguments: dict[str, Any]
) -> Verdict:
    """Right when exactly one proposal was made, for that tool and those arguments."""
    if [(t, a) for t, a in proposals] != [(tool, arguments)]:
        return Verdict(False, f"proposals {proposals}")
    return Verdict(True, f"one proposal: {tool} {arguments}")
