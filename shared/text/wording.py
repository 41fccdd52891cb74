"""Words for findings, priorities and events, in English and Latin American Spanish. Pure.

Used by the assistant's keyword answer and by ``fleetwatch fleet`` (in English), so there is
one wording. Every name from the fleet passes through `shared.text.display.visible`, so a hidden or
bidi character is shown, not obeyed. Priorities are words, never P1/critical.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

from shared.epiphan.attention import Finding, Priority, event_state, whole_minutes
from shared.epiphan.fleet import Device, Event, UnreadPart
from shared.text.catalogue import C_, Lexicon
from shared.text.display import visible
from shared.text.languages import LANGUAGES

PRIORITY_WORDS: Final[Lexicon[Priority, str]] = Lexicon(
    "priority",
    {
        Priority.FIX_FIRST: C_("priority", "Fix first"),
        Priority.FIX_SOON: C_("priority", "Fix soon"),
        Priority.WHEN_CONVENIENT: C_("priority", "When convenient"),
    },
)

FINDING_WORDS: Final[Lexicon[str, str]] = Lexicon(
    "finding",
    {
        "offline": C_("finding", "offline"),
        "not_recording_in_event": C_("finding", "not recording during its event"),
        "no_signal": C_("finding", "no signal on {channel}{source}"),
        "no_storage": C_("finding", "no storage detected"),
        "disk_low": C_("finding", "disk nearly full: {free}"),
        "cpu_high": C_("finding", "CPU at {cpu_pct}%"),
        "temp_high": C_("finding", "running hot ({temp_c} °C)"),
        "recent_reboot": C_("finding", "rebooted {minutes_ago} min ago"),
        "firmware_behind": C_("finding", "firmware {firmware}, family runs {newest}"),
    },
)

_EVENT_WORDS: Final[Lexicon[str, str]] = Lexicon(
    "event",
    {
        "event": C_("event", 'event "{title}"'),
        "on_now": C_("event", "{title} on now{ends}"),
        "ends": C_("event", " (ends in {minutes})"),
        "in": C_("event", "{title} in {minutes}"),
    },
)


def _language(language: str) -> str:
    return language if language in LANGUAGES else "en"


def minutes_text(delta_seconds: float) -> str:
    """``35 min`` or ``2 h 05 min`` (the same in both languages), to the nearest minute."""
    minutes = whole_minutes(delta_seconds)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


_MONTHS: Final[Lexicon[str, tuple[str, ...]]] = Lexicon(
    "month",
    {
        "months": (
            C_("month", "January"),
            C_("month", "February"),
            C_("month", "March"),
            C_("month", "April"),
            C_("month", "May"),
            C_("month", "June"),
            C_("month", "July"),
            C_("month", "August"),
            C_("month", "September"),
            C_("month", "October"),
            C_("month", "November"),
            C_("month", "December"),
        )
    },
)
_SIZE_WORDS: Final[Lexicon[str, str]] = Lexicon(
    "size",
    {
        "free": C_("size", "{pct} ({size}) free"),
        "of": C_("size", "{free} of {total}"),
        "since_day": C_("size", "since {day}"),
    },
)
_LAST_KNOWN: Final[Lexicon[str, str]] = Lexicon(
    "last known",
    {
        "unknown": C_("last known", "unknown"),
        "recording": C_("last known", "unknown (last known: recording{since})"),
        "idle": C_("last known", "unknown (last known: not recording)"),
        "since_time": C_("last known", ", since {time}"),
    },
)


_UNREAD: Final[Lexicon[str, tuple[str, ...]]] = Lexicon(
    "unread",
    {
        "recorder": (C_("unread:recorder", "recording status"), C_("unread:recorder", "could not be read")),
        "system": (
            C_("unread:system", "CPU, temperature and uptime"),
            C_("unread:system", "could not be read"),
        ),
        "events": (C_("unread:events", "events"), C_("unread:events", "could not be read")),
        "storage": (C_("unread:storage", "storage"), C_("unread:storage", "could not be read")),
    },
    keyed=True,
)
_UNREAD_SOME: Final[Lexicon[str, str]] = Lexicon(
    "unread", {"some": C_("unread", "{verb} for {n} of {total} devices")}
)


def part_words(part: str, language: str = "en") -> str:
    """A snapshot's part (`UnreadPart.part`) in words: ``events`` / ``eventos``, ``CPU,
    temperature and uptime``...; an unknown part as it is."""
    return _UNREAD[_language(language)].get(part, (part, ""))[0]


def unread_text(unread: UnreadPart, total_devices: int, language: str = "en") -> str:
    """A part that could not be read, in words: ``events: could not be read: <why>``, or
    ``events: could not be read for 100 of 250 devices: <why>`` when only some calls failed."""
    lang = _language(language)
    what, verb = _UNREAD[lang].get(unread.part, (unread.part, _UNREAD[lang]["events"][1]))
    if unread.device_ids and len(unread.device_ids) < total_devices:
        verb = _UNREAD_SOME[lang]["some"].format(verb=verb, n=len(unread.device_ids), total=total_devices)
    return f"{what}: {verb}: {visible(unread.message, 200)}"


def day_text(when: datetime, now: datetime, language: str = "en") -> str:
    """``12:41 UTC`` on the day of `now`; else ``March 3`` / ``3 de marzo``, with the year
    when it is not `now`'s (``March 3, 2025`` / ``3 de marzo de 2025``). UTC."""
    if when.date() == now.date():
        return f"{when:%H:%M} UTC"
    lang = _language(language)
    month = _MONTHS[lang]["months"][when.month - 1]
    if lang == "es":
        day = f"{when.day} de {month}"
        return day if when.year == now.year else f"{day} de {when.year}"
    day = f"{month} {when.day}"
    return day if when.year == now.year else f"{day}, {when.year}"


def size_text(size_bytes: float) -> str:
    """Bytes in decimal units (Epiphan's sizes are bytes; 1 GB = 10⁹ bytes): ``2.1 GB``,
    ``640 GB``, ``850 MB``, ``512 bytes``."""
    gb = size_bytes / 1e9
    if gb >= 100:
        return f"{gb:.0f} GB"
    if gb >= 1:
        return f"{gb:.1f} GB"
    if size_bytes >= 1e6:
        return f"{size_bytes / 1e6:.0f} MB"
    return f"{size_bytes:.0f} bytes"


def share_text(pct: float) -> str:
    """A share in percent: one decimal under 10 % (``0.4%``), none above (``64%``), and never
    ``0.0%`` for something that is not nothing (``<0.1%``)."""
    if 0 < pct < 0.05:
        return "<0.1%"
    return f"{pct:.1f}%" if pct < 10 else f"{pct:.0f}%"


def free_space(free_bytes: int, total_bytes: int, language: str = "en") -> str:
    """``0.4% (2.1 GB) free`` / ``0.4% (2.1 GB) libre``: the free share and the free bytes."""
    pct = 100.0 * free_bytes / total_bytes if total_bytes else 0.0
    words = _SIZE_WORDS[_language(language)]
    return words["free"].format(pct=share_text(pct), size=size_text(free_bytes))


def free_space_of(free_bytes: int, total_bytes: int, language: str = "en") -> str:
    """``0.4% (2.1 GB) free of 500 GB``."""
    words = _SIZE_WORDS[_language(language)]
    return words["of"].format(
        free=free_space(free_bytes, total_bytes, language), total=size_text(total_bytes)
    )


def recording_unknown(device: Device, now: datetime, language: str = "en") -> str:
    """An offline device's recording in words: unknown, with what was last reported:
    ``unknown (last known: recording, since March 3)``, ``unknown (last known: not
    recording)`` or ``unknown``."""
    words = _LAST_KNOWN[_language(language)]
    last = [c for c in device.channels if c.last_known_recording is not None]
    if not last:
        return words["unknown"]
    if not any(c.last_known_recording for c in last):
        return words["idle"]
    starts = [c.recording_since for c in last if c.last_known_recording and c.recording_since]
    if not starts:
        return words["recording"].format(since="")
    first = min(starts)
    if first.date() == now.date():
        since = words["since_time"].format(time=day_text(first, now, language))
    else:
        since = ", " + _SIZE_WORDS[_language(language)]["since_day"].format(
            day=day_text(first, now, language)
        )
    return words["recording"].format(since=since)


def describe_finding(finding: Finding, language: str = "en") -> str:
    """One line for a finding: ``Hall A: offline (event "Physics 101")`` / ``... desconectado ...``."""
    lang = _language(language)
    facts = {"channel": "", "source": "", **{k: visible(v, 80) for k, v in finding.facts}}
    if finding.kind == "disk_low":
        facts["free"] = _disk_words(facts, lang)
    text = FINDING_WORDS[lang].get(finding.kind, finding.kind).format(**facts)
    event = dict(finding.facts).get("event")
    suffix = " (" + _EVENT_WORDS[lang]["event"].format(title=visible(event, 80)) + ")" if event else ""
    return f"{visible(finding.device_name, 80)}: {text}{suffix}"


def _disk_words(facts: Mapping[str, str], language: str) -> str:
    """A ``disk_low`` finding's free space (``0.4% (2.1 GB) free``) from its facts."""
    try:
        return free_space(int(facts["free_bytes"]), int(facts["total_bytes"]), language)
    except (KeyError, ValueError):
        return "?"


def describe_event(event: Event | None, now: datetime, lead_minutes: int, language: str = "en") -> str:
    """``"Physics 101" in 35 min``, ``"Physics 101" on now (ends in 20 min)`` or ``-``."""
    if event is None or event.start is None:
        return "-"
    words = _EVENT_WORDS[_language(language)]
    title = f'"{visible(event.title, 40)}"'
    if event_state(event, now, lead_minutes) == "on_now":
        ends = (
            words["ends"].format(minutes=minutes_text((event.finish - now).total_seconds()))
            if event.finish
            else ""
        )
        return words["on_now"].format(title=title, ends=ends)
    if event.start > now:
        return words["in"].format(title=title, minutes=minutes_text((event.start - now).total_seconds()))
    return "-"
