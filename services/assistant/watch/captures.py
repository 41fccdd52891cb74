"""Missed recordings: an event that ended with no recording seen on its room's channels.
Pure (pass the time).

Each good read keeps the events on now or starting within the readiness lead (`seen`), and
whether a recording was seen while each was on. When one has finished (`judge`):

- a recording was seen while it was on: nothing to say;
- the watch was reading when it ended (the read before this one is within ``gap`` of its
  finish) and saw no recording: a **missed recording** (``missed_recording``, Fix first);
- the watch was not reading when it ended (stopped, or the fleet could not be read): judged
  from what is known, the recorder's state now (a channel recording since before the event's
  finish recorded it) and what the watch saw before; otherwise **may have been missed**
  (``missed_recording_maybe``, Fix first), with what is known: whether it was seen on, and
  whether the room records now, is offline or was not read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta, tzinfo
from typing import Any

from services.assistant.watch.times import parse_utc, utc_text, zone_name_of
from shared.epiphan.fleet import Device, Event, FleetSnapshot

Judged = tuple[str, str, str, str | None, dict[str, Any]]
"""``(device_id, event_id, start, history kind or None, facts)``, as `WatchStore.judge_events` takes."""


def events_ahead(
    snapshot: FleetSnapshot, now: datetime, horizon: datetime
) -> Iterator[tuple[Device, Event, datetime, datetime]]:
    """``(room, its event, start, finish)`` of each room whose current or next event is on at
    `now` or starts by `horizon` (an event without a finish lasts an hour)."""
    for device in snapshot.devices:
        event = snapshot.events.get(device.id)
        if event is None or event.start is None or event.start > horizon:
            continue
        finish = event.finish or event.start + timedelta(hours=1)
        if finish > now:
            yield device, event, event.start, finish


def seen(
    snapshot: FleetSnapshot, now: datetime, lead_minutes: int
) -> list[tuple[str, str, str, str, str, str, bool, bool]]:
    """The events of `snapshot` on now or starting within `lead_minutes`, as
    `WatchStore.see_events` takes them (on now, and a channel recording now)."""
    out = []
    for device, event, start, finish in events_ahead(snapshot, now, now + timedelta(minutes=lead_minutes)):
        on_now = start <= now
        out.append(
            (
                device.id,
                event.id,
                utc_text(start),
                utc_text(finish),
                device.name or device.id,
                event.title,
                on_now,
                on_now and device.online and device.recording,
            )
        )
    return out


def _recorder_now(snapshot: FleetSnapshot, device_id: str, finish: datetime) -> tuple[str, bool]:
    """(the room's recorder now in one word, whether a channel has recorded since before
    `finish`)."""
    device = next((d for d in snapshot.devices if d.id == device_id), None)
    if device is None:
        return "not_read", False
    if not device.online:
        return "offline", False
    through = any(
        c.recording and c.recording_since is not None and c.recording_since <= finish for c in device.channels
    )
    return ("recording" if device.recording else "not_recording"), through


def judge(
    ended: Iterable[Mapping[str, Any]],
    snapshot: FleetSnapshot,
    *,
    previous_read: datetime | None,
    gap: timedelta,
    where: tzinfo,
) -> list[Judged]:
    """Each ended event (rows of ``event_captures``) judged (see the module docstring); its
    end is kept as people read it, ``HH:MM (zone)`` in `where` (the team's zone)."""
    out: list[Judged] = []
    for row in ended:
        key = (row["device_id"], row["event_id"], row["start"])
        if row["recorded"]:
            out.append((*key, None, {}))
            continue
        finish = parse_utc(row["finish"])
        facts = {
            "room": row["room"],
            "event": row["title"],
            "event_id": row["event_id"],
            "start": row["start"],
            "finish": row["finish"],
            "ended": f"{finish.astimezone(where):%H:%M} ({zone_name_of(where)})",
        }
        if previous_read is not None and previous_read >= finish - gap:
            out.append((*key, "missed_recording", facts))
            continue
        recorder, through = _recorder_now(snapshot, row["device_id"], finish)
        if through:
            out.append((*key, None, {}))
            continue
        facts |= {"seen_on": "yes" if row["seen_on"] else "no", "recorder": recorder}
        out.append((*key, "missed_recording_maybe", facts))
    return out
