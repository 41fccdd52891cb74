"""The keyword answer: read-only, no model, English or Spanish. Pure (pass the snapshot and ``now``).

Used when there is no model key, or the model failed (API error, refusal, timeout). It answers
four kinds of question, recognised by keywords in either language:

- what is **offline** (offline, down / desconectado, fuera de línea, apagado);
- is **<room> ready** (ready / lista, listo, preparada): the room is found by its name in the
  question (the longest name that appears wins);
- the **next events** (next, upcoming, schedule / próximos, eventos, agenda);
- otherwise, **what needs attention**, grouped as Fix first / Fix soon / When convenient.

It has no path to a proposal: it takes a snapshot and returns text, nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta
from typing import Final

from shared.attention import DEFAULT_THRESHOLDS, Priority, Thresholds, findings
from shared.display import visible
from shared.fleet import Device, FleetSnapshot
from shared.wording import PRIORITY_WORDS, describe_event, describe_finding

MAX_LINES: Final = 20
_INTENTS: Final = (
    ("offline", re.compile(r"offline|\bdown\b|desconectad|fuera de l[ií]nea|apagad|sin conexi[oó]n", re.I)),
    ("ready", re.compile(r"\bready\b|\blist[oa]s?\b|preparad", re.I)),
    (
        "events",
        re.compile(r"\bnext\b|upcoming|schedule|calendar|\bevents?\b|pr[oó]xim|eventos?|agenda|clases", re.I),
    ),
)
_WORDS: Final = {
    "en": {
        "nothing": "Nothing needs attention.",
        "no_offline": "Every device is online.",
        "offline": "{n} offline:",
        "no_events": "No events in the next 24 hours.",
        "events": "Next events:",
        "no_room": "Which room? I could not find a room name in the question.",
        "ready": "{room} looks ready: online, no problems found.",
        "not_ready": "{room} is not ready:",
        "next": "Next event: {event}.",
        "more": "…and {n} more.",
    },
    "es": {
        "nothing": "Nada necesita atención.",
        "no_offline": "Todos los equipos están conectados.",
        "offline": "{n} desconectados:",
        "no_events": "No hay eventos en las próximas 24 horas.",
        "events": "Próximos eventos:",
        "no_room": "¿Qué sala? No encontré el nombre de una sala en la pregunta.",
        "ready": "{room} parece lista: conectada, sin problemas.",
        "not_ready": "{room} no está lista:",
        "next": "Próximo evento: {event}.",
        "more": "…y {n} más.",
    },
}


def intent_of(question: str) -> str:
    """``offline``, ``ready``, ``events`` or ``attention``."""
    for name, pattern in _INTENTS:
        if pattern.search(question):
            return name
    return "attention"


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def find_room(question: str, devices: tuple[Device, ...]) -> Device | None:
    """The device whose name appears in the question (accents and case ignored; the longest
    such name wins), or None."""
    folded = _fold(question)
    named = [d for d in devices if d.name.strip() and _fold(d.name.strip()) in folded]
    return max(named, key=lambda d: len(d.name), default=None)


def _capped(lines: list[str], words: dict[str, str]) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return [*lines[:MAX_LINES], words["more"].format(n=len(lines) - MAX_LINES)]


def keyword_answer(
    question: str,
    language: str,
    snapshot: FleetSnapshot,
    now: datetime,
    limits: Thresholds = DEFAULT_THRESHOLDS,
) -> str:
    """The keyword answer to `question` about `snapshot` at `now` (UTC), in `language`."""
    lang = language if language in _WORDS else "en"
    words = _WORDS[lang]
    intent = intent_of(question)
    found = findings(snapshot, now, limits)
    if intent == "offline":
        offline = sorted((d for d in snapshot.devices if not d.online), key=lambda d: d.name.casefold())
        if not offline:
            return words["no_offline"]
        lines = [f"- {visible(d.name, 80)} ({d.id})" for d in offline]
        return "\n".join([words["offline"].format(n=len(offline)), *_capped(lines, words)])
    if intent == "ready":
        room = find_room(question, snapshot.devices)
        if room is None:
            return words["no_room"]
        name = visible(room.name, 80)
        problems = [f for f in found if f.device_id == room.id and f.priority is not Priority.WHEN_CONVENIENT]
        event = describe_event(snapshot.events.get(room.id), now, limits.lead_minutes, lang)
        head = words["not_ready"].format(room=name) if problems else words["ready"].format(room=name)
        lines = [f"- {PRIORITY_WORDS[lang][f.priority]}: {describe_finding(f, lang)}" for f in problems]
        tail = [words["next"].format(event=event)] if event != "-" else []
        return "\n".join([head, *lines, *tail])
    if intent == "events":
        horizon = now + timedelta(hours=24)
        upcoming = sorted(
            (
                (e.start, d)
                for d in snapshot.devices
                if (e := snapshot.events.get(d.id)) is not None
                and e.start is not None
                and e.start <= horizon
                and (e.finish or e.start) >= now
            ),
            key=lambda pair: (pair[0], pair[1].name.casefold()),
        )
        if not upcoming:
            return words["no_events"]
        lines = [
            f"- {start:%H:%M} UTC {visible(d.name, 80)}: {describe_event(snapshot.events[d.id], now, limits.lead_minutes, lang)}"
            for start, d in upcoming
        ]
        return "\n".join([words["events"], *_capped(lines, words)])
    if not found:
        return words["nothing"]
    out: list[str] = []
    for priority in Priority:
        group = [f for f in found if f.priority == priority]
        if group:
            out.append(f"{PRIORITY_WORDS[lang][priority]}:")
            out.extend(_capped([f"- {describe_finding(f, lang)}" for f in group], words))
    return "\n".join(out)
