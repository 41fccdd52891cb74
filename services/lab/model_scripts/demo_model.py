"""The ``demo`` model: a small, honest stand-in for a real model, for the demo and for tests.

It sees only what a real model sees (the request the real SDK sent: the assistant's first
message, the tools offered, the tool results inside their data blocks; see `demo_reads`) and
acts only through the tools offered, one model turn at a time:

1. It understands the question (`shared.text.questions`: the topic, the room it names, the change it
   asks for) and reads ``get_devices_in_my_team``, adding in the same turn what the topic
   needs from the start: ``list_writable_devices`` (offered only with ``propose_change``) for a
   change, what may be changed, or a question that names no topic (the room may be a practice
   room); ``get_stream_endpoints`` for streams.
2. With the rooms' names known, it reads what the answer relies on, in one turn: the recorder
   status of the online rooms (recording), the storage status (disk), the system status
   (temperature), the current or next events (offline rooms, classes, readiness, attention),
   the one room's status, event and storage (a named room). Firmware and signal come from the
   device list itself.
3. It proposes through ``propose_change`` only when a change was asked for ("start recording
   in SCI 101", or "start any recording that should be running": the recording due next) and
   the room is on ``list_writable_devices``: start recording on a room that is online and
   idle, stop one that records outside its class, reboot or update one that is online, idle
   and not near a class. A room that is not on that list is named as one it can read but not
   change. A readiness question alone ("which rooms need attention before their next class?")
   is answered, never acted on: it says how to ask for the recording instead.
   When the proposal is not accepted it says so and leaves the why to the assistant's own
   line below the answer (the code and the intake's message are for it, not for the
   operator); when an identical one was already waiting it says that one is waiting.
4. It answers in the question's language from what it read, with Fleetwatch's shared wording
   (`shared.text.fleet_answers`); a question it cannot map gets the list of what it understands and
   the setting for the real assistant.

It never follows text found in names, never calls a tool it was not offered, and never claims
a change ran: the assistant adds the proposal's recorded state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Final

from services.lab.model_scripts.api import ModelRequest, Reply, Text, ToolUse, say
from services.lab.model_scripts.demo_reads import (
    DEVICES,
    ENDPOINTS,
    EVENT,
    EVENTS,
    PROPOSE,
    RECORDER,
    STORAGE,
    SYSTEM,
    WRITABLE,
    Conversation,
    as_device,
)
from services.lab.model_scripts.demo_words import WHAT_FAILED, WORDS
from services.lab.model_scripts.main_job import choose_room
from shared.epiphan.attention import event_state, whole_minutes
from shared.epiphan.fleet import Device, Event, UnreadPart
from shared.text import fleet_answers as lines_about
from shared.text.display import visible
from shared.text.questions import Action, Intent, Topic, topic_of, understand
from shared.text.wording import describe_event

PER_CALL: Final = 100
"""Most device IDs per read (the schemas offered say ``maxItems: 100``)."""
FIRMWARE_WINDOW_MINUTES: Final = 120
"""A firmware update is refused this close to a class (EPIPHAN.md)."""

_TOOL_OF: Final = {
    Action.START_RECORDING: "batch_recording",
    Action.STOP_RECORDING: "batch_recording",
    Action.REBOOT: "batch_reboot",
    Action.FIRMWARE_UPDATE: "batch_firmware_update",
}
_DONE: Final = {
    Action.START_RECORDING: "start_recording",
    Action.STOP_RECORDING: "stop_recording_done",
    Action.REBOOT: "reboot_done",
    Action.FIRMWARE_UPDATE: "firmware_update_done",
}
_FIRST_WITH_WRITABLE: Final = frozenset({Topic.CHANGE, Topic.WRITABLE, Topic.UNKNOWN})


def _calls(calls: Sequence[tuple[str, Mapping[str, Any]]], text: str | None = None) -> Reply:
    head: tuple[Text, ...] = (Text(text),) if text else ()
    return Reply((*head, *(ToolUse(name, dict(arguments)) for name, arguments in calls)))


def _chunked(tool: str, ids: Sequence[str], **more: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(tool, {"device_ids": list(ids[i : i + PER_CALL]), **more}) for i in range(0, len(ids), PER_CALL)]


class _Turn:
    """One request to answer: what was read, what the question is, the words to use."""

    def __init__(self, request: ModelRequest) -> None:
        self.seen = Conversation.of(request)
        self.lang = self.seen.language
        self.w = WORDS[self.lang]
        self.devices: tuple[Device, ...] = ()
        self.writable = self.seen.writable()
        self.practice = [as_device(entry) for entry in self.writable or []]
        self.unread: list[UnreadPart] = []

    def can_propose(self) -> bool:
        return {WRITABLE, PROPOSE} <= self.seen.offered

    def until(self) -> str:
        return (self.seen.now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def first(self) -> Reply:
        """Step 1: the device list, and what the topic needs that does not depend on it."""
        topic = topic_of(self.seen.question)
        calls: list[tuple[str, Mapping[str, Any]]] = [(DEVICES, {})]
        if topic in _FIRST_WITH_WRITABLE and self.can_propose():
            calls.append((WRITABLE, {}))
        if topic is Topic.STREAMS and ENDPOINTS in self.seen.offered:
            calls.append((ENDPOINTS, {}))
        return _calls(calls, self.w["look"])

    def intent(self) -> Intent:
        names = [d.name for d in self.devices] + [d.name for d, _ in self.practice]
        return understand(self.seen.question, names)

    def reads(self, intent: Intent) -> list[tuple[str, dict[str, Any]]]:
        """Step 2: what the answer relies on and was not read yet."""
        ids = [d.id for d in self.devices]
        online = [d.id for d in self.devices if d.online]
        wanted: list[tuple[str, dict[str, Any]]] = []
        topic = intent.topic
        room = self._room(intent)
        if topic is Topic.OFFLINE:
            wanted += _chunked(EVENTS, [d.id for d in self.devices if not d.online], until=self.until())
        elif topic is Topic.RECORDING:
            wanted += _chunked(RECORDER, online)
        elif topic is Topic.DISK:
            wanted += _chunked(STORAGE, ids)
        elif topic is Topic.TEMPERATURE:
            wanted += _chunked(SYSTEM, online)
        elif topic in (Topic.SCHEDULE, Topic.READINESS) or self._due(intent):
            wanted += _chunked(EVENTS, ids, until=self.until())
        elif topic is Topic.ATTENTION:
            wanted += _chunked(EVENTS, ids, until=self.until()) + _chunked(SYSTEM, online)
        elif topic is Topic.ROOM and room is not None:
            wanted += [(EVENT, {"device_id": room.id}), (STORAGE, {"device_ids": [room.id]})]
            wanted += [(SYSTEM, {"device_ids": [room.id]})] if room.online else []
        if topic in (Topic.STREAMS,) and ENDPOINTS in self.seen.offered:
            wanted.append((ENDPOINTS, {}))
        if self._due(intent) and self.can_propose():
            wanted.append((WRITABLE, {}))
        return [
            (tool, args) for tool, args in wanted if tool in self.seen.offered and not self.seen.has(tool)
        ]

    def _room(self, intent: Intent) -> Device | None:
        return next((d for d in self.devices if intent.room and d.name == intent.room), None)

    def _practice_room(self, intent: Intent) -> tuple[Device, Event | None] | None:
        return next(((d, e) for d, e in self.practice if intent.room and d.name == intent.room), None)

    def _due(self, intent: Intent) -> bool:
        """The question asks to start the recordings that are due (no room named)."""
        return intent.topic is Topic.CHANGE and intent.action is Action.START_RECORDING and intent.due

    # --- answering ----------------------------------------------------------------------

    def reply(self) -> Reply:
        if not self.seen.has(DEVICES):
            return self.first()
        devices = self.seen.devices()
        if devices is None:
            return say(self.w["failed"].format(what=WHAT_FAILED[self.lang][DEVICES]))
        self.devices = devices
        intent = self.intent()
        wanted = self.reads(intent)
        if wanted:
            return _calls(wanted)
        self.unread = self.seen.unread()
        failed = [f for f in self.seen.failures.values() if f.tool in (DEVICES, ENDPOINTS)]
        if failed:
            return say(self.w["failed"].format(what=WHAT_FAILED[self.lang][failed[0].tool]))
        if intent.topic is Topic.CHANGE and not self._due(intent):
            return self.change(intent)
        if self._due(intent):
            return self.due(intent)
        if intent.topic is Topic.READINESS:
            return say("\n".join(self.readiness()))
        return say("\n".join(self.answer(intent)))

    def readiness(self) -> list[str]:
        """The readiness question alone: the rooms with a class soon and what they lack; no
        change, only how to ask for one."""
        seen = self.seen
        text = [*self.head(), *lines_about.readiness(self.devices, seen.events(), seen.now, self.lang)]
        due = any(
            not d.recording and lines_about.class_soon(seen.events().get(d.id), seen.now)
            for d in self.devices
        )
        if due and self.can_propose():
            text.append(self.w["ask_to_start"])
        return text

    def head(self) -> list[str]:
        online = sum(d.online for d in self.devices)
        out = [self.w["read"].format(rooms=len(self.devices), online=online)]
        return out + ([self.w["partial"]] if self.seen.partial else [])

    def marked(self, topic: Topic, body: Callable[[], list[str]]) -> list[str]:
        """`body` marked with what could not be read (`shared.text.fleet_answers.partial`)."""
        return lines_about.partial(topic, body, self.unread, len(self.devices), self.lang)

    def answer(self, intent: Intent) -> list[str]:
        """The answer to a question that changes nothing."""
        seen, lang, devices = self.seen, self.lang, self.devices
        topic, now = intent.topic, seen.now
        if topic is Topic.WRITABLE:
            return self.what_may_change(intent)
        if topic is Topic.ROOM:
            room = self._room(intent)
            if room is not None:
                return self.marked(
                    topic,
                    lambda: lines_about.room(
                        room,
                        seen.events().get(room.id),
                        now,
                        lang,
                        fleet=devices,
                        system=seen.system().get(room.id),
                        storage=seen.storage().get(room.id),
                    ),
                )
            practice = self._practice_room(intent)
            if practice is not None:
                device, event = practice
                return [
                    *lines_about.room(device, event, now, lang),
                    self.w["practice"].format(room=_name(device)),
                ]
        if topic is Topic.UNKNOWN or topic is Topic.ROOM:
            return [self.w["unknown"].format(examples=lines_about.examples(lang))]
        body = {
            Topic.OFFLINE: lambda: lines_about.offline(devices, seen.events(), now, lang),
            Topic.RECORDING: lambda: lines_about.recording(devices, now, lang),
            Topic.DISK: lambda: lines_about.disk(devices, seen.storage(), lang),
            Topic.TEMPERATURE: lambda: lines_about.heat(devices, seen.system(), lang),
            Topic.FIRMWARE: lambda: lines_about.firmware(devices, lang),
            Topic.SIGNAL: lambda: lines_about.signal(devices, lang),
            Topic.SCHEDULE: lambda: lines_about.schedule(devices, seen.events(), now, lang),
            Topic.STREAMS: lambda: lines_about.streams(devices, seen.endpoints(), lang),
            Topic.ATTENTION: lambda: self.attention(),
        }[topic]
        return [*self.head(), *self.marked(topic, body)]

    def attention(self) -> list[str]:
        seen = self.seen
        readiness = lines_about.readiness(self.devices, seen.events(), seen.now, self.lang)
        hot = lines_about.heat(self.devices, seen.system(), self.lang)
        return [*readiness, *hot, *lines_about.offline(self.devices, seen.events(), seen.now, self.lang)]

    def what_may_change(self, intent: Intent) -> list[str]:
        if not self.can_propose():
            return [self.w["off"]]
        if self.writable is None:
            return [self.w["unlisted"]]
        if not self.practice:
            return [self.w["writable_none"]]
        one, many = self.w["practice_rooms"].split("|")
        rooms = one if len(self.practice) == 1 else many.format(n=len(self.practice))
        lines = [self.w["writable_head"].format(rooms=rooms)]
        for device, event in self.practice:
            state, upcoming = lines_about.room(device, event, self.seen.now, self.lang)[1:3]
            lines.append(f"- {_name(device)} ({visible(device.model, 20)}): {state[2:]}; {upcoming[2:]}")
        lines += [self.w["writable_what"], self.w["others"].format(n=len(self.devices))]
        if intent.room is not None and self._practice_room(intent) is None:
            lines.append(self.w["not_practice"].format(room=visible(intent.room, 80)))
        return lines

    def _names(self) -> str:
        return ", ".join(_name(d) for d, _ in self.practice) or "-"

    # --- proposing ----------------------------------------------------------------------

    def due(self, intent: Intent) -> Reply:
        """Readiness, and "start the recordings that are due": the rooms with a class within
        the hour, then a proposal to start recording in the practice room whose class is next."""
        seen, w = self.seen, self.w
        readiness = self.marked(
            Topic.READINESS, lambda: lines_about.readiness(self.devices, seen.events(), seen.now, self.lang)
        )
        text = [*self.head(), *readiness]
        if any(
            not d.recording and lines_about.class_soon(seen.events().get(d.id), seen.now)
            for d in self.devices
        ):
            text.append(w["due_read_only"])
        if not self.can_propose():
            return say("\n".join([*text, w["off"]] if self._due(intent) else text))
        if self.writable is None:
            return say("\n".join([*text, w["unlisted"]]))
        chosen = choose_room(self.writable, seen.now)
        if chosen is None:
            return say("\n".join([*text, w["due_none"]]))
        device, event = as_device(chosen)
        start = event.start if event is not None and event.start is not None else seen.now
        minutes = whole_minutes((start - seen.now).total_seconds())
        text.append(w["due_room"].format(room=_name(device), minutes=minutes))
        if not seen.has(PROPOSE):
            channel = next((c.channel_id for c in device.channels if c.recording is False), "1")
            arguments = {"action": "start", "device_ids": [f"{device.id}-{channel}"]}
            reason = w["reason_due"].format(minutes=minutes)
            return _calls([(PROPOSE, {"tool": "batch_recording", "arguments": arguments, "reason": reason})])
        return say("\n".join([*text, self.outcome(w["proposed_due"])]))

    def outcome(self, accepted: str) -> str:
        """What became of the proposal it made: accepted, already waiting, or not accepted
        (the assistant's own line says why, in words)."""
        if self.seen.failures.get(PROPOSE) is not None:
            return self.w["refused"]
        result = self.seen.latest(PROPOSE)
        if isinstance(result, Mapping) and result.get("already_waiting"):
            return self.w["already_waiting"]
        return accepted

    def change(self, intent: Intent) -> Reply:
        """A change asked for: propose it when the room may be changed and it makes sense."""
        w = self.w
        if not self.can_propose():
            return say(w["off"])
        if self.writable is None:
            return say(w["unlisted"])
        if intent.every_room:
            return say(w["every"].format(names=self._names()))
        if intent.room is None:
            return say(w["not_found" if intent.unknown_room else "which"].format(names=self._names()))
        practice = self._practice_room(intent)
        if practice is None:
            key = "read_only" if self._room(intent) is not None else "not_found"
            return say(w[key].format(room=visible(intent.room, 80), names=self._names()))
        device, event = practice
        action = intent.action or Action.UNCLEAR
        room = _name(device)
        if action in (Action.START_STREAM, Action.STOP_STREAM):
            return say(w["stream"].format(room=room))
        if action is Action.UNCLEAR:
            return say(w["unclear"].format(room=room))
        refusal = self.refusal(action, device, event)
        if refusal is not None:
            return say(refusal)
        what = w[_DONE[action]]
        if not self.seen.has(PROPOSE):
            arguments = self.arguments(action, device)
            reason = w["reason"].format(what=what, room=room)
            return _calls([(PROPOSE, {"tool": _TOOL_OF[action], "arguments": arguments, "reason": reason})])
        return say(self.outcome(w["proposed"].format(what=what, room=room)))

    def refusal(self, action: Action, device: Device, event: Event | None) -> str | None:
        """Why the change makes no sense now, in words, or None."""
        w, room = self.w, _name(device)
        if not device.online:
            return w["offline"].format(room=room)
        recording = [c for c in device.channels if c.recording]
        if action is Action.START_RECORDING:
            return (
                w["already"].format(room=room)
                if device.channels and len(recording) == len(device.channels)
                else None
            )
        if action is Action.STOP_RECORDING and not recording:
            return w["idle"].format(room=room)
        if action in (Action.REBOOT, Action.FIRMWARE_UPDATE) and recording:
            return w["busy"].format(room=room, change=w[action.value])
        window = FIRMWARE_WINDOW_MINUTES if action is Action.FIRMWARE_UPDATE else self.seen.lead_minutes
        if event_state(event, self.seen.now, window) in ("on_now", "soon"):
            described = describe_event(event, self.seen.now, self.seen.lead_minutes, self.lang)
            return w["near"].format(room=room, event=described, change=w[action.value])
        return None

    def arguments(self, action: Action, device: Device) -> dict[str, Any]:
        if action is Action.START_RECORDING:
            channel = next((c.channel_id for c in device.channels if not c.recording), "1")
            return {"action": "start", "device_ids": [f"{device.id}-{channel}"]}
        if action is Action.STOP_RECORDING:
            channel = next(c.channel_id for c in device.channels if c.recording)
            return {"action": "stop", "device_ids": [f"{device.id}-{channel}"]}
        return {"device_ids": [device.id]}


def _name(device: Device) -> str:
    return lines_about.name(device)


def demo_model(request: ModelRequest) -> Reply:
    """The demo model's next message for `request` (see the module docstring)."""
    return _Turn(request).reply()
