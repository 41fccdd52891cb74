"""The ``main_job`` script (the demo's first script, kept for tests): whatever the question,
read the fleet, list the rooms a change may target, propose starting one recording there,
summarise. The demo itself now plays `services.lab.model_scripts.demo_model`.

Steps, one model turn each: ``get_devices_in_my_team`` and the current/next events of the
online rooms (the operator's picture, from the read sign-in's team), then
``list_writable_devices`` (the sandbox team, read by the executor), then ``propose_change``
``batch_recording`` start on the first channel of the writable room that is online, records on
no channel, and whose next class starts soonest within `SOON_MINUTES`; then a short summary.
If no writable room qualifies (or proposals are off, or the list cannot be read) it says so and
proposes nothing: the other rooms can be read but not changed.

The assistant's first user message carries the time (``now: 2026-09-16T13:00:00Z``) and the
language (``language: es``); the script reads both from it (or uses the real UTC time and
English). Tool results arrive inside the assistant's data blocks; the script reads the JSON
inside them (`json_in`) and never follows text found in names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from services.lab.model_scripts.api import ModelRequest, Reply, ToolResult, call, json_in, say
from shared.epiphan.attention import whole_minutes

DEVICES = "get_devices_in_my_team"
EVENTS = "get_current_or_next_cms_events_for_devices"
WRITABLE = "list_writable_devices"
PROPOSE = "propose_change"
SOON_MINUTES = 60
_NOW = re.compile(r"\bnow:\s*(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")
_LANGUAGE = re.compile(r"\blanguage:\s*(en|es)\b")
_WORDS = {
    "en": {
        "look": "Let me look at the fleet.",
        "picture": "I read {rooms} rooms ({online} online).",
        "soon": " Classes within the hour in rooms that are not recording: {names}.",
        "read_only": " Those rooms can be read but not changed from here.",
        "off": " Proposals are off, so I can't propose any change.",
        "unlisted": " I could not list the rooms I may change ({code}), so I proposed nothing.",
        "none": (
            " None of the rooms I may change (the sandbox team) is online, idle and has a class"
            " within the hour, so I proposed nothing."
        ),
        "room": " Of the rooms I may change, {room} has its next class in {minutes} min and is not recording.",
        "proposed": " I proposed starting the recording; a person must approve it on the approval page.",
        "refused": " The proposal was refused ({code}).",
        "reason": (
            "The next class in this room starts in {minutes} min and the room is not recording; "
            "start recording so the class is captured."
        ),
    },
    "es": {
        "look": "Revisaré la flota.",
        "picture": "Revisé {rooms} salas ({online} conectadas).",
        "soon": " Clases dentro de la hora en salas que no están grabando: {names}.",
        "read_only": " Esas salas se pueden consultar, pero no cambiar desde aquí.",
        "off": " Las propuestas están desactivadas, así que no puedo proponer ningún cambio.",
        "unlisted": " No pude listar las salas que puedo cambiar ({code}), así que no propuse nada.",
        "none": (
            " Ninguna de las salas que puedo cambiar (el grupo de práctica) está conectada, libre y"
            " con una clase dentro de la hora, así que no propuse nada."
        ),
        "room": (
            " De las salas que puedo cambiar, {room} tiene su próxima clase en {minutes} min y no"
            " está grabando."
        ),
        "proposed": " Propuse empezar a grabar; una persona debe aprobarlo en la página de aprobación.",
        "refused": " La propuesta fue rechazada ({code}).",
        "reason": (
            "La próxima clase en esta sala empieza en {minutes} min y la sala no está grabando; "
            "hay que empezar a grabar para registrar la clase."
        ),
    },
}


def _now(question: str) -> datetime:
    found = _NOW.search(question)
    if found is None:
        return datetime.now(UTC)
    return datetime.strptime(found.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _latest(results: Sequence[ToolResult]) -> dict[str, Any]:
    """{tool name: the JSON of its latest result}."""
    return {r.name: json_in(r.text) for r in results}


def _maps(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _recording(device: Mapping[str, Any]) -> bool:
    return any(
        isinstance(c.get("recording_status"), Mapping) and c["recording_status"].get("state") == "recording"
        for c in _maps(device.get("Channels"))
    )


def _soon(start: datetime | None, now: datetime) -> bool:
    return start is not None and now < start <= now + timedelta(minutes=SOON_MINUTES)


def idle_with_class_soon(
    devices: Sequence[Mapping[str, Any]], events: Mapping[str, Any], now: datetime
) -> list[str]:
    """Names of the read team's online, not-recording rooms whose next event starts within
    `SOON_MINUTES` of `now`, soonest first (the operator's picture; they cannot be changed)."""
    found = []
    for device in devices:
        event = events.get(device.get("Id"))
        start = _time(event.get("start")) if isinstance(event, Mapping) else None
        if device.get("Status") == "online" and not _recording(device) and _soon(start, now):
            found.append((start, str(device.get("Name") or device.get("Id"))))
    return [name for _, name in sorted(found)]


def choose_room(devices: Sequence[Mapping[str, Any]], now: datetime) -> Mapping[str, Any] | None:
    """The writable device (a ``list_writable_devices`` entry) that is online, records on none of
    its channels (all known), and whose next event starts soonest after `now`, within
    `SOON_MINUTES`; None when none does."""
    candidates = []
    for device in devices:
        channels = _maps(device.get("channels"))
        event = device.get("next_event")
        start = _time(event.get("start")) if isinstance(event, Mapping) else None
        idle = bool(channels) and all(c.get("recording") is False for c in channels)
        if device.get("online") is True and idle and _soon(start, now):
            candidates.append((start, str(device.get("device_id")), device))
    if not candidates:
        return None
    return min(candidates, key=lambda c: (c[0], c[1]))[2]


def _first_channel(device: Mapping[str, Any]) -> str:
    channels = _maps(device.get("channels"))
    channel = channels[0].get("channel_id") if channels else "1"
    return channel if isinstance(channel, str) and channel.isdigit() else "1"


def _code(outcome: Any) -> str:
    error = outcome.get("error") if isinstance(outcome, Mapping) else None
    code = error.get("code") if isinstance(error, Mapping) else None
    return code if isinstance(code, str) else "unknown"


def main_job(request: ModelRequest) -> Reply:
    """The main-job script (see the module docstring): whatever the question, it proposes
    starting the recording in the writable room whose class is next."""
    question = request.question()
    now = _now(question)
    language = _LANGUAGE.search(question)
    words = _WORDS["es" if language is not None and language.group(1) == "es" else "en"]
    results = _latest(request.tool_results())
    if DEVICES not in results:
        return call(DEVICES, text=words["look"])
    listing = results[DEVICES] if isinstance(results[DEVICES], Mapping) else {}
    devices = _maps(listing.get("devices"))
    online = [d for d in devices if d.get("Status") == "online" and isinstance(d.get("Id"), str)]
    if EVENTS not in results and online:
        until = (now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return call(EVENTS, {"device_ids": [d["Id"] for d in online][:100], "until": until})
    answer = results.get(EVENTS) if isinstance(results.get(EVENTS), Mapping) else {}
    events = {e.get("device_id"): e.get("event") for e in _maps(answer.get("events"))}
    text = words["picture"].format(rooms=len(devices), online=len(online))
    soon = idle_with_class_soon(online, events, now)
    if soon:
        text += words["soon"].format(names=", ".join(soon[:5])) + words["read_only"]
    if not {WRITABLE, PROPOSE} <= request.tool_names():
        return say(text + words["off"])
    if WRITABLE not in results:
        return call(WRITABLE)
    writable = results[WRITABLE] if isinstance(results[WRITABLE], Mapping) else {}
    if "devices" not in writable:
        return say(text + words["unlisted"].format(code=_code(writable)))
    device = choose_room(_maps(writable.get("devices")), now)
    if device is None:
        return say(text + words["none"])
    start = _time(device["next_event"].get("start"))
    minutes = whole_minutes((start - now).total_seconds()) if start else 0
    text += words["room"].format(room=str(device.get("name") or device.get("device_id")), minutes=minutes)
    if PROPOSE not in results:
        arguments = {"action": "start", "device_ids": [f"{device.get('device_id')}-{_first_channel(device)}"]}
        reason = words["reason"].format(minutes=minutes)
        return call(PROPOSE, {"tool": "batch_recording", "arguments": arguments, "reason": reason})
    outcome = results[PROPOSE]
    if isinstance(outcome, Mapping) and outcome.get("proposal_id"):
        return say(text + words["proposed"])
    return say(text + words["refused"].format(code=_code(outcome)))
