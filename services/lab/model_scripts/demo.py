"""The ``demo`` script: read the fleet, propose starting one recording, summarise.

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

DEVICES = "get_devices_in_my_team"
EVENTS = "get_current_or_next_cms_events_for_devices"
PROPOSE = "propose_change"
SOON_MINUTES = 60
_NOW = re.compile(r"\bnow:\s*(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")
_LANGUAGE = re.compile(r"\blanguage:\s*(en|es)\b")


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


def _recording(device: Mapping[str, Any]) -> bool:
    channels = device.get("Channels") or []
    return any(
        isinstance(c, Mapping)
        and isinstance(c.get("recording_status"), Mapping)
        and c["recording_status"].get("state") == "recording"
        for c in channels
    )


def _first_channel(device: Mapping[str, Any]) -> str:
    channels = [c for c in device.get("Channels") or [] if isinstance(c, Mapping)]
    channel = channels[0].get("channel_id") if channels else "1"
    return channel if isinstance(channel, str) and channel.isdigit() else "1"


def choose_room(
    devices: Sequence[Mapping[str, Any]], events: Mapping[str, Any], now: datetime
) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """(device, event) of the online, not-recording room whose next event starts soonest after
    `now`: one within `SOON_MINUTES` if any, else the soonest later one; None if none."""
    candidates = []
    for device in devices:
        event = events.get(device.get("Id"))
        start = _time(event.get("start")) if isinstance(event, Mapping) else None
        if device.get("Status") != "online" or _recording(device) or start is None or start <= now:
            continue
        candidates.append((start, str(device.get("Id")), device, event))
    if not candidates:
        return None
    candidates.sort(key=lambda c: (c[0], c[1]))
    start, _, device, event = candidates[0]
    return device, event


def _summary(spanish: bool, room: str | None, minutes: int, outcome: Any) -> str:
    if room is None:
        return (
            "No encontré ninguna sala con una clase próxima que necesite empezar a grabar."
            if spanish
            else "I found no room with an upcoming class that needs a recording started."
        )
    when = (
        f"{room} tiene su próxima clase en {minutes} min y no está grabando."
        if spanish
        else f"{room} has its next class in {minutes} min and is not recording."
    )
    if isinstance(outcome, Mapping) and outcome.get("proposal_id"):
        return when + (
            " Propuse empezar a grabar; una persona debe aprobarlo en la página de aprobación."
            if spanish
            else " I proposed starting the recording; a person must approve it on the approval page."
        )
    error = outcome.get("error") if isinstance(outcome, Mapping) else None
    code = error.get("code") if isinstance(error, Mapping) else "unknown"
    return when + (
        f" La propuesta fue rechazada ({code})." if spanish else f" The proposal was refused ({code})."
    )


def demo(request: ModelRequest) -> Reply:
    """The demo script (see the module docstring)."""
    question = request.question()
    now = _now(question)
    language = _LANGUAGE.search(question)
    spanish = language is not None and language.group(1) == "es"
    results = _latest(request.tool_results())
    if DEVICES not in results:
        return call(DEVICES, text="Revisaré el equipo." if spanish else "Let me look at the fleet.")
    listing = results[DEVICES] if isinstance(results[DEVICES], Mapping) else {}
    devices = [d for d in listing.get("devices") or [] if isinstance(d, Mapping)]
    online = [d for d in devices if d.get("Status") == "online" and isinstance(d.get("Id"), str)]
    if EVENTS not in results and online:
        until = (now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return call(EVENTS, {"device_ids": [d["Id"] for d in online][:100], "until": until})
    answer = results.get(EVENTS) if isinstance(results.get(EVENTS), Mapping) else {}
    events = {
        e.get("device_id"): e.get("event") for e in answer.get("events") or [] if isinstance(e, Mapping)
    }
    picked = choose_room(online, events, now)
    if picked is None:
        return say(_summary(spanish, None, 0, None))
    device, event = picked
    room = str(device.get("Name") or device.get("Id"))
    start = _time(event.get("start"))
    minutes = int((start - now).total_seconds() // 60) if start else 0
    if PROPOSE not in results:
        if PROPOSE not in request.tool_names():
            return say(_summary(spanish, None, 0, None))
        reason = (
            f"The next class in this room starts in {minutes} min and the room is not recording; "
            "start recording so the class is captured."
        )
        arguments = {"action": "start", "device_ids": [f"{device['Id']}-{_first_channel(device)}"]}
        return call(PROPOSE, {"tool": "batch_recording", "arguments": arguments, "reason": reason})
    return say(_summary(spanish, room, minutes, results[PROPOSE]))
