"""What an operator's question is about, in English or Latin American Spanish. Pure, no I/O.

Used by the assistant's keyword answer (`services.assistant.keyword`) and its fleet wording
(`shared.text.fleet_answers`); the lab's demo model keeps patterns of its own:

- a **topic**: ``offline``, ``recording``, ``disk``, ``temperature`` (and CPU load),
  ``firmware``, ``signal``, ``schedule`` (next classes), ``readiness`` (rooms that need
  attention before their class, "is X ready?"), ``attention`` (everything that needs
  attention), ``streams`` (stream destinations and who streams), ``writable`` (what may be
  changed), ``room`` (one named room: "how is SCI 101?"), ``change`` (a request to change
  something) or ``unknown``;
- for a change, its **action** (start or stop a recording or a stream, reboot, update firmware)
  and whether it names every room ("reboot every device");
- the **room** the question names, matched against the room names given (accents and case
  ignored; "SCI 101" names "SCI 101 Lecture Hall" when no other room starts that way).

A change is an imperative at the start of a sentence ("Start recording in Aula 12", "Reinicia
SCI 105", "Can you stop the stream…") or a need stated as one ("Which room needs a recording
started?", "¿Qué sala necesita empezar a grabar?"); "which rooms are recording?" is not one.
Names in a question are the operator's own words, never fleet data, so matching them is safe.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final


class Topic(enum.StrEnum):
    """What a question asks about (see the module docstring)."""

    OFFLINE = "offline"
    RECORDING = "recording"
    DISK = "disk"
    TEMPERATURE = "temperature"
    FIRMWARE = "firmware"
    SIGNAL = "signal"
    SCHEDULE = "schedule"
    READINESS = "readiness"
    ATTENTION = "attention"
    STREAMS = "streams"
    WRITABLE = "writable"
    ROOM = "room"
    CHANGE = "change"
    UNKNOWN = "unknown"


class Action(enum.StrEnum):
    """The change a question asks for; ``unclear`` when the verb names none of them."""

    START_RECORDING = "start_recording"
    STOP_RECORDING = "stop_recording"
    START_STREAM = "start_stream"
    STOP_STREAM = "stop_stream"
    REBOOT = "reboot"
    FIRMWARE_UPDATE = "firmware_update"
    UNCLEAR = "unclear"


@dataclass(frozen=True)
class Intent:
    """A question understood: its topic, the room it names (one of the names given, or None),
    and for a change its action, whether it targets every room, whether it asks for whatever
    is due (`Change.due`), and whether it names a room that is none of the names given."""

    topic: Topic
    room: str | None = None
    action: Action | None = None
    every_room: bool = False
    due: bool = False
    unknown_room: bool = False


def fold(text: str) -> str:
    """Lower case without accents: ``"¿Qué PASÓ?"`` → ``"¿que paso?"``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9ñ]+", fold(text))


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


# Sentence starts that make a change request (an imperative, in either language).
_POLITE = r"(?:(?:please|por favor|can you|could you|would you|puedes|podrias|quiero que)\s+)?"
_VERB_START = (
    r"start|begin|record|resume|inicia|iniciar|empieza|empezar|comienza|comenzar|arranca|arrancar"
    r"|graba|grabar|activa|activar|reanuda"
)
_VERB_STOP = r"stop|end|halt|deten|detener|para|parar|termina|terminar|finaliza|corta|apaga"
_VERB_REBOOT = r"reboot|restart|power cycle|reinicia|reiniciar|reinicie"
_VERB_UPDATE = r"update|upgrade|actualiza|actualizar|actualice"
_IMPERATIVE = re.compile(
    rf"^\s*{_POLITE}(?P<verb>{_VERB_START}|{_VERB_STOP}|{_VERB_REBOOT}|{_VERB_UPDATE})\b(?P<rest>.*)$"
)
_NEEDS_CHANGE = _any(
    r"\brecordings? (?:to be )?started\b",
    r"\b(?:needs?|should) (?:to )?(?:start|begin) (?:a |the )?recording",
    r"\bnecesitan? (?:empezar|iniciar|comenzar) a grabar",
    r"\bnecesitan? (?:que )?(?:se )?(?:inicie|empiece|comience) (?:la |una )?grabacion",
)
_PLAIN_VERBS = frozenset(
    {"start", "begin", "stop", "inicia", "iniciar", "empieza", "empezar", "deten", "detener"}
)
_RECORDING_WORD = re.compile(r"record|grab")
_STREAM_WORD = re.compile(r"stream|transmi|broadcast|en vivo|live")
_EVERY = re.compile(r"\b(?:all|every|each|todos|todas|cada)\b")
_DUE = re.compile(
    r"\b(?:any|all|every|cualquier|todas?|todos)\b.*\b(?:should|need|due|deba|deban|deberia|necesit)"
)
_NOT_A_PLACE: Final = frozenset(
    "a an the in on at for of to now please it this that its their recording recordings record "
    "stream streams streaming livestream broadcast live firmware device devices room rooms "
    "el la los las un una en de del para por favor ahora ya su sus grabacion grabaciones grabar "
    "transmision transmisiones firmware equipo equipos sala salas dispositivo dispositivos "
    "and y again otra vez".split()
)

# Topic words, checked in this order after a change (the first that matches wins).
_TOPICS: Final[tuple[tuple[Topic, re.Pattern[str]], ...]] = (
    (
        Topic.WRITABLE,
        _any(
            r"\b(?:can|may|could|allowed to)\b.*\b(?:chang|modif|control|touch|writ)",
            r"\bchangeable\b|\bwritable\b|\bsandbox\b|\bpractice (?:team|rooms?)\b",
            r"\b(?:puedo|puedes|podemos|puede|pueden)\b.*\b(?:cambia|modifica|controla)",
            r"\b(?:equipo|grupo) de (?:pruebas|practica)\b|\bsalas? de (?:pruebas|practica)\b",
        ),
    ),
    (
        Topic.READINESS,
        _any(
            r"\bready\b|\bprepared\b|\blist[oa]s?\b|\bpreparad[oa]s?\b",
            r"\b(?:attention|problems?|issues?|wrong|atencion|problemas?|fallas?)\b.*\b(?:class|classes|lecture|event|clases?|evento)\b",
        ),
    ),
    (
        Topic.OFFLINE,
        _any(
            r"offline|\bdown\b|unreachable|disconnected|not online|not connected",
            r"desconectad|fuera de linea|apagad|sin conexion|no conectad|caid[oa]s?\b|no responden?",
        ),
    ),
    (Topic.RECORDING, _any(r"\brecord", r"\bgraba", r"\bgrabacion")),
    (
        Topic.DISK,
        _any(
            r"\bdisk|\bstorage\b|\bspace\b|\bsd card\b|\bfull\b",
            r"\bdisco|almacenamiento|espacio|llen[oa]s?\b",
        ),
    ),
    (
        Topic.TEMPERATURE,
        _any(
            r"temperature|\bhot\b|\bheat|overheat|\bcpu\b|\bload\b",
            r"temperatura|caliente|calor|sobrecalent|\bcarga\b",
        ),
    ),
    (
        Topic.FIRMWARE,
        _any(r"firmware|\bversions?\b|outdated|out of date", r"\bversion(?:es)?\b|desactualizad"),
    ),
    (
        Topic.SIGNAL,
        _any(
            r"\bsignal\b|\bdark\b|\bblack\b|no video|no picture|no image",
            r"\bsenal\b|sin video|sin imagen|oscur|en negro",
        ),
    ),
    (
        Topic.STREAMS,
        _any(
            r"\bstream|destination|\brtmp\b|\bsrt\b|livestream|broadcast|youtube",
            r"transmision|transmiten|transmitiendo|\bdestinos?\b|en vivo",
        ),
    ),
    (
        Topic.SCHEDULE,
        _any(
            r"\bnext\b|upcoming|schedule|calendar|\bevents?\b|\bclass(?:es)?\b|\blectures?\b|\bwhen\b",
            r"\bproxim[oa]s?\b|\bagenda\b|\beventos?\b|\bclases?\b|\bhorario|calendario|\bcuando\b",
        ),
    ),
    (
        Topic.ATTENTION,
        _any(
            r"attention|problems?|issues?|wrong|status|health|overview|summary|check",
            r"atencion|problemas?|fallas?|estado|resumen|revisa|revision|salud",
        ),
    ),
)


def _action(verb: str, rest: str) -> Action | None:
    """The action of an imperative, ``unclear`` for a plain start/stop verb without an object,
    None when the verb is not a change here ("para" is also "for"; "update me on…")."""
    if re.fullmatch(_VERB_REBOOT, verb):
        return Action.REBOOT
    if re.fullmatch(_VERB_UPDATE, verb):
        return Action.FIRMWARE_UPDATE if "firmware" in rest else None
    stop = bool(re.fullmatch(_VERB_STOP, verb))
    if _RECORDING_WORD.search(verb + " " + rest):
        return Action.STOP_RECORDING if stop else Action.START_RECORDING
    if _STREAM_WORD.search(rest):
        return Action.STOP_STREAM if stop else Action.START_STREAM
    return Action.UNCLEAR if verb in _PLAIN_VERBS else None


@dataclass(frozen=True)
class Change:
    """A change request: the action; ``every`` (all rooms: "reboot every device"); ``due``
    (whatever should be running: "start any recording that should be running", "which room
    needs a recording started?"); ``place`` (the request names something after its verb that
    is not an action word: a room, known or not)."""

    action: Action
    every: bool = False
    due: bool = False
    place: bool = False


def _place(rest: str) -> bool:
    return any(word not in _NOT_A_PLACE for word in _words(rest))


def change_of(question: str) -> Change | None:
    """The change a question asks for, or None when it asks for none (see the module docstring)."""
    folded = fold(question)
    due = bool(_DUE.search(folded) or _NEEDS_CHANGE.search(folded))
    for sentence in re.split(r"[.?!;¿¡\n]+", folded):
        found = _IMPERATIVE.match(sentence)
        action = None if found is None else _action(found.group("verb"), found.group("rest"))
        if found is not None and action is not None:
            rest = found.group("rest")
            return Change(action, bool(_EVERY.search(rest)) and not due, due, _place(rest))
    if _NEEDS_CHANGE.search(folded):
        return Change(Action.START_RECORDING, due=True)
    return None


def topic_of(question: str) -> Topic:
    """The topic by keywords alone (no room names): a change first, then `_TOPICS` in order."""
    if change_of(question) is not None:
        return Topic.CHANGE
    folded = fold(question)
    for topic, pattern in _TOPICS:
        if pattern.search(folded):
            return topic
    return Topic.UNKNOWN


def find_name(question: str, names: Iterable[str]) -> str | None:
    """The room name the question names, or None.

    A name is named when all its words appear in a row in the question (the longest such name
    wins), or, failing that, by its start: the longest run of its first words (at least two,
    one of them a number) that appears in the question and starts no other name as far
    ("SCI 101" names "SCI 101 Lecture Hall"; two rooms both starting "SCI 101" make it None).
    """
    said = " " + " ".join(_words(question)) + " "
    whole: list[tuple[int, str]] = []
    starts: list[tuple[int, str]] = []
    for name in sorted({n for n in names if n.strip()}):
        words = _words(name)
        if words and f" {' '.join(words)} " in said:
            whole.append((len(words), name))
            continue
        for size in range(len(words) - 1, 1, -1):
            if any(w.isdigit() for w in words[:size]) and f" {' '.join(words[:size])} " in said:
                starts.append((size, name))
                break
    found = whole or starts
    if not found:
        return None
    longest = max(size for size, _ in found)
    named = [name for size, name in found if size == longest]
    return named[0] if len(named) == 1 else None


def _without(question: str, room: str | None) -> str:
    """The question with the room's name (or the start of it that named it) taken out, so a
    name such as "Sandbox Classroom" or "Recording Studio" does not read as a topic word."""
    if room is None:
        return question
    folded = fold(question)
    words = _words(room)
    for size in range(len(words), 1 if len(words) > 1 else 0, -1):
        pattern = r"\b" + r"[^a-z0-9]+".join(re.escape(w) for w in words[:size]) + r"\b"
        cut = re.sub(pattern, " ", folded, count=1)
        if cut != folded:
            return cut
    return folded


def understand(question: str, names: Iterable[str] = ()) -> Intent:
    """The question's `Intent`. A named room turns any topic but a change or what may be
    changed into ``room`` (its status answers "is it ready / recording / online"); the room's
    own name never counts as a topic word."""
    room = find_name(question, names)
    rest = _without(question, room)
    change = change_of(rest)
    if change is not None:
        return Intent(
            Topic.CHANGE,
            room,
            change.action,
            every_room=change.every and room is None,
            due=change.due and room is None,
            unknown_room=room is None and change.place and not change.due and not change.every,
        )
    topic = topic_of(rest)
    if room is not None and topic is not Topic.WRITABLE:
        return Intent(Topic.ROOM, room)
    return Intent(topic, room)
