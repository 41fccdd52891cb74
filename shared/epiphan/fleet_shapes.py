"""The result shapes of Epiphan's read tools, each a named case (pure, no I/O).

Epiphan's declared output schemas do not always match what it sends, and versions differ, so
Fleetwatch reads a result only in a shape it knows. Each tool has an ordered list of named
`Shape` cases; `recognise` gives the first that matches, or None. A result in no known shape is
a read error for that tool (`shared.epiphan.fleet.FleetShapeError`), never a guess: a map keyed by
device must have master IDs as keys and rows that carry at least one field the tool is known
to send, so ``{"devices": {...}}`` is never read as a device called ``devices``.

Where a shape comes from is in its ``about``: "live" shapes are EPIPHAN.md's; "older" shapes
were seen on older servers or on live-shaped answers (issue 16); the tools Fleetwatch does not
parse (they reach the model as they are) have the one shape the lab serves, so a capture's
manifest can say whether a live answer looks like it. Each shape has a fixture,
``tests/fixtures/shapes/<tool>/<name>.json``, and the lab can serve every shape of the tools
Fleetwatch parses (``--shape TOOL=NAME``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from shared.ids import MASTER_ID

_MASTER: Final = re.compile(MASTER_ID)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")

SYSTEM_FIELDS: Final = frozenset(
    {"cpu_load_pct", "cpu_load", "cpu_temp_c", "cpu_temp", "uptime_since", "up_since"}
)
"""Fields a system-status row carries (live: ``cpu_load_pct``/``uptime_since``; older:
``cpu_load``/``up_since``)."""
STORAGE_FIELDS: Final = frozenset(
    {"state", "State", "free", "free_bytes", "Free", "total", "total_bytes", "Total"}
)
"""Fields a storage row carries (bytes)."""


@dataclass(frozen=True, slots=True)
class Shape:
    """One known shape of one tool's result: its ``name`` (stable, used by fixtures, the lab's
    ``--shape`` and capture manifests), where it comes from (``about``) and its test."""

    tool: str
    name: str
    about: str
    matches: Callable[[Any], bool]


def _is_map(value: Any) -> bool:
    return isinstance(value, Mapping)


def _maps(value: Any) -> bool:
    """A list whose every item is a map (an empty list too)."""
    return isinstance(value, list) and all(_is_map(v) for v in value)


def _master(value: Any) -> bool:
    return isinstance(value, str) and _MASTER.fullmatch(value) is not None


def _keyed(value: Any, row: Callable[[Mapping[str, Any]], bool]) -> bool:
    """A map from master IDs to maps that each pass `row` (an empty map too)."""
    return _is_map(value) and all(_master(k) and _is_map(v) and row(v) for k, v in value.items())


def _rows(value: Any, row: Callable[[Mapping[str, Any]], bool]) -> bool:
    """A list of maps, each naming its device (``device_id``) and passing `row`."""
    return _maps(value) and all(_master(v.get("device_id")) and row(v) for v in value)


def _under(key: str, test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda result: _is_map(result) and key in result and test(result[key])


def _has_any(fields: frozenset[str]) -> Callable[[Mapping[str, Any]], bool]:
    return lambda row: not fields.isdisjoint(row)


def _has(*keys: str) -> Callable[[Any], bool]:
    return lambda result: _is_map(result) and all(k in result for k in keys)


def _channels_of(key: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda row: _is_map(row.get(key)) or _maps(row.get(key))


def _event_row(row: Mapping[str, Any]) -> bool:
    return "event" in row and (row["event"] is None or _is_map(row["event"]))


def _nonempty_keyed(row: Callable[[Mapping[str, Any]], bool]) -> Callable[[Any], bool]:
    return lambda result: _is_map(result) and bool(result) and _keyed(result, row)


_system_row = _has_any(SYSTEM_FIELDS)
_storage_row = _has_any(STORAGE_FIELDS)

_CASES: Final[dict[str, list[tuple[str, str, Callable[[Any], bool]]]]] = {
    "get_devices_in_my_team": [
        (
            "current",
            "live: {devices: [{Id, Name, Model, Status, Channels, Warnings...}]}",
            _under("devices", _maps),
        )
    ],
    "get_device_info": [
        ("current", "live: one device as the device list gives it ({Id, Name, ...})", _has("Id"))
    ],
    "get_device_sources": [("current", "lab: {device_id, sources: [...]}", _under("sources", _maps))],
    "get_system_status_for_devices": [
        (
            "current",
            "live: {status: [{device_id, cpu_load_pct, cpu_temp_c, uptime_since}]}",
            _under("status", lambda v: _rows(v, _system_row)),
        ),
        (
            "keyed_status",
            "older: {status: {<id>: {cpu_load, cpu_temp_c, up_since}}}",
            _under("status", lambda v: _keyed(v, _system_row)),
        ),
        (
            "keyed_devices",
            "older (issue 16): {devices: {<id>: {cpu_load, cpu_temp_c, up_since}}}",
            _under("devices", lambda v: _keyed(v, _system_row)),
        ),
        ("keyed", "older: {<id>: {cpu_load, cpu_temp_c, up_since}}", _nonempty_keyed(_system_row)),
    ],
    "get_recorder_status_for_devices": [
        (
            "current",
            'live: {devices: {<id>: {Name, Channels: {"<n>": {Name, RecordingStatus}}}}}',
            _under("devices", lambda v: _keyed(v, _channels_of("Channels"))),
        ),
        (
            "lower_case",
            'older: {devices: {<id>: {name, channels: {"<n>": {name, recording_status}}}}}',
            _under("devices", lambda v: _keyed(v, _channels_of("channels"))),
        ),
        (
            "device_list",
            "older: {devices: [{device_id, channels}]}",
            _under("devices", lambda v: _rows(v, _channels_of("channels"))),
        ),
    ],
    "get_storage_status_for_devices": [
        (
            "current",
            "lab: {storage: [{device_id, state, free, total}]} (bytes; EPIPHAN.md gives no shape)",
            _under("storage", lambda v: _rows(v, _storage_row)),
        ),
        (
            "keyed",
            "{storage: {<id>: {state, free, total}}}",
            _under("storage", lambda v: _keyed(v, _storage_row)),
        ),
        ("keyed_top", "{<id>: {state, free, total}}", _nonempty_keyed(_storage_row)),
    ],
    "get_channel_settings": [
        (
            "current",
            "lab: {device_id, channel_id, name, encoding: {...}}",
            _has("channel_id", "encoding"),
        )
    ],
    "get_channel_audio_levels": [
        ("current", "lab: {device_id, channel_id, levels: [...]}", _under("levels", _maps))
    ],
    "get_stream_endpoint": [("current", "live: one {id, name, url, key...}", _has("id", "url"))],
    "get_stream_endpoints": [
        (
            "current",
            "live: {stream_endpoints: [{id, name, url, key...}]}",
            _under("stream_endpoints", _maps),
        ),
        ("endpoints", "older: {endpoints: [...]}", _under("endpoints", _maps)),
        ("streams", "{streams: [...]}", _under("streams", _maps)),
        ("items", "{items: [...]}", _under("items", _maps)),
        ("list", "a bare list of endpoints", _maps),
    ],
    "get_team_presets": [("current", "lab: {presets: [{id, name, description}]}", _under("presets", _maps))],
    "get_cms_events_for_device": [("current", "lab: {device_id, events: [...]}", _under("events", _maps))],
    "get_cms_events_for_devices": [
        (
            "current",
            "lab: {events: [{device_id, events: [...]}]}",
            _under("events", lambda v: _rows(v, lambda row: _maps(row.get("events")))),
        )
    ],
    "get_current_or_next_cms_event_for_device": [
        ("current", "live: {device_id, event: {...} or null}", lambda r: _is_map(r) and _event_row(r))
    ],
    "get_current_or_next_cms_events_for_devices": [
        (
            "current",
            "live: {events: [{device_id, event: {id, title, start, finish...} or null}]}",
            _under("events", lambda v: _rows(v, _event_row)),
        ),
        (
            "keyed_devices",
            "older (issue 16): {devices: {<id>: {event: {id, title, start, end}}}}",
            _under("devices", lambda v: _keyed(v, _event_row)),
        ),
    ],
    "get_cms_names_for_devices": [
        (
            "current",
            "lab: {devices: [{device_id, cms}]}",
            _under("devices", lambda v: _rows(v, lambda r: "cms" in r)),
        )
    ],
    "get_devices_by_cms": [
        (
            "current",
            "lab: {cms, devices: [...]}",
            lambda r: _has("cms")(r) and _under("devices", _maps)(r),
        )
    ],
    "kb_search": [("current", "lab: {results: [{id, title, snippet, url}]}", _under("results", _maps))],
    "kb_fetch": [("current", "lab: {id, title, content, url}", _has("id", "content"))],
}

SHAPES: Final[Mapping[str, tuple[Shape, ...]]] = MappingProxyType(
    {
        tool: tuple(Shape(tool, name, about, test) for name, about, test in cases)
        for tool, cases in _CASES.items()
    }
)
"""Every read tool's known shapes, first match first. ``get_channel_image`` answers a picture,
not JSON: it has no shape here (a picture is never saved by a capture nor sent to a model)."""


def recognise(tool: str, result: Any) -> Shape | None:
    """The first known shape of `tool` that `result` has, or None (an unknown tool too)."""
    return next((shape for shape in SHAPES.get(tool, ()) if shape.matches(result)), None)


def outline(result: Any) -> str:
    """A few words on what a result looks like, for an error message: its type and, for a
    map, up to five key names that look like field names (others are counted, never quoted:
    a key may be a name from the fleet)."""
    if result is None:
        return "null"
    if isinstance(result, str):
        return "text, not JSON"
    if isinstance(result, Sequence):
        return f"a list of {len(result)} items"
    if not isinstance(result, Mapping):
        return type(result).__name__
    named = [k for k in result if isinstance(k, str) and _NAME.fullmatch(k) and not _master(k)]
    shown = ", ".join(f"{k!r}{' (null)' if result[k] is None else ''}" for k in named[:5])
    others = len(result) - min(len(named), 5)
    more = f"{' and ' if shown else ''}{others} other key{'s' if others != 1 else ''}" if others else ""
    return f"a map with {shown}{more}" if shown or more else "an empty map"
