"""The ``demo`` model: a test double that plays a model in the demo and in tests, not a second
assistant. Its understanding and its words are its own (`demo_words`: a few patterns per topic
and per change, scripted sentences); it imports nothing of the product's words (`shared.text`).

It sees only what a real model sees (the request the real SDK sent: the assistant's first
message, the tools offered, the tool results inside their data blocks; see `demo_reads`) and
acts only through the tools offered, one model turn at a time:

1. ``get_devices_in_my_team``, with ``list_writable_devices`` (offered only with
   ``propose_change``) for a change, what may be changed or a question it cannot map, and
   ``get_stream_endpoints`` for streams.
2. The reads the topic's answer relies on, in one turn (recorder, storage, system status, the
   classes; for one named room its class, storage and load).
3. The answer: a head line, then one ``- <room>: <facts>`` line per room the topic selects
   (offline, recording, short of storage, hot, behind on firmware, dark, classes, readiness,
   streams, one room, what may be changed). A change asked for in a practice room
   (``list_writable_devices``) that makes sense now is proposed through ``propose_change``;
   any other is explained and nothing is proposed. A readiness question alone changes
   nothing; "start any recording that should be running" proposes the one due next there.

It never follows text found in names (they are shown with hidden characters marked) and never
claims a change ran: the assistant adds the proposal's recorded state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
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
from services.lab.model_scripts.demo_words import ACTIONS, CHANGE_NAMES, DUE, EVERY, TOPICS, WHAT, WORDS
from shared.epiphan.fleet import Device, Event, StorageStatus, SystemStatus, storage_from_warnings

SOON_MINUTES: Final = 60
"""A class this close makes a room due for its recording, or in need of readiness."""
PER_CALL: Final = 100
"""Most device IDs per read (the schemas offered say ``maxItems: 100``)."""
FIRMWARE_WINDOW_MINUTES: Final = 120
"""A firmware update is refused this close to a class (EPIPHAN.md)."""
HOT_C: Final = 80.0
BUSY_PCT: Final = 90.0
LOW_FREE_PCT: Final = 10.0
_NEEDS: Final = {"temperature": SYSTEM, "disk": STORAGE, "schedule": EVENTS, "readiness": EVENTS}
"""The read a topic's answer stands on: when it failed, the answer says so and lists nothing."""
_TOOL_OF: Final = {
    "start_recording": "batch_recording",
    "stop_recording": "batch_recording",
    "reboot": "batch_reboot",
    "firmware_update": "batch_firmware_update",
}
_DONE: Final = {
    "start_recording": "start_recording",
    "stop_recording": "stop_recording",
    "reboot": "reboot_done",
    "firmware_update": "firmware_update_done",
}


def shown(text: str, cap: int = 80) -> str:
    """A name from the fleet as shown: hidden characters as ``⟦U+XXXX⟧``, cut to `cap`."""
    out = "".join(c if c.isprintable() or c == " " else f"⟦U+{ord(c):04X}⟧" for c in text)
    return out if len(out) <= cap else out[: cap - 1] + "…"


def _calls(calls: Sequence[tuple[str, Mapping[str, Any]]], text: str | None = None) -> Reply:
    head: tuple[Text, ...] = (Text(text),) if text else ()
    return Reply((*head, *(ToolUse(name, dict(arguments)) for name, arguments in calls)))


def _chunked(tool: str, ids: Sequence[str], **more: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(tool, {"device_ids": list(ids[i : i + PER_CALL]), **more}) for i in range(0, len(ids), PER_CALL)]


def _state(event: Event | None, now: datetime, window_minutes: int) -> str:
    """``on_now``, ``soon`` (starts within the window) or ``later`` (or no event)."""
    if event is None or event.start is None:
        return "later"
    if event.start <= now < (event.finish or event.start):
        return "on_now"
    return "soon" if now < event.start <= now + timedelta(minutes=window_minutes) else "later"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in text.split("."))


def _plain(text: str) -> str:
    return re.sub(r"[^\w\s-]", " ", text)


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


def share_text(pct: float, language: str) -> str:
    """A share in percent in the form the product writes it (`shared.text.wording.share_text`,
    which the lab may not import: ``lab-serves-only``; a test holds the two to one form): one
    decimal under 10 (``1.6%``, ``1,6%`` in Spanish), none above (``64%``), ``<0.1%`` for a
    sliver."""
    comma = language == "es"
    if 0 < pct < 0.05:
        return "<0,1%" if comma else "<0.1%"
    text = f"{round(pct, 1):.1f}" if pct < 10 else f"{round(pct):.0f}"
    return (text.replace(".", ",") if comma else text) + "%"


class _Turn:
    """One request to answer: what was read, what the question is, the words to use."""

    def __init__(self, request: ModelRequest) -> None:
        self.seen = Conversation.of(request)
        self.lang = self.seen.language
        self.w = WORDS[self.lang]
        self.question = self.seen.question.casefold()
        self.action = next((name for name, pattern in ACTIONS if pattern.search(self.question)), None)
        self.topic = (
            "change"
            if self.action
            else next((name for name, pattern in TOPICS if pattern.search(self.question)), "unknown")
        )
        self.due = self.action == "start_recording" and DUE.search(self.question) is not None
        self.devices: tuple[Device, ...] = ()
        self.writable = self.seen.writable()
        self.practice = [as_device(entry) for entry in self.writable or []]
        self.proposable = proposable_of(request)

    def can_propose(self) -> bool:
        return {WRITABLE, PROPOSE} <= self.seen.offered

    def until(self) -> str:
        return (self.seen.now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def room_named(self, devices: Sequence[Device]) -> Device | None:
        """The room the question names: its whole name, else its first words (two at least)
        when no other room's do; the longest match wins."""
        best: tuple[int, Device] | None = None
        question = f" {_plain(self.question)} "
        for device in devices:
            words = _plain(device.name.casefold()).split()
            for size in range(len(words), min(2, len(words)) - 1, -1):
                if f" {' '.join(words[:size])} " in question:
                    score = size + (100 if size == len(words) else 0)
                    best = best if best is not None and best[0] >= score else (score, device)
                    break
        return None if best is None else best[1]

    def first(self) -> Reply:
        calls: list[tuple[str, Mapping[str, Any]]] = [(DEVICES, {})]
        if self.topic in ("change", "writable", "unknown") and self.can_propose():
            calls.append((WRITABLE, {}))
        if self.topic == "streams" and ENDPOINTS in self.seen.offered:
            calls.append((ENDPOINTS, {}))
        return _calls(calls, self.w["look"])

    def reads(self, room: Device | None) -> list[tuple[str, dict[str, Any]]]:
        """What the answer relies on and was not read yet."""
        ids = [d.id for d in self.devices]
        online = [d.id for d in self.devices if d.online]
        topic, until = self.topic, self.until()
        wanted = {
            "offline": _chunked(EVENTS, [d.id for d in self.devices if not d.online], until=until),
            "recording": _chunked(RECORDER, online),
            "disk": _chunked(STORAGE, ids),
            "temperature": _chunked(SYSTEM, online),
            "schedule": _chunked(EVENTS, ids, until=until),
            "readiness": _chunked(EVENTS, ids, until=until),
            "attention": _chunked(EVENTS, ids, until=until) + _chunked(SYSTEM, online),
            "streams": [(ENDPOINTS, {})],
        }.get(topic, [])
        if self.due:
            wanted = _chunked(EVENTS, ids, until=until) + [(WRITABLE, {})]
        if topic == "unknown" and room is not None:
            wanted = [(EVENT, {"device_id": room.id}), (STORAGE, {"device_ids": [room.id]})]
            wanted += [(SYSTEM, {"device_ids": [room.id]})] if room.online else []
        return [(t, a) for t, a in wanted if t in self.seen.offered and not self.seen.has(t)]

    def reply(self) -> Reply:
        if not self.seen.has(DEVICES):
            return self.first()
        devices = self.seen.devices()
        if devices is None:
            return say(self.w["failed"].format(what=WHAT[self.lang][DEVICES]))
        self.devices = devices
        room = self.room_named(devices) if self.topic == "unknown" else None
        wanted = self.reads(room)
        if wanted:
            return _calls(wanted)
        if ENDPOINTS in self.seen.failures:
            return say(self.w["failed"].format(what=WHAT[self.lang][ENDPOINTS]))
        if self.topic == "change":
            return self.due_recording() if self.due else self.change()
        if self.topic == "writable":
            return say("\n".join(self.what_may_change()))
        if room is not None:
            return say("\n".join([*self.room(room), *self.unread()]))
        if self.topic == "unknown":
            return say(self.w["unknown"])
        needed = _NEEDS.get(self.topic)
        lines = [] if needed in self.seen.failures else getattr(self, f"answer_{self.topic}")()
        lines += [self.w["ask_to_start"]] if self.topic == "readiness" and self.can_propose() else []
        return say("\n".join([*self.head(), *lines, *self.unread()]))

    # --- facts ----------------------------------------------------------------------------

    def head(self) -> list[str]:
        online = sum(d.online for d in self.devices)
        out = [self.w["read"].format(rooms=len(self.devices), online=online)]
        return out + ([self.w["partial"]] if self.seen.partial else [])

    def unread(self) -> list[str]:
        failed = [(f.tool, f.code) for f in self.seen.failures.values()]
        failed += [(tool, why.code) for tool, _, why in self.seen.unread_calls]
        return [
            self.w["unread"].format(what=WHAT[self.lang].get(tool, tool), tool=tool, code=code or "?")
            for tool, code in dict.fromkeys(failed)
        ]

    def listing(self, what: str, rows: Sequence[tuple[Device, str]]) -> list[str]:
        if not rows:
            return [self.w["none"].format(what=self.w[what])]
        rows = sorted(rows, key=lambda row: row[0].name.casefold())
        return [f"{self.w[what]} ({len(rows)}):", *(f"- {shown(d.name)}: {fact}" for d, fact in rows)]

    def recording_words(self, device: Device) -> str:
        channels = [shown(c.name or c.channel_id, 40) for c in device.channels if c.recording]
        return (
            self.w["recording_on"].format(channels=", ".join(channels)) if channels else self.w["idle_word"]
        )

    def event_words(self, event: Event | None) -> str:
        """A class under way as on now since its start, never as next; else the next one."""
        if event is None or event.start is None:
            return self.w["no_event"]
        key = "on_now" if _state(event, self.seen.now, 0) == "on_now" else "next"
        return self.w[key].format(title=shown(event.title, 80), time=f"{event.start:%H:%M}")

    def dark(self, device: Device) -> list[str]:
        channels = [c for c in device.channels if any(w.id == "channel_no_signal" for w in c.warnings)]
        sources = [w for w in device.warnings if w.id == "source_no_signal"]
        names = [shown(c.name or c.channel_id, 40) for c in channels]
        names += [
            shown(str(w.data.get("source_name", "")), 40) for w in sources if isinstance(w.data, Mapping)
        ]
        return [self.w["dark"].format(what=", ".join(n for n in names if n))] if channels or sources else []

    def answer_offline(self) -> list[str]:
        events = self.seen.events()
        down = [d for d in self.devices if not d.online]
        rows = [(d, f"{self.w['offline_word']}; {self.event_words(events.get(d.id))}") for d in down]
        return self.listing("offline", rows)

    def answer_recording(self) -> list[str]:
        live = [d for d in self.devices if d.online and any(c.recording for c in d.channels)]
        return self.listing("recording", [(d, self.recording_words(d)) for d in live])

    def answer_disk(self) -> list[str]:
        """The rooms short of storage; for a question naming a room, that room's storage alone."""
        storage = self.seen.storage()
        room = self.room_named(self.devices)
        if room is not None:
            words = self.storage_words(storage.get(room.id), every=True) or self.w["disk_unknown"]
            return [f"{shown(room.name)}: {words}"]
        return self.listing(
            "disk", [(d, words) for d in self.devices if (words := self.storage_words(storage.get(d.id)))]
        )

    def storage_words(self, storage: StorageStatus | None, *, every: bool = False) -> str:
        """Words for storage that is missing, low or at most `LOW_FREE_PCT` free ("" otherwise,
        unless `every`); the share in the product's one number form (`share_text`: ``1.6%``)."""
        if storage is None:
            return ""
        if storage.state == "missing":
            return self.w["missing"]
        pct = storage.free_pct
        low = storage.state in ("low", "critical") or (pct is not None and pct <= LOW_FREE_PCT)
        if pct is not None and (low or every):
            return self.w["free"].format(pct=share_text(pct, self.lang))
        return self.w["low"] if low else ""

    def hot(self, status: SystemStatus | None) -> str:
        temp, cpu = (status.cpu_temp_c, status.cpu_load_pct) if status else (None, None)
        if (temp or 0) >= HOT_C or (cpu or 0) >= BUSY_PCT:
            return self.w["load"].format(temp=_number(temp), cpu=_number(cpu))
        return ""

    def answer_temperature(self) -> list[str]:
        system = self.seen.system()
        rows = [(d, words) for d in self.devices if d.online and (words := self.hot(system.get(d.id)))]
        return self.listing("temperature", rows)

    def answer_firmware(self) -> list[str]:
        newest: dict[str, str] = {}
        for d in self.devices:
            if d.firmware and _version(d.firmware) > _version(newest.get(d.model, "0")):
                newest[d.model] = d.firmware
        rows = [
            (
                d,
                self.w["firmware_line"].format(
                    model=shown(d.model, 20),
                    firmware=shown(d.firmware, 20),
                    newest=shown(newest[d.model], 20),
                ),
            )
            for d in self.devices
            if d.firmware and _version(d.firmware) < _version(newest[d.model])
        ]
        return self.listing("firmware", rows)

    def answer_signal(self) -> list[str]:
        return self.listing(
            "signal", [(d, dark[0]) for d in self.devices if d.online and (dark := self.dark(d))]
        )

    def answer_schedule(self) -> list[str]:
        events = self.seen.events()
        return self.listing(
            "schedule", [(d, self.event_words(e)) for d in self.devices if (e := events.get(d.id))]
        )

    def answer_readiness(self) -> list[str]:
        """Every room with a class on now or within the hour, and what it lacks."""
        events, now = self.seen.events(), self.seen.now
        rows = []
        for device in self.devices:
            event = events.get(device.id)
            if _state(event, now, SOON_MINUTES) == "later":
                continue
            lacks = [self.w["offline_word"]] if not device.online else self.dark(device)
            storage = self.storage_words(storage_from_warnings(device))
            lacks += [storage] if storage and device.online else []
            if device.online and _state(event, now, 0) == "on_now" and not device.recording:
                lacks.append(self.w["idle_word"])
            rows.append((device, f"{self.event_words(event)}; {'; '.join(lacks) or self.w['ready']}"))
        return self.listing("readiness", rows)

    def answer_attention(self) -> list[str]:
        system = self.seen.system()
        hot = [(d, words) for d in self.devices if d.online and (words := self.hot(system.get(d.id)))]
        return [*self.answer_readiness(), *self.listing("temperature", hot), *self.answer_offline()]

    def answer_streams(self) -> list[str]:
        endpoints = self.seen.endpoints() or ()
        lines = (
            [f"{self.w['streams']} ({len(endpoints)}):"]
            if endpoints
            else [self.w["none"].format(what=self.w["streams"])]
        )
        for endpoint in endpoints:
            users = [
                shown(d.name)
                for d in self.devices
                if any(p.id == endpoint.id for c in d.channels for p in c.publishers)
            ]
            use = self.w["used"].format(rooms=", ".join(users)) if users else self.w["unused"]
            lines.append(f"- {shown(endpoint.name or endpoint.id)}: {shown(endpoint.host or '?')}; {use}")
        publishing = [d for d in self.devices if any(c.publishers for c in d.channels)]
        live = [d for d in publishing if any(p.state == "started" for c in d.channels for p in c.publishers)]
        lines += self.listing("streaming", [(d, "") for d in live])
        return lines + self.listing("stopped", [(d, "") for d in publishing if d not in live])

    def room(self, device: Device) -> list[str]:
        """One room: online or not, recording, next class, storage, load."""
        events, w = self.seen.events(), self.w
        facts = [
            w["online_word"] + "; " + self.recording_words(device) if device.online else w["offline_word"]
        ]
        facts.append(self.event_words(events.get(device.id)))
        storage = self.seen.storage().get(device.id)
        status = self.seen.system().get(device.id)
        facts += [words for words in (self.storage_words(storage), self.hot(status)) if words]
        return [f"{shown(device.name)}:", *(f"- {fact}" for fact in facts)]

    # --- what may change, and changes -----------------------------------------------------

    def _names(self) -> str:
        return ", ".join(shown(d.name) for d, _ in self.practice) or "-"

    def what_may_change(self) -> list[str]:
        if not self.can_propose():
            return [self.w["off"]]
        if self.writable is None:
            return [self.w["unlisted"]]
        if not self.practice:
            return [self.w["writable_none"]]
        lines = [self.w["writable_head"].format(n=len(self.practice))]
        for device, event in self.practice:
            state = (
                self.w["online_word"] + "; " + self.recording_words(device)
                if device.online
                else self.w["offline_word"]
            )
            lines.append(
                f"- {shown(device.name)} ({shown(device.model, 20)}): {state}; {self.event_words(event)}"
            )
        return [
            *lines,
            self.w["writable_what"].format(changes=self.changes()),
            self.w["others"].format(n=len(self.devices)),
        ]

    def changes(self) -> str:
        """Every change ``propose_change`` offers (its ``tool`` enum: the policy's), in words."""
        names = CHANGE_NAMES[self.lang]
        said = list(dict.fromkeys(names.get(tool, tool) for tool in self.proposable))
        if len(said) < 2:
            return "".join(said) or "-"
        return ", ".join(said[:-1]) + names["and"] + said[-1]

    def none_due(self) -> str:
        """Why no recording was proposed, the real reason first: a practice room with a class on
        now or soon that already records ("already recording"), else that none is due."""
        now = self.seen.now
        for device, event in self.practice:
            if device.online and device.recording and _state(event, now, SOON_MINUTES) != "later":
                return self.w["already"].format(room=shown(device.name))
        return self.w["due_none"]

    def due_recording(self) -> Reply:
        """Readiness, then a proposal to start recording in the practice room whose class is
        next within the hour (`choose_room`)."""
        w, now = self.w, self.seen.now
        text = [*self.head(), *self.answer_readiness(), w["due_read_only"]]
        if not self.can_propose():
            return say("\n".join([*text, w["off"]]))
        if self.writable is None:
            return say("\n".join([*text, w["unlisted"]]))
        chosen = choose_room(self.practice, now)
        if chosen is None:
            return say("\n".join([*text, self.none_due()]))
        device, event = chosen
        start = event.start if event is not None and event.start is not None else now
        minutes = max(0, int((start - now).total_seconds() // 60))
        text.append(w["due_room"].format(room=shown(device.name), minutes=minutes))
        if not self.seen.has(PROPOSE):
            channel = next((c.channel_id for c in device.channels if c.recording is False), "1")
            arguments = {"action": "start", "device_ids": [f"{device.id}-{channel}"]}
            reason = w["reason_due"].format(minutes=minutes)
            return _calls([(PROPOSE, {"tool": "batch_recording", "arguments": arguments, "reason": reason})])
        return say(
            "\n".join(
                [
                    *text,
                    self.outcome(w["proposed"].format(what=w["start_recording"], room=shown(device.name))),
                ]
            )
        )

    def outcome(self, accepted: str) -> str:
        """What became of the proposal it made: accepted, already waiting, or not accepted
        (the assistant's own line says why)."""
        if self.seen.failures.get(PROPOSE) is not None:
            return self.w["refused"]
        result = self.seen.latest(PROPOSE)
        return (
            self.w["already_waiting"]
            if isinstance(result, Mapping) and result.get("already_waiting")
            else accepted
        )

    def change(self) -> Reply:
        """A change asked for: propose it when the room may be changed and it makes sense."""
        w = self.w
        if not self.can_propose():
            return say(w["off"])
        if self.writable is None:
            return say(w["unlisted"])
        if EVERY.search(self.question):
            return say(w["every"].format(names=self._names()))
        practice = self.room_named([d for d, _ in self.practice])
        if practice is None:
            other = self.room_named(self.devices)
            if other is not None:
                return say(w["read_only"].format(room=shown(other.name), names=self._names()))
            named = (
                any(ch.isdigit() for ch in self.question)
                or " in " in self.question
                or " en " in self.question
            )
            return say(w["not_found" if named else "which"].format(names=self._names()))
        device, event = next((d, e) for d, e in self.practice if d is practice)
        action, room = str(self.action), shown(device.name)
        if action in ("start_stream", "stop_stream"):
            return say(w["stream"].format(room=room))
        refusal = self.refusal(action, device, event)
        if refusal is not None:
            return say(refusal)
        what = w[_DONE[action]]
        if not self.seen.has(PROPOSE):
            arguments = self.arguments(action, device)
            reason = w["reason"].format(what=what, room=room)
            return _calls([(PROPOSE, {"tool": _TOOL_OF[action], "arguments": arguments, "reason": reason})])
        return say(self.outcome(w["proposed"].format(what=what, room=room)))

    def refusal(self, action: str, device: Device, event: Event | None) -> str | None:
        """Why the change makes no sense now, in words, or None."""
        w, room = self.w, shown(device.name)
        recording = [c for c in device.channels if c.recording]
        change = w[_DONE[action]]
        if not device.online:
            return w["offline_room"].format(room=room)
        if action == "start_recording":
            return (
                w["already"].format(room=room)
                if device.channels and len(recording) == len(device.channels)
                else None
            )
        if action == "stop_recording":
            return None if recording else w["idle"].format(room=room)
        if recording:
            return w["busy"].format(room=room, change=change)
        window = FIRMWARE_WINDOW_MINUTES if action == "firmware_update" else self.seen.lead_minutes
        if _state(event, self.seen.now, window) != "later":
            return w["near"].format(room=room, event=self.event_words(event), change=change)
        return None

    def arguments(self, action: str, device: Device) -> dict[str, Any]:
        if action == "start_recording":
            channel = next((c.channel_id for c in device.channels if not c.recording), "1")
            return {"action": "start", "device_ids": [f"{device.id}-{channel}"]}
        if action == "stop_recording":
            channel = next(c.channel_id for c in device.channels if c.recording)
            return {"action": "stop", "device_ids": [f"{device.id}-{channel}"]}
        return {"device_ids": [device.id]}


def proposable_of(request: ModelRequest) -> tuple[str, ...]:
    """The tools ``propose_change`` offers in `request` (its input schema's ``tool`` enum, in
    order); none when it is not offered or names none."""
    for tool in request.tools:
        if tool.get("name") == PROPOSE:
            enum = tool.get("input_schema", {}).get("properties", {}).get("tool", {}).get("enum")
            return tuple(t for t in enum if isinstance(t, str)) if isinstance(enum, list) else ()
    return ()


def choose_room(
    practice: Sequence[tuple[Device, Event | None]], now: datetime
) -> tuple[Device, Event] | None:
    """The practice room that is online, records on none of its channels (all known), and whose
    next class starts soonest after `now`, within `SOON_MINUTES`; None when none does."""
    due = [
        (event.start, device.id, device, event)
        for device, event in practice
        if device.online
        and device.channels
        and all(c.recording is False for c in device.channels)
        and event is not None
        and event.start is not None
        and _state(event, now, SOON_MINUTES) == "soon"
    ]
    return min(due, key=lambda row: row[:2])[2:] if due else None


def demo_model(request: ModelRequest) -> Reply:
    """The demo model's next message for `request` (see the module docstring)."""
    return _Turn(request).reply()
