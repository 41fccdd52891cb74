"""The keyword answer: read-only, no model, English or Spanish. Pure (pass the snapshot and ``now``).

Used when there is no model key, or the model failed (API error, refusal, timeout). It
understands the same questions as the rest of Fleetwatch (`shared.text.questions`: offline rooms,
recording rooms, disk, temperature, firmware, signal, the next classes, readiness, one named
room, stream destinations, what may be changed, everything that needs attention) and answers
each from the fleet snapshot with the shared wording (`shared.text.fleet_answers`). A change
request gets the room's status and a plain "nothing was proposed"; a question it cannot map
gets the list of questions it understands. Every answer ends by saying it is the keyword
answer. A part of the fleet that could not be read (`FleetSnapshot.unread`) is named in the
answer ("events: could not be read: …"); a question about that part is answered with only that.

It has no path to a proposal: it takes a snapshot and returns text, nothing else. It cannot see
the practice (sandbox) team or the stream destinations' names: the snapshot holds neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from shared.epiphan.attention import DEFAULT_THRESHOLDS, Priority, Thresholds, findings
from shared.epiphan.fleet import FleetSnapshot, StorageStatus, storage_from_warnings
from shared.text import fleet_answers as say
from shared.text.catalogue import Lexicon
from shared.text.change_words import change
from shared.text.languages import language_of
from shared.text.questions import Intent, Topic, understand
from shared.text.wording import PRIORITY_WORDS, describe_finding

_WORDS: Final = Lexicon("keyword answer")


def _storage(snapshot: FleetSnapshot) -> dict[str, StorageStatus]:
    found = {d.id: storage_from_warnings(d) for d in snapshot.devices}
    return {device_id: s for device_id, s in found.items() if s is not None}


def _attention(snapshot: FleetSnapshot, now: datetime, limits: Thresholds, lang: str) -> list[str]:
    found = findings(snapshot, now, limits)
    if not found:
        return [_WORDS[lang]["nothing"]]
    out: list[str] = []
    for priority in Priority:
        group = [f for f in found if f.priority == priority]
        if group:
            out.append(f"{PRIORITY_WORDS[lang][priority]}:")
            lines = [f"- {describe_finding(f, lang)}" for f in group]
            out.extend(lines if len(lines) <= say.MAX_LINES else [*lines[: say.MAX_LINES], "…"])
    return out


def _body(
    intent: Intent,
    lang: str,
    snapshot: FleetSnapshot,
    now: datetime,
    limits: Thresholds,
    proposable: Sequence[str] = (),
) -> list[str]:
    words = _WORDS[lang]
    devices, events = snapshot.devices, snapshot.events
    room = next((d for d in devices if d.name == intent.room), None) if intent.room else None
    topic = intent.topic
    if topic is Topic.ROOM and room is not None:
        return say.room(
            room,
            events.get(room.id),
            now,
            lang,
            fleet=devices,
            system=snapshot.system.get(room.id),
            storage=_storage(snapshot).get(room.id),
            limits=limits,
        )
    if topic is Topic.CHANGE and intent.due:
        return [*say.readiness(devices, events, now, lang, limits=limits), words["change"]]
    if topic is Topic.CHANGE:
        status = (
            say.room(room, events.get(room.id), now, lang, fleet=devices, system=snapshot.system.get(room.id))
            if room is not None
            else []
        )
        return [words["change"], *status]
    if topic is Topic.WRITABLE:
        allowed = list(dict.fromkeys(change(tool, None, lang) for tool in proposable))
        listed = [words["changes"] % {"changes": ", ".join(allowed)}] if allowed else []
        return [words["writable"] % {"count": len(devices)}, *listed]
    if topic is Topic.OFFLINE:
        return say.offline(devices, events, now, lang)
    if topic is Topic.RECORDING:
        return say.recording(devices, now, lang)
    if topic is Topic.DISK:
        return say.disk(devices, _storage(snapshot), lang, limits)
    if topic is Topic.TEMPERATURE:
        return say.heat(devices, snapshot.system, lang, limits)
    if topic is Topic.FIRMWARE:
        return say.firmware(devices, lang)
    if topic is Topic.SIGNAL:
        return say.signal(devices, lang)
    if topic is Topic.SCHEDULE:
        return say.schedule(devices, events, now, lang)
    if topic is Topic.READINESS:
        return say.readiness(devices, events, now, lang, limits=limits)
    if topic is Topic.STREAMS:
        return [*say.streams(devices, None, lang), words["no_names"]]
    if topic is Topic.ATTENTION:
        return _attention(snapshot, now, limits, lang)
    return [words["unknown"] % {"examples": say.examples(lang)}]


def keyword_answer(
    question: str,
    language: str,
    snapshot: FleetSnapshot,
    now: datetime,
    limits: Thresholds = DEFAULT_THRESHOLDS,
    proposable: Sequence[str] = (),
) -> str:
    """The keyword answer to `question` about `snapshot` at `now` (UTC), in `language` (the
    operators' room notes are not in it: every answer carries them apart, `Answer.notes`).
    `proposable`: the changes the policy allows (`ToolPolicy.propose`, as ``fleetwatch
    writable`` lists them), named when asked what may be changed; none in observe mode."""
    lang = language_of(language)
    intent = understand(question, [d.name for d in snapshot.devices])
    lines = say.partial(
        intent.topic,
        lambda: _body(intent, lang, snapshot, now, limits, proposable),
        snapshot.unread,
        len(snapshot.devices),
        lang,
    )
    return "\n".join([*lines, "", _WORDS[lang]["label"]])
