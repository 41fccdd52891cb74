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

from shared.epiphan.attention import Finding, Priority, event_state
from shared.epiphan.fleet import Event
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
            "disk_low": "disk nearly full ({free_pct}% free)",
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
            "disk_low": "disco casi lleno ({free_pct}% libre)",
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
    """``35 min`` or ``2 h 05 min`` (the same in both languages)."""
    minutes = int(abs(delta_seconds) // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def describe_finding(finding: Finding, language: str = "en") -> str:
    """One line for a finding: ``Hall A: offline (event "Physics 101")`` / ``... desconectado ...``."""
    lang = _language(language)
    facts = {"channel": "", "source": "", "free_pct": "?", **{k: visible(v, 80) for k, v in finding.facts}}
    text = FINDING_WORDS[lang].get(finding.kind, finding.kind).format(**facts)
    event = dict(finding.facts).get("event")
    suffix = " (" + _EVENT_WORDS[lang]["event"].format(title=visible(event, 80)) + ")" if event else ""
    return f"{visible(finding.device_name, 80)}: {text}{suffix}"


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
