"""Sentences about a fleet, topic by topic, in English or Latin American Spanish. Pure (pass ``now``).

The wording of the assistant's keyword answer (built by code from a `FleetSnapshot` when no model
answers). Each function returns lines: a first sentence, then one ``- <room>: <facts>`` line per
room (capped at `MAX_LINES`), so a room is never named on a line about another. Room, channel,
source and stream destination names are made visible and quoted in the reader's quote marks
(`shared.text.changes.quoted`: “ENG 210”, «ENG 210»), so a name cannot carry words that read as
Fleetwatch's own facts.

Limits come from `shared.epiphan.attention.Thresholds` (the policy's, or the defaults): hot is a CPU
temperature at or above ``temp_c`` or a load at or above ``cpu_pct``; short of storage is a
state ``low``/``critical``/``missing`` or free space at or below ``disk_free_pct``. "Within
the hour" is ``attention_minutes``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Final

from shared.epiphan.attention import DEFAULT_THRESHOLDS, Thresholds, event_state, newest_firmware_by_model
from shared.epiphan.fleet import (
    Device,
    Event,
    StorageStatus,
    StreamEndpoint,
    SystemStatus,
    UnreadPart,
    storage_from_warnings,
)
from shared.text.changes import quoted
from shared.text.display import visible
from shared.text.fleet_words import HEADINGS, WORDS
from shared.text.languages import language_of
from shared.text.questions import Topic
from shared.text.times import say_time
from shared.text.wording import describe_event, free_space_of, minutes_text, recording_unknown, unread_text

MAX_LINES: Final = 20


def _w(language: str, key: str, **params: object) -> str:
    return WORDS[language_of(language)][key] % params


def _heading(language: str, key: str, n: int, **facts: object) -> str:
    return HEADINGS[language_of(language)][f"{key}.{0 if n == 1 else 1}"] % {"n": n, **facts}


def examples(language: str) -> str:
    """The questions code-built answers understand, in a phrase (for "I only understand …")."""
    return _w(language, "examples")


def name(device: Device, language: str) -> str:
    """A device's name as shown (visible, capped, quoted), or its ID when it has none."""
    return quoted(device.name.strip() or device.id, language)


def _channel(channel_name: str, language: str) -> str:
    """A channel's (or source's) name or number as shown: visible, capped at 40, quoted."""
    return quoted(visible(channel_name, 40), language)


def clock(when: datetime, now: datetime, language: str = "en") -> str:
    """`when` in the zone `now` carries (the operator's, `FLEETWATCH_TIMEZONE`; UTC when naive)
    in the one format of `shared.text.times.say_time`: ``12:41`` on the day of `now`, else
    ``Wed 2 Dec, 12:41`` (``mié 2 dic, 12:41``)."""
    zone = now.tzinfo or UTC
    return say_time(when, zone=zone, now=now, language=language_of(language), relative=False)


def _capped(lines: list[str], language: str) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return [*lines[:MAX_LINES], _w(language, "more", n=len(lines) - MAX_LINES)]


def _listing(head: str, lines: list[str], language: str) -> list[str]:
    return [head, *_capped(lines, language)]


def _sorted(devices: Iterable[Device]) -> list[Device]:
    return sorted(devices, key=lambda d: (d.name.casefold(), d.id))


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


# --- what could not be read -----------------------------------------------------------------

NEEDS: Final[Mapping[Topic, frozenset[str]]] = {
    Topic.TEMPERATURE: frozenset({"system"}),
    Topic.SCHEDULE: frozenset({"events"}),
    Topic.READINESS: frozenset({"events"}),
    Topic.DISK: frozenset({"storage"}),
}
"""The parts of a read (`shared.epiphan.fleet.UnreadPart.part`) an answer is about: unread for every
room, the answer is only that they could not be read (never "no room is running hot")."""
USES: Final[Mapping[Topic, frozenset[str]]] = {
    Topic.OFFLINE: frozenset({"events"}),
    Topic.RECORDING: frozenset({"recorder"}),
    Topic.ATTENTION: frozenset({"events", "system", "recorder"}),
    Topic.ROOM: frozenset({"events", "system", "recorder", "storage"}),
    Topic.CHANGE: frozenset({"events", "system", "recorder"}),
}
"""The parts an answer also draws on: unread, the answer stands and says what is missing."""


def unread_notes(
    unread: Iterable[UnreadPart], total: int, language: str, parts: Iterable[str] | None = None
) -> list[str]:
    """One line per unread part (of `parts` only, when given): ``events: could not be read: …``."""
    wanted = None if parts is None else set(parts)
    return [unread_text(u, total, language) for u in unread if wanted is None or u.part in wanted]


def partial(
    topic: Topic, body: Callable[[], list[str]], unread: Iterable[UnreadPart], total: int, language: str
) -> list[str]:
    """The answer `body` for `topic`, marked with what could not be read: only the marks when a
    part the answer is about could not be read for any device (`NEEDS`), else the answer and
    the marks of the parts it draws on."""
    unread = list(unread)
    needed = NEEDS.get(topic, frozenset())
    if any(u.part in needed and (not u.device_ids or len(u.device_ids) >= total) for u in unread):
        return unread_notes(unread, total, language, needed)
    return [*body(), *unread_notes(unread, total, language, needed | USES.get(topic, frozenset()))]


# --- one topic each ---------------------------------------------------------------------------


def offline(
    devices: Iterable[Device], events: Mapping[str, Event | None], now: datetime, language: str
) -> list[str]:
    """The offline rooms, how long they have been offline, and their next class if known."""
    devices = list(devices)
    down = _sorted(d for d in devices if not d.online)
    if not down:
        return [_w(language, "offline_none", total=len(devices))]
    lines = []
    for device in down:
        facts = []
        if device.state_time is not None:
            facts.append(
                _w(language, "offline_for", time=minutes_text((now - device.state_time).total_seconds()))
            )
        event = events.get(device.id)
        if describe_event(event, now, DEFAULT_THRESHOLDS.lead_minutes, language) != "-":
            facts.append(class_words(event, now, language))
        lines.append(f"- {name(device, language)}: {'; '.join(facts) or _w(language, 'offline_word')}")
    return _listing(_heading(language, "offline", len(down)), lines, language)


def class_words(
    event: Event | None, now: datetime, language: str, limits: Thresholds = DEFAULT_THRESHOLDS
) -> str:
    """A room's class: ``next: "Physics" in 35 min``, or for a class under way ``class:
    "Physics" on now (ends in 20 min)`` (never "next" for what has begun)."""
    described = describe_event(event, now, limits.lead_minutes, language)
    key = "room_now" if event_state(event, now, limits.lead_minutes) == "on_now" else "room_next"
    return _w(language, key, event=described)


def recording_channels(device: Device, language: str) -> list[str]:
    """The names (or numbers) of the channels recording now, quoted."""
    return [_channel(c.name or c.channel_id, language) for c in device.channels if c.recording]


def recording_state(device: Device, now: datetime, language: str) -> str:
    """``recording Lecture since 12:41`` (the operator's time: `clock`), ``recording Lecture`` (since unknown) or
    ``not recording``."""
    channels = recording_channels(device, language)
    if not channels:
        return _w(language, "room_idle")
    since = [c.recording_since for c in device.channels if c.recording and c.recording_since]
    if not since:
        return _w(language, "recording_now", channels=", ".join(channels))
    return _w(language, "recording_on", channels=", ".join(channels), time=clock(min(since), now, language))


def recording(devices: Iterable[Device], now: datetime, language: str) -> list[str]:
    """The online rooms recording now, on which channels, since when."""
    online = [d for d in devices if d.online]
    rooms = _sorted(d for d in online if d.recording)
    if not rooms:
        return [_w(language, "recording_none", online=len(online))]
    lines = [f"- {name(device, language)}: {recording_state(device, now, language)}" for device in rooms]
    return _listing(_heading(language, "recording", len(rooms)), lines, language)


def short_of_storage(storage: StorageStatus | None, limits: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """True when the storage is missing, low or critical, or its free share is at or below the
    limit."""
    if storage is None:
        return False
    pct = storage.free_pct
    return storage.state in ("missing", "low", "critical") or (
        pct is not None and pct <= limits.disk_free_pct
    )


def storage_words(storage: StorageStatus, language: str) -> str:
    """``1.6% (14.5 GB) free of 931 GB``, ``no storage detected``, or ``storage unknown`` (an
    offline device's empty storage state: never taken as zero)."""
    if storage.state == "missing":
        return _w(language, "disk_missing")
    if storage.state == "unknown":
        return _w(language, "disk_unknown")
    if storage.free is None or not storage.total:
        return storage.state or "?"
    return free_space_of(storage.free, storage.total, language)


def disk(
    devices: Iterable[Device],
    storage: Mapping[str, StorageStatus],
    language: str,
    limits: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """The rooms short of storage (see `short_of_storage`), with their free space."""
    devices = list(devices)
    rooms = _sorted(d for d in devices if short_of_storage(storage.get(d.id), limits))
    if not rooms:
        return [_w(language, "disk_none", count=len(devices))]
    lines = [f"- {name(d, language)}: {storage_words(storage[d.id], language)}" for d in rooms]
    return _listing(_heading(language, "disk", len(rooms)), lines, language)


def running_hot(status: SystemStatus | None, limits: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """True when the CPU temperature or load is at or above its limit."""
    if status is None:
        return False
    hot = status.cpu_temp_c is not None and status.cpu_temp_c >= limits.temp_c
    return hot or (status.cpu_load_pct is not None and status.cpu_load_pct >= limits.cpu_pct)


def heat(
    devices: Iterable[Device],
    system: Mapping[str, SystemStatus],
    language: str,
    limits: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """The online rooms running hot or busy, with temperature and load."""
    online = [d for d in devices if d.online]
    rooms = _sorted(d for d in online if running_hot(system.get(d.id), limits))
    if not rooms:
        known = [system[d.id] for d in online if d.id in system]
        temps = [s.cpu_temp_c for s in known if s.cpu_temp_c is not None]
        loads = [s.cpu_load_pct for s in known if s.cpu_load_pct is not None]
        return [
            _w(
                language,
                "heat_none",
                temp=_number(max(temps, default=None)),
                cpu=_number(max(loads, default=None)),
            )
        ]
    lines = [
        f"- {name(d, language)}: "
        + _w(
            language,
            "hot_line",
            temp=_number(system[d.id].cpu_temp_c),
            cpu=_number(system[d.id].cpu_load_pct),
        )
        for d in rooms
    ]
    head = _heading(language, "heat", len(rooms), temp=limits.temp_c, cpu=limits.cpu_pct)
    return _listing(head, lines, language)


def firmware(devices: Iterable[Device], language: str) -> list[str]:
    """The rooms whose firmware is older than the newest of the same model in the fleet."""
    devices = list(devices)
    newest = newest_firmware_by_model(devices)
    rooms = _sorted(d for d in devices if _behind(d, newest))
    if not rooms:
        return [_w(language, "firmware_none")]
    lines = [
        f"- {name(d, language)}: "
        + _w(
            language,
            "firmware_line",
            model=visible(d.model, 20),
            firmware=visible(d.firmware, 20),
            newest=visible(newest[d.model], 20),
        )
        for d in rooms
    ]
    return _listing(_heading(language, "firmware", len(rooms)), lines, language)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in text.split("."))


def _behind(device: Device, newest: Mapping[str, str]) -> bool:
    latest = newest.get(device.model)
    return bool(device.firmware and latest and _version(device.firmware) < _version(latest))


def dark_inputs(device: Device, language: str) -> list[str]:
    """The channels (and sources) of a device that report no signal, quoted:
    ``“Camera 2” (“SDI-A”)``."""
    sources = [
        str(w.data.get("source_name", "")) if isinstance(w.data, Mapping) else ""
        for w in device.warnings
        if w.id == "source_no_signal"
    ]
    channels = [
        _channel(c.name or c.channel_id, language)
        for c in device.channels
        if any(w.id == "channel_no_signal" for w in c.warnings)
    ]
    source_text = ", ".join(_channel(s, language) for s in sources if s)
    if channels:
        return [f"{', '.join(channels)} ({source_text})" if source_text else ", ".join(channels)]
    return [source_text] if source_text else []


def signal(devices: Iterable[Device], language: str) -> list[str]:
    """The online rooms with a channel or source without signal; how many offline rooms could
    not say."""
    devices = list(devices)
    rooms = _sorted(d for d in devices if d.online and dark_inputs(d, language))
    down = sum(not d.online for d in devices)
    tail = [_heading(language, "signal_offline", down)] if down else []
    if not rooms:
        return [_w(language, "signal_none"), *tail]
    lines = [
        f"- {name(d, language)}: {_w(language, 'signal_on', what='; '.join(dark_inputs(d, language)))}"
        for d in rooms
    ]
    return [
        *_listing(_heading(language, "signal", len(rooms)), lines, language),
        *tail,
    ]


def schedule(
    devices: Iterable[Device], events: Mapping[str, Event | None], now: datetime, language: str
) -> list[str]:
    """The classes on now or starting in the next 24 hours, soonest first."""
    horizon = now + timedelta(hours=24)
    upcoming = sorted(
        (
            (e.start, d.name.casefold(), d, e)
            for d in devices
            if (e := events.get(d.id)) is not None
            and e.start is not None
            and e.start <= horizon
            and (e.finish or e.start) >= now
        ),
        key=lambda item: item[:2],
    )
    if not upcoming:
        return [_w(language, "schedule_none")]
    lines = [
        f"- {start:%H:%M} UTC {name(d, language)}: {describe_event(e, now, DEFAULT_THRESHOLDS.lead_minutes, language)}"
        for start, _, d, e in upcoming
    ]
    return _listing(_w(language, "schedule"), lines, language)


def problems(
    device: Device,
    event: Event | None,
    now: datetime,
    language: str,
    *,
    storage: StorageStatus | None = None,
    system: SystemStatus | None = None,
    limits: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """What stops a room from being ready for its class, in words (empty: ready)."""
    if not device.online:
        return [_offline(device, now, language)]
    found = []
    if event_state(event, now, limits.lead_minutes) == "on_now" and not device.recording:
        found.append(_w(language, "not_recording"))
    found += [_w(language, "signal_on", what=what) for what in dark_inputs(device, language)]
    if short_of_storage(storage, limits) and storage is not None:
        found.append(_w(language, "room_storage", free=storage_words(storage, language)))
    if running_hot(system, limits) and system is not None:
        found.append(_w(language, "hot", temp=_number(system.cpu_temp_c), cpu=_number(system.cpu_load_pct)))
    return found


def _offline(device: Device, now: datetime, language: str) -> str:
    """``OFFLINE for 3 h 00 min``, or ``OFFLINE`` when the device did not say since when."""
    if device.state_time is None:
        return _w(language, "offline_word").upper()
    return _w(language, "room_offline", time=minutes_text((now - device.state_time).total_seconds()))


def class_soon(event: Event | None, now: datetime, limits: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """True when the event is on now or starts within ``attention_minutes``."""
    return event_state(event, now, max(limits.attention_minutes, limits.lead_minutes)) in ("on_now", "soon")


def readiness(
    devices: Iterable[Device],
    events: Mapping[str, Event | None],
    now: datetime,
    language: str,
    *,
    storage: Mapping[str, StorageStatus] | None = None,
    limits: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """Every room with a class on now or within the hour, soonest first: its class and either
    what needs attention or that it looks ready (a room not recording yet says so). Storage is
    what each room's own warnings say unless `storage` is given."""
    devices = list(devices)
    if storage is None:
        found = {d.id: storage_from_warnings(d) for d in devices}
        storage = {device_id: s for device_id, s in found.items() if s is not None}

    def start(device: Device) -> datetime:
        event = events.get(device.id)
        return event.start if event is not None and event.start is not None else now

    rooms = sorted(
        (d for d in devices if class_soon(events.get(d.id), now, limits)),
        key=lambda d: (start(d), d.name.casefold()),
    )
    if not rooms:
        return [_w(language, "ready_none")]
    lines, needing = [], []
    for device in rooms:
        event = events[device.id]
        found = problems(device, event, now, language, storage=storage.get(device.id), limits=limits)
        if found:
            needing.append(name(device, language))
        elif not device.recording:
            found = [f"{_w(language, 'ready')}, {_w(language, 'not_yet')}"]
        else:
            found = [_w(language, "ready")]
        when = describe_event(event, now, limits.lead_minutes, language)
        lines.append(f"- {name(device, language)} ({when}): {'; '.join(found)}")
    state = (
        _w(language, "ready_problems", names=", ".join(needing)) if needing else _w(language, "ready_fine")
    )
    head = _heading(language, "ready", len(rooms), problems=state)
    return _listing(head, lines, language)


def room(
    device: Device,
    event: Event | None,
    now: datetime,
    language: str,
    *,
    fleet: Iterable[Device] = (),
    system: SystemStatus | None = None,
    storage: StorageStatus | None = None,
    limits: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """One room's status: online, recording, next class, load and temperature, storage,
    firmware against the rest of its model in `fleet`, streams, and what needs attention."""

    def w(key: str, **params: object) -> str:
        return _w(language, key, **params)

    lines = [f"{name(device, language)}:"]
    if not device.online:
        lines.append(f"- {_offline(device, now, language)}")
        lines.append(f"- {w('room_recording', state=recording_unknown(device, now, language))}")
    else:
        lines.append(f"- {w('room_online')}; {recording_state(device, now, language)}")
    described = describe_event(event, now, limits.lead_minutes, language)
    lines.append(f"- {class_words(event, now, language, limits) if described != '-' else w('room_no_event')}")
    found = problems(device, event, now, language, storage=storage, system=system, limits=limits)
    if device.online and system is not None and not running_hot(system, limits):
        lines.append(f"- {w('room_cpu', cpu=_number(system.cpu_load_pct), temp=_number(system.cpu_temp_c))}")
    if storage is not None:
        lines.append(f"- {w('room_storage', free=storage_words(storage, language))}")
    if device.firmware:
        newest = newest_firmware_by_model([*fleet, device])
        behind = w("room_behind", newest=visible(newest[device.model], 20)) if _behind(device, newest) else ""
        lines.append(
            f"- {w('room_firmware', firmware=visible(device.firmware, 20), model=visible(device.model, 20))}{behind}"
        )
    streams = channel_streams(device, language)
    if streams:
        lines.append(f"- {w('room_streams', streams=', '.join(streams))}")
    if device.online:
        verdict = w("ready") if event is not None else w("no_problem")
        lines.append(f"- {w('needs', problems='; '.join(found)) if found else verdict}")
    return lines


def channel_streams(device: Device, language: str) -> list[str]:
    """Each publisher of the device: ``Program (srt, on)``."""
    return [
        _w(
            language,
            "channel_stream",
            channel=_channel(c.name or c.channel_id, language),
            type=f"{visible(p.type, 12)}, {_w(language, 'on' if p.state == 'started' else 'off')}",
        )
        for c in device.channels
        for p in c.publishers
    ]


def streams(
    devices: Iterable[Device], endpoints: Iterable[StreamEndpoint] | None, language: str
) -> list[str]:
    """The stream destinations (when read: name, kind and host, and which rooms use each), then
    the rooms streaming now and those with a stream set up but stopped. A publisher is matched
    to a destination by ID (the lab gives a publisher its destination's ID)."""
    devices = _sorted(devices)
    out: list[str] = []
    if endpoints is not None:
        endpoints = list(endpoints)
        if not endpoints:
            out.append(_w(language, "streams_none"))
        else:
            lines = []
            for endpoint in endpoints:
                users = [
                    name(d, language)
                    for d in devices
                    if any(p.id == endpoint.id for c in d.channels for p in c.publishers)
                ]
                host = visible(endpoint.host or "?", 80)
                use = (
                    _w(language, "stream_used", rooms=", ".join(users))
                    if users
                    else _w(language, "stream_unused")
                )
                lines.append(f"- {quoted(endpoint.name or endpoint.id, language)}: {host}; {use}")
            out += _listing(_heading(language, "streams", len(endpoints)), lines, language)
    live = [d for d in devices if any(p.state == "started" for c in d.channels for p in c.publishers)]
    idle = [d for d in devices if d not in live and any(c.publishers for c in d.channels)]
    if live:
        lines = [f"- {name(d, language)}: {', '.join(channel_streams(d, language))}" for d in live]
        out += _listing(_heading(language, "streaming", len(live)), lines, language)
    else:
        out.append(_w(language, "streaming_none"))
    if idle:
        lines = [f"- {name(d, language)}: {', '.join(channel_streams(d, language))}" for d in idle]
        out += _listing(_heading(language, "stopped", len(idle)), lines, language)
    return out
