"""What needs attention in a fleet, in the words AV teams use (pure: pass ``now``).

Priorities are words, not P1/critical: **Fix first** (a room will fail a class within the lead
window, or is failing one now), **Fix soon** (a problem that will bite: disk, heat, a dark
channel with no class soon), **When convenient** (firmware behind its family, a recent reboot).
The rules come from what the people who run these fleets care about (EPIPHAN.md, last section).
Used by `fleetwatch fleet` and by the assistant's keyword answer.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from shared.epiphan.fleet import Device, Event, FleetSnapshot, product_family

if TYPE_CHECKING:
    from shared.policy.loader import Policy


class Priority(enum.IntEnum):
    """Lower sorts first."""

    FIX_FIRST = 1
    FIX_SOON = 2
    WHEN_CONVENIENT = 3


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Limits from ``policy.yaml`` (``thresholds`` and ``lead_minutes``)."""

    cpu_pct: float = 90.0
    temp_c: float = 80.0
    disk_free_pct: float = 10.0
    recent_reboot_minutes: int = 30
    lead_minutes: int = 30
    attention_minutes: int = 60
    """A class starting within this many minutes makes a room's problem *Fix first* ("a class
    within the hour"). Separate from ``lead_minutes``, the window that blocks disruptive changes."""


DEFAULT_THRESHOLDS = Thresholds()
"""The shipped policy's thresholds, for callers that have no policy at hand (tests, views)."""


def thresholds_from_policy(policy: Policy) -> Thresholds:
    """The attention thresholds a loaded ``policy.yaml`` sets: its ``thresholds`` (CPU percent,
    temperature °C, free disk percent, recent-reboot minutes) and ``lead_minutes``; the
    attention window keeps its default."""
    t = policy.thresholds
    return Thresholds(
        cpu_pct=t.cpu_pct,
        temp_c=t.temp_c,
        disk_free_pct=t.disk_free_pct,
        recent_reboot_minutes=t.recent_reboot_minutes,
        lead_minutes=policy.lead_minutes,
    )


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that needs attention.

    ``kind`` is a stable snake_case key (``offline``, ``not_recording_in_event``, ``no_signal``,
    ``no_storage``, ``disk_low``, ``cpu_high``, ``temp_high``, ``recent_reboot``,
    ``firmware_behind``); ``facts`` holds the numbers and names a sentence is built from.
    """

    priority: Priority
    kind: str
    device_id: str
    device_name: str
    facts: tuple[tuple[str, str], ...] = ()


JUDGED_FROM: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "not_recording_in_event": frozenset({"events", "recorder"}),
        "cpu_high": frozenset({"system"}),
        "temp_high": frozenset({"system"}),
        "recent_reboot": frozenset({"system"}),
    }
)
"""The parts of a snapshot (`shared.epiphan.fleet.UnreadPart.part`) each finding kind is judged
from beyond the device list; the other kinds come from the device list alone. Every kind's
priority also reads ``events`` (a class soon makes a problem Fix first)."""


def unjudged(snapshot: FleetSnapshot, device_id: str, kind: str) -> bool:
    """True when `snapshot` cannot say whether a finding of `kind` holds for `device_id`: a part
    it is judged from (`JUDGED_FROM`) was not read for that device. Such a finding is neither
    found nor resolved by this snapshot; whoever compares reads keeps what it knew."""
    return any(not snapshot.read_for(device_id, part) for part in JUDGED_FROM.get(kind, ()))


def priority_unjudged(snapshot: FleetSnapshot, device_id: str) -> bool:
    """True when `snapshot` did not read `device_id`'s events, so a finding's priority (Fix
    first when a class is on or soon) cannot be judged for that room."""
    return not snapshot.read_for(device_id, "events")


def whole_minutes(delta_seconds: float) -> int:
    """`delta_seconds` (its size) rounded to the nearest minute, half a minute up: 24 min 40 s
    is 25 min, 2 h 59 min 59 s is 3 h (never floor division: that says "in 24 min" for a
    class 25 minutes away)."""
    return int(abs(delta_seconds) / 60 + 0.5)


def event_state(event: Event | None, now: datetime, lead_minutes: int) -> str:
    """``"on_now"``, ``"soon"`` (starts within ``lead_minutes``), ``"later"`` or ``"none"``."""
    if event is None or event.start is None:
        return "none"
    finish = event.finish or event.start + timedelta(hours=1)
    if event.start <= now < finish:
        return "on_now"
    if now < event.start <= now + timedelta(minutes=lead_minutes):
        return "soon"
    return "later" if event.start > now else "none"


@functools.lru_cache(maxsize=1024)
def _firmware_key(version: str) -> tuple[int, ...]:
    """``"4.24.3"`` -> ``(4, 24, 3)`` (digits of each piece; none: 0). Kept per version: a fleet
    runs a handful of versions and each device is compared several times a beat."""
    parts = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def newest_firmware_by_model(devices: Iterable[Device]) -> dict[str, str]:
    """{model: the newest firmware any device of that model's firmware family runs}, for every
    model in `devices`. A family is `shared.epiphan.fleet.product_family`: spellings of one
    model are one family ("Pearl-2", "Pearl 2"), an Epiphan Venue is its own family and never
    compared with a Pearl, nor an EC20 with either. A device with no model has no family and
    is left out (nothing is known to compare it with)."""
    families: dict[str, str] = {}
    by_family: dict[str, str] = {}
    for device in devices:
        family = families.get(device.model)
        if family is None:
            family = families[device.model] = product_family(device.model)
        if family and device.firmware:
            if _firmware_key(device.firmware) > _firmware_key(by_family.get(family, "")):
                by_family[family] = device.firmware
    return {model: by_family[family] for model, family in families.items() if family in by_family}


def firmware_behind(device: Device, newest: dict[str, str]) -> bool:
    """True when `device` runs older firmware than `newest` (`newest_firmware_by_model`) says
    the newest of its firmware family in the fleet is."""
    latest = newest.get(device.model)
    return bool(device.firmware and latest and _firmware_key(device.firmware) < _firmware_key(latest))


def _disk_facts(data: object) -> tuple[tuple[str, str], ...]:
    """A ``disk_space_error``'s numbers as facts: ``free_pct`` (one decimal), ``free_bytes``
    and ``total_bytes``; none when the warning's data does not give both sizes."""
    if not isinstance(data, dict):
        return ()
    free, total = data.get("free"), data.get("total")
    if isinstance(free, bool) or isinstance(total, bool):
        return ()
    if isinstance(free, int | float) and isinstance(total, int | float) and total > 0:
        pct = 100.0 * free / total
        return (("free_pct", f"{pct:.1f}"), ("free_bytes", str(int(free))), ("total_bytes", str(int(total))))
    return ()


def findings(
    snapshot: FleetSnapshot, now: datetime, limits: Thresholds = DEFAULT_THRESHOLDS
) -> list[Finding]:
    """Every finding in the fleet, most urgent first, then by room name."""
    out: list[Finding] = []
    newest = newest_firmware_by_model(snapshot.devices)
    for device in snapshot.devices:
        event = snapshot.events.get(device.id)
        when = event_state(event, now, max(limits.attention_minutes, limits.lead_minutes))
        urgent = when in ("on_now", "soon")
        title = (("event", event.title),) if event is not None and urgent else ()

        def add(priority: Priority, kind: str, *facts: tuple[str, str], device: Device = device) -> None:
            out.append(Finding(priority, kind, device.id, device.name, tuple(facts)))

        if not device.online:
            add(Priority.FIX_FIRST if urgent else Priority.FIX_SOON, "offline", *title)
            continue
        if when == "on_now" and not device.recording:
            add(Priority.FIX_FIRST, "not_recording_in_event", *title)
        for channel in device.channels:
            for warning in channel.warnings:
                if warning.id == "channel_no_signal":
                    prio = Priority.FIX_FIRST if urgent else Priority.FIX_SOON
                    add(prio, "no_signal", ("channel", channel.name or channel.channel_id), *title)
        for warning in device.warnings:
            if warning.id == "source_no_signal":
                source = warning.data.get("source_name", "") if isinstance(warning.data, dict) else ""
                add(
                    Priority.FIX_FIRST if urgent else Priority.FIX_SOON,
                    "no_signal",
                    ("source", str(source)),
                    *title,
                )
            elif warning.id == "no_storage_detected":
                add(Priority.FIX_FIRST if urgent else Priority.FIX_SOON, "no_storage", *title)
            elif warning.id == "disk_space_error":
                add(Priority.FIX_SOON, "disk_low", *_disk_facts(warning.data))
        status = snapshot.system.get(device.id)
        if status is not None:
            if status.cpu_load_pct is not None and status.cpu_load_pct >= limits.cpu_pct:
                add(Priority.FIX_SOON, "cpu_high", ("cpu_pct", f"{status.cpu_load_pct:.0f}"))
            if status.cpu_temp_c is not None and status.cpu_temp_c >= limits.temp_c:
                add(Priority.FIX_SOON, "temp_high", ("temp_c", f"{status.cpu_temp_c:.0f}"))
            if status.up_since is not None and now - status.up_since < timedelta(
                minutes=limits.recent_reboot_minutes
            ):
                minutes = whole_minutes(max((now - status.up_since).total_seconds(), 0.0))
                add(Priority.WHEN_CONVENIENT, "recent_reboot", ("minutes_ago", str(minutes)))
        if firmware_behind(device, newest):
            add(
                Priority.WHEN_CONVENIENT,
                "firmware_behind",
                ("firmware", device.firmware),
                ("newest", newest[device.model]),
            )
    return sorted(out, key=lambda f: (f.priority, f.device_name.casefold(), f.kind))
