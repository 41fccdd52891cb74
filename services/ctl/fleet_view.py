"""How `fleetwatch fleet` shows a fleet snapshot (pure: pass ``now``).

Every name from the fleet passes through `shared.text.display.visible` before it reaches a
terminal, so a name holding a terminal escape or a bidi override is shown, not obeyed. The
words for findings, priorities and events are `shared.text.wording`'s English ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from shared.epiphan.attention import DEFAULT_THRESHOLDS, Priority, Thresholds, findings
from shared.epiphan.fleet import Device, FleetSnapshot
from shared.text.display import visible
from shared.text.wording import (
    PRIORITY_WORDS,
    describe_event,
    describe_finding,
    recording_unknown,
    unread_text,
)
from shared.wire.executor import WritableDevices

WORDS = PRIORITY_WORDS["en"]
"""The priority words in English (``fleetwatch fleet`` speaks English; the wording is shared
with the assistant's keyword answer, `shared.text.wording`)."""


def device_row(device: Device, snapshot: FleetSnapshot, now: datetime, lead_minutes: int) -> list[str]:
    """The columns of one device's row. An offline device's recording is unknown (Epiphan
    keeps the last state it reported): ``unknown (last known: recording, since March 3)``."""
    recording = [c.channel_id for c in device.channels if c.recording]
    if not device.online:
        rec = recording_unknown(device, now)
    else:
        rec = ("REC " + ",".join(recording)) if recording else "-"
    return [
        visible(device.group_name, 24),
        visible(device.name, 32),
        visible(device.model, 12),
        visible(device.firmware, 10),
        "online" if device.online else "OFFLINE",
        rec,
        describe_event(snapshot.events[device.id], now, lead_minutes)
        if device.id in snapshot.events
        else "unknown",
    ]


def unread_lines(snapshot: FleetSnapshot, language: str = "en") -> list[str]:
    """One line per part of the snapshot that could not be read:
    ``events: could not be read: <why>`` (empty when everything was read)."""
    return [unread_text(u, len(snapshot.devices), language) for u in snapshot.unread]


def render_fleet(snapshot: FleetSnapshot, now: datetime, limits: Thresholds = DEFAULT_THRESHOLDS) -> str:
    """The fleet as a table, then what needs attention grouped by priority words."""
    header = ["GROUP", "ROOM", "MODEL", "FIRMWARE", "STATUS", "RECORDING", "NEXT EVENT"]
    devices = sorted(snapshot.devices, key=lambda d: (d.group_name.casefold(), d.name.casefold()))
    rows = [header] + [device_row(d, snapshot, now, limits.lead_minutes) for d in devices]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    online = sum(d.online for d in snapshot.devices)
    lines.append("")
    lines.append(
        f"{len(snapshot.devices)} devices, {online} online, {len(snapshot.devices) - online} offline."
    )
    unread = unread_lines(snapshot)
    if unread:
        lines.append("Not everything could be read; what needs attention may be incomplete:")
        lines.extend(f"  {line}" for line in unread)
    found = findings(snapshot, now, limits)
    if not found:
        lines.append("Nothing needs attention." if not unread else "Nothing read needs attention.")
    for priority in Priority:
        group = [f for f in found if f.priority == priority]
        if group:
            lines.append("")
            lines.append(f"{WORDS[priority]}:")
            lines.extend(f"  - {describe_finding(f)}" for f in group)
    return "\n".join(lines)


def fleet_json(
    snapshot: FleetSnapshot, now: datetime, limits: Thresholds = DEFAULT_THRESHOLDS
) -> dict[str, Any]:
    """The snapshot and its findings as JSON-ready data (for ``--json``). What could not be
    read is ``snapshot.unread`` (``[{part, tool, code, message, device_ids}]``)."""
    return {
        "snapshot": msgspec.to_builtins(snapshot),
        "findings": [
            {
                "priority": WORDS[f.priority],
                "kind": f.kind,
                "device_id": f.device_id,
                "device_name": f.device_name,
                "facts": dict(f.facts),
            }
            for f in findings(snapshot, now, limits)
        ],
    }


def render_writable(devices: WritableDevices) -> str:
    """The devices a change may target now, as the executor just read them: ID, name, model,
    online or not, each channel (recording or not) and the next event. Names are shown through
    `shared.text.display.visible`."""
    if not devices.devices:
        return f"No device may be changed now (read at {devices.read_at})."
    lines = [f"{len(devices.devices)} device(s) a change may target (read at {devices.read_at}):"]
    for device in devices.devices:
        state = "online" if device.online else "OFFLINE"
        lines.append(
            f"  {visible(device.device_id, 40)}  {visible(device.name, 40)} ({visible(device.model, 20)}), {state}"
        )
        for channel in device.channels:
            recording = {True: "recording", False: "not recording", None: "recording unknown"}[
                channel.recording
            ]
            lines.append(
                f"      channel {visible(channel.channel_id, 8)} {visible(channel.name, 40)}: {recording}"
            )
        if device.next_event is not None:
            event = device.next_event
            lines.append(
                f"      next event: {visible(event.title, 60)} ({visible(event.event_id, 40)}),"
                f" {event.start or 'start unknown'} to {event.finish or 'end unknown'}"
            )
    return "\n".join(lines)
