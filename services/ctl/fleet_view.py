"""How `fleetwatch fleet` shows a fleet snapshot (pure: pass ``now``).

Every name from the fleet passes through `shared.display.visible` before it reaches a
terminal, so a name holding a terminal escape or a bidi override is shown, not obeyed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from shared.attention import DEFAULT_THRESHOLDS, Finding, Priority, Thresholds, event_state, findings
from shared.display import visible
from shared.fleet import Device, Event, FleetSnapshot

PRIORITY_WORDS = {
    Priority.FIX_FIRST: "Fix first",
    Priority.FIX_SOON: "Fix soon",
    Priority.WHEN_CONVENIENT: "When convenient",
}

_FINDING_WORDS = {
    "offline": "offline",
    "not_recording_in_event": "not recording during its event",
    "no_signal": "no signal on {channel}{source}",
    "no_storage": "no storage detected",
    "disk_low": "disk nearly full ({free_pct}% free)",
    "cpu_high": "CPU at {cpu_pct}%",
    "temp_high": "running hot ({temp_c} °C)",
    "recent_reboot": "rebooted {minutes_ago} min ago",
    "firmware_behind": "firmware {firmware}, family runs {newest}",
}


def describe_finding(finding: Finding) -> str:
    """One English line for a finding: ``Hall A: offline (event "Physics 101")``."""
    facts = {"channel": "", "source": "", "free_pct": "?", **{k: visible(v, 80) for k, v in finding.facts}}
    text = _FINDING_WORDS.get(finding.kind, finding.kind).format(**facts)
    event = dict(finding.facts).get("event")
    suffix = f' (event "{visible(event, 80)}")' if event else ""
    return f"{visible(finding.device_name, 80)}: {text}{suffix}"


def _minutes(delta_seconds: float) -> str:
    minutes = int(abs(delta_seconds) // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def describe_event(event: Event | None, now: datetime, lead_minutes: int) -> str:
    """``"Physics 101" in 35 min``, ``"Physics 101" on now (ends in 20 min)`` or ``-``."""
    if event is None or event.start is None:
        return "-"
    title = f'"{visible(event.title, 40)}"'
    state = event_state(event, now, lead_minutes)
    if state == "on_now":
        ends = f" (ends in {_minutes((event.finish - now).total_seconds())})" if event.finish else ""
        return f"{title} on now{ends}"
    if event.start > now:
        return f"{title} in {_minutes((event.start - now).total_seconds())}"
    return "-"


def device_row(device: Device, snapshot: FleetSnapshot, now: datetime, lead_minutes: int) -> list[str]:
    """The columns of one device's row."""
    recording = [c.channel_id for c in device.channels if c.recording]
    return [
        visible(device.group_name, 24),
        visible(device.name, 32),
        visible(device.model, 12),
        visible(device.firmware, 10),
        "online" if device.online else "OFFLINE",
        ("REC " + ",".join(recording)) if recording else "-",
        describe_event(snapshot.events[device.id], now, lead_minutes) if device.id in snapshot.events else "unknown",
    ]


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
    found = findings(snapshot, now, limits)
    if not found:
        lines.append("Nothing needs attention.")
    for priority in Priority:
        group = [f for f in found if f.priority == priority]
        if group:
            lines.append("")
            lines.append(f"{PRIORITY_WORDS[priority]}:")
            lines.extend(f"  - {describe_finding(f)}" for f in group)
    return "\n".join(lines)


def fleet_json(snapshot: FleetSnapshot, now: datetime, limits: Thresholds = DEFAULT_THRESHOLDS) -> dict[str, Any]:
    """The snapshot and its findings as JSON-ready data (for ``--json``)."""
    return {
        "snapshot": msgspec.to_builtins(snapshot),
        "findings": [
            {
                "priority": PRIORITY_WORDS[f.priority],
                "kind": f.kind,
                "device_id": f.device_id,
                "device_name": f.device_name,
                "facts": dict(f.facts),
            }
            for f in findings(snapshot, now, limits)
        ],
    }
