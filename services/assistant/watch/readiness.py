"""Readiness before each scheduled event: Ready / Ready, with notes / Not ready, and why. Pure.

An event is due when it starts within ``minutes`` from ``now`` (``now < start <= now +
minutes``) and its key (room, event ID, start) has not been posted: so each event gets one
post, and an event moved to another time gets a new one.

Not ready (any of): the room is offline; a firmware update is running (a device warning whose
ID names a firmware update: *unconfirmed* form, see ``services/lab/shapes.py``); an input has no
signal; no storage is detected or the disk is critically full; the event is not confirmed on
the device. Ready, with notes (any of): the disk is nearly full, the room runs hot or busy, it
restarted recently, its firmware is behind the newest of its model in this fleet, its CPU,
temperature and uptime could not be read (issue 16: never judged from what was not read).
Otherwise Ready. A room whose events could not be read has no event here, so no post. Limits are the policy's (`shared.epiphan.attention.Thresholds`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from services.assistant.watch.times import utc_text
from services.assistant.watch.words import word
from shared.epiphan.attention import Thresholds, firmware_behind, newest_firmware_by_model, whole_minutes
from shared.epiphan.fleet import Device, Event, FleetSnapshot, storage_from_warnings
from shared.text.display import visible
from shared.text.fleet_answers import dark_inputs, running_hot
from shared.text.wording import free_space, minutes_text, part_words

READY: Final = "ready"
READY_NOTES: Final = "ready_notes"
NOT_READY: Final = "not_ready"
UPDATE_MARKERS: Final = ("firmware_update", "firmware_upgrade", "update_in_progress")
"""Device warning IDs that say a firmware update is running (unconfirmed form)."""


@dataclass(frozen=True, slots=True)
class ReadinessItem:
    """One event's readiness: the room, the event, the verdict (`READY`, `READY_NOTES`,
    `NOT_READY`) and the reasons in words (blocking ones first)."""

    key: str
    device_id: str
    room: str
    event_id: str
    title: str
    start: datetime
    verdict: str
    reasons: tuple[str, ...]


def readiness_key(device_id: str, event: Event) -> str:
    """``<device>|<event ID>|<start, UTC text>`` (the store's ``readiness_posts`` key)."""
    start = utc_text(event.start) if event.start else ""
    return f"{device_id}|{event.id}|{start}"


def updating(device: Device) -> bool:
    """True when a device warning says a firmware update is running."""
    return any(any(m in w.id.lower() for m in UPDATE_MARKERS) for w in device.warnings)


def judge(
    device: Device,
    event: Event,
    snapshot: FleetSnapshot,
    now: datetime,
    limits: Thresholds,
    language: str,
    newest: dict[str, str] | None = None,
) -> tuple[str, tuple[str, ...]]:
    """The verdict and reasons for `device`'s `event` (see the module docstring)."""
    blocking: list[str] = []
    notes: list[str] = []
    if not device.online:
        since = device.state_time
        blocking.append(
            word(language, "why_offline_for", time=minutes_text((now - since).total_seconds()))
            if since is not None
            else word(language, "why_offline")
        )
    else:
        if updating(device):
            blocking.append(word(language, "why_updating"))
        blocking += [word(language, "why_no_signal", what=what) for what in dark_inputs(device, language)]
        storage = storage_from_warnings(device)
        if storage is not None:
            free = storage.free_pct
            shown = "?" if free is None else free_space(storage.free or 0, storage.total or 0, language)
            if storage.state == "missing":
                blocking.append(word(language, "why_no_storage"))
            elif storage.state == "critical" or (free is not None and free <= limits.disk_free_pct / 2):
                blocking.append(word(language, "why_disk_critical", free=shown))
            else:
                notes.append(word(language, "why_disk_low", free=shown))
        status = snapshot.system.get(device.id)
        if not snapshot.read_for(device.id, "system"):
            notes.append(word(language, "why_unread", what=part_words("system", language)))
        if running_hot(status, limits) and status is not None:
            temp = "?" if status.cpu_temp_c is None else f"{status.cpu_temp_c:.0f}"
            cpu = "?" if status.cpu_load_pct is None else f"{status.cpu_load_pct:.0f}"
            notes.append(word(language, "why_hot", temp=temp, cpu=cpu))
        if status is not None and status.up_since is not None:
            since_up = now - status.up_since
            if timedelta(0) <= since_up < timedelta(minutes=limits.recent_reboot_minutes):
                notes.append(word(language, "why_rebooted", minutes=whole_minutes(since_up.total_seconds())))
    if not event.confirmed:
        blocking.append(word(language, "why_not_confirmed"))
    newest = newest if newest is not None else newest_firmware_by_model(snapshot.devices)
    if firmware_behind(device, newest):
        latest = newest[device.model]
        notes.append(
            word(language, "why_firmware", firmware=visible(device.firmware, 20), newest=visible(latest, 20))
        )
    if blocking:
        return NOT_READY, tuple(blocking + notes)
    return (READY_NOTES, tuple(notes)) if notes else (READY, ())


def due(
    snapshot: FleetSnapshot,
    now: datetime,
    minutes: int,
    posted: Collection[str],
    limits: Thresholds,
    language: str,
) -> list[ReadinessItem]:
    """The events starting within `minutes` whose readiness was not posted yet (keys in
    `posted`), soonest first, each judged (`judge`)."""
    horizon = now + timedelta(minutes=minutes)
    newest = newest_firmware_by_model(snapshot.devices)
    items: list[ReadinessItem] = []
    for device in snapshot.devices:
        event = snapshot.events.get(device.id)
        if event is None or event.start is None or not now < event.start <= horizon:
            continue
        key = readiness_key(device.id, event)
        if key in posted:
            continue
        verdict, reasons = judge(device, event, snapshot, now, limits, language, newest)
        items.append(
            ReadinessItem(
                key=key,
                device_id=device.id,
                room=device.name or device.id,
                event_id=event.id,
                title=event.title,
                start=event.start,
                verdict=verdict,
                reasons=reasons,
            )
        )
    return sorted(items, key=lambda i: (i.start, i.room.casefold(), i.device_id))
