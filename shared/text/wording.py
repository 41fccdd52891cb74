"""Words for findings, priorities and events, in English and Latin American Spanish. Pure.

Used by the assistant's keyword answer and by ``fleetwatch fleet`` (in English), so there is
one wording. Every name from the fleet passes through `shared.text.display.visible`, so a hidden or
bidi character is shown, not obeyed. Priorities are words, never P1/critical.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Final

from shared.epiphan.attention import Finding, Priority, event_state, whole_minutes
from shared.epiphan.fleet import Device, Event, UnreadPart
from shared.text.display import visible
from shared.text.languages import LANGUAGES

PRIORITY_WORDS: Final[Mapping[str, Mapping[Priority, str]]] = MappingProxyType(
    {
        "en": {
            Priority.FIX_FIRST: "Fix first",
            Priority.FIX_SOON: "Fix soon",
            Priority.WHEN_CONVENIENT: "When convenient",
        },
        "es": {
            Priority.FIX_FIRST: "Arreglar primero",
            Priority.FIX_SOON: "Arreglar pronto",
            Priority.WHEN_CONVENIENT: "Cuando convenga",
        },
    }
)

FINDING_WORDS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "en": {
            "offline": "offline",
            "not_recording_in_event": "not recording during its event",
            "no_signal": "no signal on {channel}{source}",
            "no_storage": "no storage detected",
            "disk_low": "disk nearly full: {free}",
            "cpu_high": "CPU at {cpu_pct}%",
            "temp_high": "running hot ({temp_c} °C)",
            "recent_reboot": "rebooted {minutes_ago} min ago",
            "firmware_behind": "firmware {firmware}, family runs {newest}",
        },
        "es": {
            "offline": "desconectado",
            "not_recording_in_event": "no está grabando durante su evento",
            "no_signal": "sin señal en {channel}{source}",
            "no_storage": "no se detecta almacenamiento",
            "disk_low": "disco casi lleno: {free}",
            "cpu_high": "CPU al {cpu_pct}%",
            "temp_high": "muy caliente ({temp_c} °C)",
            "recent_reboot": "se reinició hace {minutes_ago} min",
            "firmware_behind": "firmware {firmware}, su familia usa {newest}",
        },
    }
)

_EVENT_WORDS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "en": {
            "event": 'event "{title}"',
            "on_now": "{title} on now{ends}",
            "ends": " (ends in {minutes})",
            "in": "{title} in {minutes}",
        },
        "es": {
            "event": 'evento "{title}"',
            "on_now": "{title} en curso{ends}",
            "ends": " (termina en {minutes})",
            "in": "{title} en {minutes}",
        },
    }
)


def _language(language: str) -> str:
    return language if language in LANGUAGES else "en"


def minutes_text(delta_seconds: float) -> str:
    """``35 min`` or ``2 h 05 min`` (the same in both languages), to the nearest minute."""
    minutes = whole_minutes(delta_seconds)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


_MONTHS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "en": (
            "January", "February", "March", "April", "May", "June",
            "July", "August", "September", "October", "November", "December",
        ),
        "es": (
            "enero", "febrero", "marzo", "abril", "mayo", "junio",
            "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre",
        ),
    }
)  # fmt: skip
_SIZE_WORDS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "en": {"free": "{pct} ({size}) free", "of": "{free} of {total}", "since_day": "since {day}"},
        "es": {"free": "{pct} ({size}) libre", "of": "{free} de {total}", "since_day": "desde el {day}"},
    }
)
_LAST_KNOWN: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "en": {
            "unknown": "unknown",
            "recording": "unknown (last known: recording{since})",
            "idle": "unknown (last known: not recording)",
            "since_time": ", since {time}",
        },
        "es": {
            "unknown": "desconocida",
            "recording": "desconocida (último dato: grabando{since})",
            "idle": "desconocida (último dato: sin grabar)",
            "since_time": ", desde {time}",
        },
    }
)


_UNREAD: Final[Mapping[str, Mapping[str, tuple[str, str]]]] = MappingProxyType(
    {
        "en": {
            "recorder": ("recording status", "could not be read"),
            "system": ("CPU, temperature and uptime", "could not be read"),
            "events": ("events", "could not be read"),
            "storage": ("storage", "could not be read"),
        },
        "es": {
            "recorder": ("estado de grabación", "no se pudo leer"),
            "system": ("CPU, temperatura y tiempo encendido", "no se pudieron leer"),
            "events": ("eventos", "no se pudieron leer"),
            "storage": ("almacenamiento", "no se pudo leer"),
        },
    }
)
_UNREAD_SOME: Final[Mapping[str, str]] = MappingProxyType(
    {"en": "{verb} for {n} of {total} devices", "es": "{verb} para {n} de {total} equipos"}
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
        verb = _UNREAD_SOME[lang].format(verb=verb, n=len(unread.device_ids), total=total_devices)
    return f"{what}: {verb}: {visible(unread.message, 200)}"


def day_text(when: datetime, now: datetime, language: str = "en") -> str:
    """``12:41 UTC`` on the day of `now`; else ``March 3`` / ``3 de marzo``, with the year
    when it is not `now`'s (``March 3, 2025`` / ``3 de marzo de 2025``). UTC."""
    if when.date() == now.date():
        return f"{when:%H:%M} UTC"
    lang = _language(language)
    month = _MONTHS[lang][when.month - 1]
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
