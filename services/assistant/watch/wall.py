"""The wall screen: ``GET /wall`` on the ask page's port, read-only, for a screen in the AV office.

It shows the attention groups (Fix first / Fix soon / When convenient) with operators' room
notes, the classes on now and in the next hours with their readiness (each room's note under
its name, a ready room's too), and when the fleet was
last read (stale after three heartbeats; a failing read says so, and so does a part the last
read could not read: `events: could not be read: …`). It is built from the
watch's last read in memory (`wall_view`, pure) and rendered by an autoescaping template.

Same guards as the ask page (its app's middleware: the Host check and the security headers,
a CSP with no script at all), and no secret: nothing on it can change anything, there is no
form. It refreshes itself with ``<meta http-equiv="refresh">`` (the one way under that CSP).
``?lang=es`` or ``?lang=en`` picks the language (default: ``FLEETWATCH_WATCH_LANGUAGE``).
Inside quiet hours it says that posts are held and until when; it lists the silences that hold
(who, until when, why), and the rooms a change may target (the sandbox team's, which the watch's
read sign-in does not read), read afresh through approval.sock and the executor for each view
(`wall_for`'s ``sandbox``), or that they could not be read and why (the code).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from services.assistant.watch import readiness
from services.assistant.watch.captures import events_ahead
from services.assistant.watch.compose import NAME_CAP, NOTE_CAP, VERDICT_KEYS, describe, silence_line
from services.assistant.watch.heartbeat import Watch
from services.assistant.watch.silences import Silence
from services.assistant.watch.times import clock, parse_utc
from services.assistant.watch.words import word
from shared.epiphan.attention import Priority
from shared.errors import FleetwatchError
from shared.text.catalogue import say_text
from shared.text.changes import quoted_name
from shared.text.display import visible
from shared.text.languages import language_of
from shared.text.times import say_ago
from shared.text.wording import PRIORITY_WORDS, unread_text
from shared.wire.executor import WritableDevices

EVENT_HOURS: Final = 4
"""How far ahead the wall lists classes."""
MAX_REFRESH_SECONDS: Final = 60
MIN_REFRESH_SECONDS: Final = 5
MAX_WALL_LINES: Final = 200
CSS: Final = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem;background:#111;color:#eee;font-size:1.25rem}"
    "h1{margin:0 0 .5rem}h2{margin:1.2rem 0 .4rem}.read{color:#9c9}.stale,.problem{color:#f96}"
    ".p1{color:#f77}.p2{color:#fc6}.p3{color:#9cf}.note{display:block;color:#bbb;font-size:1rem;margin-left:1rem}"
    "table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #333}"
    ".not_ready td:last-child{color:#f77}.ready_notes td:last-child{color:#fc6}.ready td:last-child{color:#9c9}"
    ".calm{color:#9c9}.held{color:#fc6}footer{color:#888;font-size:.9rem;margin-top:2rem}"
)


@dataclass(frozen=True, slots=True)
class WallLine:
    text: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class WallGroup:
    priority: int
    heading: str
    lines: tuple[WallLine, ...]


@dataclass(frozen=True, slots=True)
class WallEvent:
    time: str
    room: str
    title: str
    verdict: str
    verdict_text: str
    reasons: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class WallView:
    """Everything the template shows, as display text (names already made visible)."""

    lang: str
    title: str
    read_line: str
    stale: bool
    problem: str | None
    counts: str
    groups: tuple[WallGroup, ...]
    all_clear: str
    events_heading: str
    events: tuple[WallEvent, ...]
    no_events: str
    when_word: str
    room_word: str
    event_word: str
    ready_word: str
    footer: str
    refresh_seconds: int
    held: str | None = None
    silenced_heading: str = ""
    silenced: tuple[str, ...] = ()
    sandbox_heading: str = ""
    """The rooms a change may target, and when they were read ("" when not asked)."""
    sandbox: tuple[str, ...] = ()
    sandbox_problem: str | None = None
    """Why the rooms a change may target could not be read (the code), or None."""


def wall_view(
    watch: Watch,
    notes: dict[str, str],
    language: str,
    now: datetime,
    silences: Sequence[Silence] = (),
    sandbox: WritableDevices | FleetwatchError | None = None,
) -> WallView:
    """The wall as it stands at `now` (see the module docstring); `silences`: those that
    hold now; `sandbox`: the rooms a change may target as just read, or why they could not be
    (None: not asked, nothing shown)."""
    lang = language_of(language)
    interval = watch.options.interval_seconds
    refresh = int(min(MAX_REFRESH_SECONDS, max(MIN_REFRESH_SECONDS, interval)))
    last = watch.last
    read_at = watch.last_read_at
    stale = not watch.alive(now)
    if read_at is None:
        read_line = word(lang, "wall_not_read")
    else:
        ago = say_ago(read_at, now=now, language=lang)
        key = "wall_stale" if stale else "wall_read"
        read_line = word(lang, key, time=clock(read_at, watch.where, now, lang), ago=ago)
    problem = (
        word(lang, "wall_problem", n=watch.failed_beats, code=watch.last_code) if watch.failed_beats else None
    )
    if problem is None and last is not None and last.snapshot.unread:
        total = len(last.snapshot.devices)
        problem = "; ".join(unread_text(u, total, lang) for u in last.snapshot.unread)
    groups: list[WallGroup] = []
    events: list[WallEvent] = []
    counts = ""
    if last is not None:
        devices = last.snapshot.devices
        counts = word(lang, "wall_counts", rooms=len(devices), online=sum(d.online for d in devices))
        shown: set[str] = set()
        for priority in Priority:
            lines = []
            for finding in (f for f in last.findings if f.priority is priority):
                note = notes.get(finding.device_id) if finding.device_id not in shown else None
                if note is not None:
                    shown.add(finding.device_id)
                    note = word(lang, "note", text=visible(note, NOTE_CAP))
                lines.append(WallLine(describe(finding, lang), note))
            if lines:
                groups.append(
                    WallGroup(int(priority), PRIORITY_WORDS[lang][priority], tuple(lines[:MAX_WALL_LINES]))
                )
        events = _events(watch, lang, now, notes)
    return WallView(
        lang=lang,
        title=word(lang, "wall_title"),
        read_line=read_line,
        stale=stale,
        problem=problem,
        counts=counts,
        groups=tuple(groups),
        all_clear=word(lang, "wall_all_clear") if last is not None else "",
        events_heading=word(lang, "wall_events", hours=EVENT_HOURS, zone=watch.zone_name),
        events=tuple(events),
        no_events=word(lang, "wall_no_events") if last is not None else "",
        when_word=word(lang, "wall_when"),
        room_word=word(lang, "wall_room"),
        event_word=word(lang, "wall_event"),
        ready_word=word(lang, "wall_ready"),
        footer=word(lang, "wall_footer", seconds=refresh),
        refresh_seconds=refresh,
        held=held_line(watch, lang, now),
        silenced_heading=word(lang, "silenced_head"),
        silenced=tuple(silence_line(s, lang, watch.where, now) for s in silences[:MAX_WALL_LINES]),
        **sandbox_fields(sandbox, watch, lang, now),
    )


def sandbox_fields(
    sandbox: WritableDevices | FleetwatchError | None, watch: Watch, lang: str, now: datetime
) -> dict[str, object]:
    """The `WallView` fields of the rooms a change may target (`wall_view`'s `sandbox`): a
    heading with when they were read and one line per room (its name quoted, its device ID,
    online or not), or why they could not be read."""
    if sandbox is None:
        return {}
    if isinstance(sandbox, FleetwatchError):
        return {
            "sandbox_heading": word(lang, "wall_sandbox_heading"),
            "sandbox_problem": word(lang, "wall_sandbox_not_read", code=str(sandbox.code)),
        }
    lines = tuple(
        word(
            lang,
            "wall_sandbox_online" if device.online else "wall_sandbox_offline",
            name=say_text(quoted_name(device.name), language_of(lang), zone=watch.where, now=now)
            if device.name
            else visible(device.device_id, NAME_CAP),
            id=visible(device.device_id, NAME_CAP),
        )
        for device in sandbox.devices[:MAX_WALL_LINES]
    )
    return {
        "sandbox_heading": word(
            lang, "wall_sandbox_read", time=clock(parse_utc(sandbox.read_at), watch.where, now, lang)
        ),
        "sandbox": lines or (word(lang, "wall_sandbox_none"),),
    }


def held_line(watch: Watch, language: str, now: datetime) -> str | None:
    """ "Quiet hours: posts are held until 06:00 (America/Mexico_City)." inside quiet hours."""
    until = watch.held_until(now)
    if until is None:
        return None
    return word(language, "held_until", time=clock(until, watch.where, now, language), zone=watch.zone_name)


def _events(watch: Watch, lang: str, now: datetime, notes: dict[str, str]) -> list[WallEvent]:
    last = watch.last
    assert last is not None
    snapshot = last.snapshot
    horizon = now + timedelta(hours=EVENT_HOURS)
    rows = []
    for device, event, start, _ in events_ahead(snapshot, now, horizon):
        verdict, reasons = readiness.judge(device, event, snapshot, now, watch.limits, lang)
        on_now = start <= now
        rows.append(
            (
                start,
                WallEvent(
                    time=word(lang, "wall_on_now") if on_now else clock(event.start, watch.where, now, lang),
                    room=visible(device.name or device.id, NAME_CAP),
                    title=visible(event.title, NAME_CAP) or word(lang, "untitled"),
                    verdict=verdict,
                    verdict_text=word(lang, VERDICT_KEYS[verdict]),
                    reasons="; ".join(reasons),
                    note=word(lang, "note", text=visible(notes[device.id], NOTE_CAP))
                    if device.id in notes
                    else None,
                ),
            )
        )
    rows.sort(key=lambda r: (r[0], r[1].room.casefold()))
    return [r[1] for r in rows[:MAX_WALL_LINES]]
