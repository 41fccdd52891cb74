"""How `fleetwatch fleet` shows a fleet snapshot (pure: pass ``now``).

Every name from the fleet passes through `shared.text.display.visible` before it reaches a
terminal, so a name holding a terminal escape or a bidi override is shown, not obeyed; a
look-alike name (`shared.text.display.lookalike`) is marked, with its device ID beside it; a
room's and a group's name are quoted in the reader's quote marks (`shared.text.changes.quoted`),
so a name padded to look like more columns shows where it ends. The
words for findings, priorities and events are `shared.text.wording`'s English ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from shared.epiphan.attention import DEFAULT_THRESHOLDS, Priority, Thresholds, findings
from shared.epiphan.fleet import Device, FleetSnapshot
from shared.text.catalogue import N_, translate
from shared.text.changes import quoted
from shared.text.display import lookalike, visible, width
from shared.text.languages import Language
from shared.text.wording import (
    PRIORITY_WORDS,
    describe_event,
    describe_finding,
    recording_unknown,
    unread_text,
)

WORDS = PRIORITY_WORDS["en"]
"""The priority words in English, the raw words ``--json`` keeps (the table speaks the
operator's language: `render_fleet`; the wording is shared with the assistant's keyword
answer, `shared.text.wording`, over the one catalogue)."""

HEADER = (
    N_("GROUP"),
    N_("ROOM"),
    N_("MODEL"),
    N_("FIRMWARE"),
    N_("STATUS"),
    N_("RECORDING"),
    N_("NEXT EVENT"),
)


def device_row(
    device: Device, snapshot: FleetSnapshot, now: datetime, lead_minutes: int, language: Language = "en"
) -> list[str]:
    """The columns of one device's row. An offline device's recording is unknown (Epiphan
    keeps the last state it reported): ``unknown (last known: recording, since March 3)``."""
    recording = [c.channel_id for c in device.channels if c.recording]
    if not device.online:
        rec = recording_unknown(device, now, language)
    else:
        rec = ("REC " + ",".join(recording)) if recording else "-"
    marked = translate(language, N_("(look-alike letters: device %(id)s)")) % {"id": visible(device.id, 32)}
    return [
        quoted(visible(device.group_name, 24), language) if device.group_name else "",
        quoted(visible(device.name, 32), language) + (f" {marked}" if lookalike(device.name) else ""),
        visible(device.model, 12),
        visible(device.firmware, 10),
        translate(language, N_("online") if device.online else N_("OFFLINE")),
        rec,
        describe_event(snapshot.events[device.id], now, lead_minutes, language)
        if device.id in snapshot.events
        else translate(language, N_("unknown")),
    ]


def unread_lines(snapshot: FleetSnapshot, language: str = "en") -> list[str]:
    """One line per part of the snapshot that could not be read:
    ``events: could not be read: <why>`` (empty when everything was read)."""
    return [unread_text(u, len(snapshot.devices), language) for u in snapshot.unread]


def render_fleet(
    snapshot: FleetSnapshot, now: datetime, limits: Thresholds = DEFAULT_THRESHOLDS, language: Language = "en"
) -> str:
    """The fleet as a table, then what needs attention grouped by priority words, in
    `language` (every word from the one catalogue)."""

    def say(msgid: str, **params: object) -> str:
        text = translate(language, msgid)
        return text % params if params else text

    header = [say(h) for h in HEADER]
    devices = sorted(snapshot.devices, key=lambda d: (d.group_name.casefold(), d.name.casefold()))
    rows = [header] + [device_row(d, snapshot, now, limits.lead_minutes, language) for d in devices]
    widths = [max(width(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell + " " * (w - width(cell)) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    online = sum(d.online for d in snapshot.devices)
    lines.append("")
    lines.append(
        say(
            N_("%(n)s devices, %(online)s online, %(offline)s offline."),
            n=len(snapshot.devices),
            online=online,
            offline=len(snapshot.devices) - online,
        )
    )
    unread = unread_lines(snapshot, language)
    if unread:
        lines.append(say(N_("Not everything could be read; what needs attention may be incomplete:")))
        lines.extend(f"  {line}" for line in unread)
    found = findings(snapshot, now, limits)
    if not found:
        lines.append(
            say(N_("Nothing needs attention.") if not unread else N_("Nothing read needs attention."))
        )
    for priority in Priority:
        group = [f for f in found if f.priority == priority]
        if group:
            lines.append("")
            lines.append(f"{PRIORITY_WORDS[language][priority]}:")
            lines.extend(f"  - {describe_finding(f, language)}" for f in group)
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
