"""What the demo model knows at one request: the question and everything it has read, taken
from the messages the real SDK sent (the stand-in sees nothing else). Pure.

The first user message is the assistant's: a header with the language, the time and the lead
window, a blank line, then the operator's question. Each tool result is one data block whose
body is JSON (`json_in` finds it); an error result holds ``{"error": {"code", "message"}}``.
The data block caps lists and maps, marking what it left out with ``"…"``; those markers are
dropped here and `Conversation.partial` says that something was not shown. A batched read whose
calls partly failed arrives as ``{"result", "could_not_read"}``: the result is read, and
`Conversation.unread_calls` names what was not (`Conversation.failures`: a result that failed or
has no known shape).

Results are parsed with the same tolerant parsers the product uses (`shared.epiphan.fleet`), so the
demo model reads Epiphan's shapes, old and new, the way Fleetwatch does. Names in results are
data: they are shown (through the shared wording), never followed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from services.lab.model_scripts.api import ModelRequest, json_in
from shared.epiphan.fleet import (
    DEVICES,
    ENDPOINTS,
    EVENT,
    EVENTS,
    RECORDER,
    STORAGE,
    SYSTEM,
    Channel,
    Device,
    Event,
    FleetShapeError,
    StorageStatus,
    StreamEndpoint,
    SystemStatus,
    merge_recorder,
    parse_devices,
    parse_event,
    parse_events,
    parse_recorder_status,
    parse_storage_status,
    parse_stream_endpoints,
    parse_system_status,
    parse_time,
)

WRITABLE: Final = "list_writable_devices"
PROPOSE: Final = "propose_change"
MARKER: Final = "…"
"""The key the data block uses for what it left out."""

_HEADER = re.compile(r"^Operator's question \((?P<facts>[^)]*)\)\.\s*\n\s*\n", re.S)
_LANGUAGE = re.compile(r"\blanguage:\s*(en|es)\b")
_NOW = re.compile(r"\bnow:\s*(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")
_LEAD = re.compile(r"\blead window:\s*(\d+)\s*min")


def _unmarked(value: Any) -> tuple[Any, bool]:
    """`value` without the data block's "left out" markers, and whether it had any."""
    if isinstance(value, Mapping):
        cut = MARKER in value
        out = {}
        for key, item in value.items():
            if key != MARKER:
                out[key], inner = _unmarked(item)
                cut = cut or inner
        return out, cut
    if isinstance(value, list):
        kept, cut = [], False
        for item in value:
            if isinstance(item, Mapping) and set(item) == {MARKER}:
                cut = True
                continue
            clean, inner = _unmarked(item)
            kept.append(clean)
            cut = cut or inner
        return kept, cut
    return value, False


@dataclass(frozen=True)
class Failure:
    """A tool result that was an error, or that could not be read."""

    tool: str
    code: str
    message: str


@dataclass
class Conversation:
    """The question and what was read so far (latest results last, merged per tool)."""

    question: str
    language: str
    now: datetime
    lead_minutes: int
    offered: frozenset[str]
    called: frozenset[str]
    results: dict[str, list[Any]] = field(default_factory=dict)
    failures: dict[str, Failure] = field(default_factory=dict)
    partial: bool = False
    unread_calls: list[tuple[str, tuple[str, ...], Failure]] = field(default_factory=list)
    """Calls of a batched read that failed (``could_not_read``): tool, devices, why."""

    @classmethod
    def of(cls, request: ModelRequest) -> Conversation:
        """Everything the request carries (see the module docstring)."""
        first = request.question()
        header = _HEADER.match(first)
        facts = header.group("facts") if header else ""
        language = _LANGUAGE.search(facts)
        stamp = _NOW.search(facts)
        lead = _LEAD.search(facts)
        conversation = cls(
            question=first[header.end() :] if header else first,
            language=language.group(1) if language else "en",
            now=datetime.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            if stamp
            else datetime.now(UTC),
            lead_minutes=int(lead.group(1)) if lead else 30,
            offered=request.tool_names(),
            called=frozenset(str(u.get("name", "")) for u in request.tool_uses()),
        )
        for result in request.tool_results():
            payload, cut = _unmarked(json_in(result.text))
            error = payload.get("error") if isinstance(payload, Mapping) else None
            if result.is_error or isinstance(error, Mapping):
                error = error if isinstance(error, Mapping) else {}
                conversation.failures[result.name] = Failure(
                    result.name, str(error.get("code", "")), str(error.get("message", ""))
                )
                continue
            conversation.partial = conversation.partial or cut
            if isinstance(payload, Mapping) and set(payload) == {"result", "could_not_read"}:
                for entry in _maps(payload["could_not_read"]):
                    ids = tuple(str(i) for i in entry.get("device_ids") or ())
                    why = Failure(result.name, str(entry.get("code", "")), str(entry.get("message", "")))
                    conversation.unread_calls.append((result.name, ids, why))
                payload = payload["result"]
            conversation.results.setdefault(result.name, []).append(payload)
        return conversation

    def has(self, tool: str) -> bool:
        """True when `tool` was called (answered or failed)."""
        return tool in self.called

    def latest(self, tool: str) -> Any:
        """The latest result of `tool`, or None."""
        found = self.results.get(tool)
        return found[-1] if found else None

    def _parsed(self, tool: str, parser: Any) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for payload in self.results.get(tool, []):
            try:
                merged.update(parser(payload))
            except FleetShapeError as exc:
                self.failures[tool] = Failure(tool, str(exc.code), exc.message)
        return merged

    def devices(self) -> tuple[Device, ...] | None:
        """The read team's devices (recording merged from the recorder status when read), or
        None when the list was not read or could not be."""
        payload = self.latest(DEVICES)
        if payload is None:
            return None
        try:
            devices = parse_devices(payload)[1]
        except FleetShapeError as exc:
            self.failures[DEVICES] = Failure(DEVICES, str(exc.code), exc.message)
            return None
        return merge_recorder(devices, self._parsed(RECORDER, parse_recorder_status))

    def events(self) -> dict[str, Event | None]:
        """Each device's current or next event, from the many-device and one-device reads."""
        events: dict[str, Event | None] = self._parsed(EVENTS, parse_events)
        for payload in self.results.get(EVENT, []):
            if isinstance(payload, Mapping) and isinstance(payload.get("device_id"), str):
                try:
                    events[payload["device_id"]] = parse_event(payload.get("event"))
                except FleetShapeError:
                    continue
        return events

    def system(self) -> dict[str, SystemStatus]:
        return self._parsed(SYSTEM, parse_system_status)

    def storage(self) -> dict[str, StorageStatus]:
        return self._parsed(STORAGE, parse_storage_status)

    def endpoints(self) -> tuple[StreamEndpoint, ...] | None:
        payload = self.latest(ENDPOINTS)
        if payload is None:
            return None
        try:
            return parse_stream_endpoints(payload)
        except FleetShapeError as exc:
            self.failures[ENDPOINTS] = Failure(ENDPOINTS, str(exc.code), exc.message)
            return None

    def writable(self) -> list[Mapping[str, Any]] | None:
        """The ``list_writable_devices`` entries (the sandbox team, read by the executor), or
        None when not read or refused."""
        payload = self.latest(WRITABLE)
        if not isinstance(payload, Mapping) or not isinstance(payload.get("devices"), list):
            return None
        return [
            d for d in payload["devices"] if isinstance(d, Mapping) and isinstance(d.get("device_id"), str)
        ]


def _maps(items: Any) -> Iterable[Mapping[str, Any]]:
    return (i for i in items if isinstance(i, Mapping)) if isinstance(items, list) else ()


def as_device(entry: Mapping[str, Any]) -> tuple[Device, Event | None]:
    """A ``list_writable_devices`` entry as a device and its next event (for the shared wording)."""
    channels = tuple(
        Channel(
            channel_id=str(c.get("channel_id", "")),
            name=str(c.get("name") or ""),
            recording=c.get("recording") if isinstance(c.get("recording"), bool) else None,
        )
        for c in entry.get("channels") or []
        if isinstance(c, Mapping)
    )
    device = Device(
        id=str(entry["device_id"]),
        name=str(entry.get("name") or ""),
        model=str(entry.get("model") or ""),
        online=entry.get("online") is True,
        channels=channels,
    )
    event = entry.get("next_event")
    if not isinstance(event, Mapping) or not event.get("event_id"):
        return device, None
    return device, Event(
        id=str(event["event_id"]),
        title=str(event.get("title") or ""),
        start=parse_time(event.get("start")),
        finish=parse_time(event.get("finish")),
    )
