"""The nightly sweep: when it is due, and what it reports. Pure (pass ``now``).

It runs once per local date (the policy's quiet-hours time zone), at the policy's
``sweep_at`` or the first beat after it, provided the watch had read the fleet before that
time (a watch started at 10:00 sweeps for the first time the next night). It reports the
fleet's size and online count, the offline rooms (and for how long), the rooms behind the
newest firmware of their model in this fleet, and what changed since the last sweep (counts
from the history). It is kept, and posted when quiet hours are over.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, time, tzinfo
from typing import Any

from shared.epiphan.attention import firmware_behind, newest_firmware_by_model
from shared.epiphan.fleet import FleetSnapshot


def sweep_due(
    now: datetime, where: tzinfo, sweep_at: time, done: Collection[str], first_read_at: datetime | None
) -> str | None:
    """The local date (``YYYY-MM-DD``) whose sweep is due at `now`, or None (not yet, already
    done, or the watch had not read the fleet before today's sweep time)."""
    local = now.astimezone(where)
    due_at = datetime.combine(local.date(), sweep_at, tzinfo=where)
    date = local.date().isoformat()
    if local < due_at or date in done or first_read_at is None or first_read_at >= due_at:
        return None
    return date


def since_last(counts: Mapping[str, int]) -> dict[str, int]:
    """History counts per kind (since the last sweep) as the sweep says them."""
    return {
        "opened": counts.get("finding_opened", 0),
        "resolved": counts.get("finding_resolved", 0),
        "offline": counts.get("device_offline", 0),
        "online": counts.get("device_online", 0),
    }


def sweep_report(
    snapshot: FleetSnapshot,
    now: datetime,
    where: tzinfo,
    zone_name: str,
    local_date: str,
    changes: Mapping[str, int] | None,
) -> dict[str, Any]:
    """The sweep as plain data (kept as JSON): ``date``, ``label`` (when, in words),
    ``rooms``, ``online``, ``offline`` ``[{device_id, room, seconds}]`` (seconds offline,
    None when the device did not say), ``behind`` ``[{device_id, room, model, firmware,
    newest}]`` and ``since_last`` (`since_last`, None for the first sweep)."""
    devices = sorted(snapshot.devices, key=lambda d: ((d.name or d.id).casefold(), d.id))
    newest = newest_firmware_by_model(devices)
    return {
        "date": local_date,
        "label": f"{now.astimezone(where):%Y-%m-%d %H:%M} ({zone_name})",
        "rooms": len(devices),
        "online": sum(d.online for d in devices),
        "offline": [
            {
                "device_id": d.id,
                "room": d.name or d.id,
                "seconds": None if d.state_time is None else max(0.0, (now - d.state_time).total_seconds()),
            }
            for d in devices
            if not d.online
        ],
        "behind": [
            {
                "device_id": d.id,
                "room": d.name or d.id,
                "model": d.model,
                "firmware": d.firmware,
                "newest": newest[d.model],
            }
            for d in devices
            if firmware_behind(d, newest)
        ],
        "since_last": None if changes is None else since_last(changes),
    }
