"""Words for findings, priorities and events, in English and Latin American Spanish. Pure.

Used by the assistant's keyword answer and by ``fleetwatch fleet`` (in English), so there is
one wording. Every name from the fleet passes through `shared.text.display.visible`, so a hidden or
bidi character is shown, not obeyed. Priorities are words, never P1/critical.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

from shared.epiphan.attention import Finding, event_state, whole_minutes
from shared.epiphan.fleet import Device, Event, UnreadPart
from shared.text.catalogue import Lexicon
from shared.text.changes import quoted
from shared.text.display import visible
from shared.text.languages import language_of
from shared.text.times import say_number

PRIORITY_WORDS: Final = Lexicon("priority")
FINDING_WORDS: Final = Lexicon("finding")
_EVENT_WORDS: Final = Lexicon("event")


def minutes_text(delta_seconds: float) -> str:
    """``35 min`` or ``2 h 05 min`` (the same in both languages), to the nearest minute."""
    minutes = whole_minutes(delta_seconds)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


_MONTHS: Final = Lexicon("month")
"""``months.0`` (January) to ``months.11``; ``day`` and ``day_year``, a date's words in order."""
_SIZE_WORDS: Final = Lexicon("size")
_LAST_KNOWN: Final = Lexicon("last known")
_UNREAD: Final = Lexicon("unread")
"""``<part>.0`` a part's name, ``<part>.1`` its verb; ``some``, the verb for some devices."""


def part_words(part: str, language: str = "en") -> str:
    """A snapshot's part (`UnreadPart.part`) in words: ``events`` / ``eventos``, ``CPU,
    temperature and uptime``...; an unknown part as it is."""
    return _UNREAD[language_of(language)].get(f"{part}.0") or part


def unread_text(unread: UnreadPart, total_devices: int, language: str = "en") -> str:
    """A part that could not be read, in words: ``events: could not be read: <why>``, or
    ``events: could not be read for 100 of 250 devices: <why>`` when only some calls failed."""
    words = _UNREAD[language_of(language)]
    what = words.get(f"{unread.part}.0") or unread.part
    verb = words.get(f"{unread.part}.1") or words["events.1"]
    if unread.device_ids and len(unread.device_ids) < total_devices:
        verb = words["some"] % {"verb": verb, "n": len(unread.device_ids), "total": total_devices}
    return f"{what}: {verb}: {visible(unread.message, 200)}"


def day_text(when: datetime, now: datetime, language: str = "en") -> str:
    """``12:41 UTC`` on the day of `now`; else ``March 3`` / ``3 de marzo``, with the year
    when it is not `now`'s (``March 3, 2025`` / ``3 de marzo de 2025``). UTC."""
    if when.date() == now.date():
        return f"{when:%H:%M} UTC"
    words = _MONTHS[language_of(language)]
    date = {"month": words[f"months.{when.month - 1}"], "day": when.day, "year": when.year}
    return words["day" if when.year == now.year else "day_year"] % date


def size_text(size_bytes: float, language: str = "en") -> str:
    """Bytes in decimal units (Epiphan's sizes are bytes; 1 GB = 10⁹ bytes): ``2.1 GB``
    (``2,1 GB`` in Spanish: `say_number`), ``640 GB``, ``850 MB``, ``512 bytes``."""
    lang = language_of(language)
    gb = size_bytes / 1e9
    if gb >= 100:
        return f"{say_number(gb, language=lang)} GB"
    if gb >= 1:
        return f"{say_number(gb, decimals=1, language=lang)} GB"
    if size_bytes >= 1e6:
        return f"{say_number(size_bytes / 1e6, language=lang)} MB"
    return f"{say_number(size_bytes, language=lang)} bytes"


def share_text(pct: float, language: str = "en") -> str:
    """A share in percent: one decimal under 10 % (``0.4%``, ``0,4%`` in Spanish), none above
    (``64%``), and never ``0.0%`` for something that is not nothing (``<0.1%``)."""
    lang = language_of(language)
    if 0 < pct < 0.05:
        return f"<{say_number(0.1, decimals=1, language=lang)}%"
    return f"{say_number(pct, decimals=1 if pct < 10 else 0, language=lang)}%"


def free_space(free_bytes: int, total_bytes: int, language: str = "en") -> str:
    """``0.4% (2.1 GB) free`` / ``0.4% (2.1 GB) libre``: the free share and the free bytes."""
    pct = 100.0 * free_bytes / total_bytes if total_bytes else 0.0
    return _SIZE_WORDS[language_of(language)]["free"] % {
        "pct": share_text(pct, language),
        "size": size_text(free_bytes, language),
    }


def free_space_of(free_bytes: int, total_bytes: int, language: str = "en") -> str:
    """``0.4% (2.1 GB) free of 500 GB``."""
    return _SIZE_WORDS[language_of(language)]["of"] % {
        "free": free_space(free_bytes, total_bytes, language),
        "total": size_text(total_bytes, language),
    }


def recording_unknown(device: Device, now: datetime, language: str = "en") -> str:
    """An offline device's recording in words: unknown, with what was last reported:
    ``unknown (last known: recording, since March 3)``, ``unknown (last known: not
    recording)`` or ``unknown``."""
    words = _LAST_KNOWN[language_of(language)]
    last = [c for c in device.channels if c.last_known_recording is not None]
    if not last:
        return words["unknown"]
    if not any(c.last_known_recording for c in last):
        return words["idle"]
    starts = [c.recording_since for c in last if c.last_known_recording and c.recording_since]
    if not starts:
        return words["recording"] % {"since": ""}
    first = min(starts)
    if first.date() == now.date():
        since = words["since_time"] % {"time": day_text(first, now, language)}
    else:
        since = ", " + _SIZE_WORDS[language_of(language)]["since_day"] % {
            "day": day_text(first, now, language)
        }
    return words["recording"] % {"since": since}


def describe_finding(finding: Finding, language: str = "en") -> str:
    """One line for a finding: ``“Hall A”: offline (event "Physics 101")`` /
    ``«Hall A»: desconectado ...``; the room's name in the reader's quote marks
    (`shared.text.changes.quoted`)."""
    lang = language_of(language)
    facts = {"channel": "", "source": "", **{k: visible(v, 80) for k, v in finding.facts}}
    if finding.kind == "disk_low":
        facts["free"] = _disk_words(facts, lang)
    said = FINDING_WORDS[lang].get(finding.kind)
    text = said % facts if said is not None else finding.kind
    event = dict(finding.facts).get("event")
    suffix = " (" + _EVENT_WORDS[lang]["event"] % {"title": visible(event, 80)} + ")" if event else ""
    return f"{quoted(finding.device_name, lang)}: {text}{suffix}"


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
    words = _EVENT_WORDS[language_of(language)]
    title = f'"{visible(event.title, 40)}"'
    if event_state(event, now, lead_minutes) == "on_now":
        ends = (
            words["ends"] % {"minutes": minutes_text((event.finish - now).total_seconds())}
            if event.finish
            else ""
        )
        return words["on_now"] % {"title": title, "ends": ends}
    if event.start > now:
        return words["in"] % {"title": title, "minutes": minutes_text((event.start - now).total_seconds())}
    return "-"
