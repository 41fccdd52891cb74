"""Parsers from Epiphan read results into one typed fleet snapshot (pure, no I/O).

One parser per tool. Each reads a result only in one of the tool's named shapes
(`shared.epiphan.fleet_shapes`: the live one and the older ones) and turns it into the same frozen
structures, so the rest of Fleetwatch never sees a raw Epiphan dict. A result in no known
shape raises `FleetShapeError` (code ``epiphan_bad_result``) naming the tool: it is a read
error for that tool, never an invented row. A field that is merely missing or null in a known
shape is tolerated (Epiphan's declared schemas do not always match).

Times are UTC ``datetime`` objects. Epiphan sends ISO 8601 (``2026-09-16T20:36Z``, minute
precision for ``StateTime``), epoch seconds, or epoch milliseconds (values above 1e11).

Recording of an offline device is unknown: Epiphan's device list keeps a channel's last
``recording_status`` for a device that went offline weeks ago, so for an offline device
``Channel.recording`` is None and ``Channel.last_known_recording`` keeps what was reported
(with ``recording_since``, when it started).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from shared.epiphan.fleet_shapes import outline, recognise
from shared.errors import Code, FleetwatchError

EPOCH_MS_THRESHOLD = 1e11
"""Epoch values above this are milliseconds (Epiphan sends both)."""

TEAM_ID_KEYS = ("team_id", "teamId", "TeamId", "TeamID")
"""Where a team ID may sit at the top level of ``get_devices_in_my_team`` (unconfirmed)."""

DEVICES: Final = "get_devices_in_my_team"
RECORDER: Final = "get_recorder_status_for_devices"
SYSTEM: Final = "get_system_status_for_devices"
STORAGE: Final = "get_storage_status_for_devices"
EVENTS: Final = "get_current_or_next_cms_events_for_devices"
EVENT: Final = "get_current_or_next_cms_event_for_device"
ENDPOINTS: Final = "get_stream_endpoints"

PART_OF_TOOL: Final[Mapping[str, str]] = {
    RECORDER: "recorder",
    SYSTEM: "system",
    EVENTS: "events",
    STORAGE: "storage",
}
"""The part of a snapshot each per-device read fills (`UnreadPart.part`)."""


CAMERA_FAMILY: Final = "ec20"
"""The EC20's family: a camera, not an encoder (EPIPHAN.md, live-verified peer)."""
VENUE_FAMILY: Final = "venue"
"""Epiphan Venue (formerly Pearl Duo): its own product line and firmware family. A device that
still reports itself a "Pearl Duo" keeps that model as its family: whether its firmware is
numbered as a Venue's or a Pearl's is not known, so it is compared with neither."""

CAMERA_CANNOT: Final[frozenset[str]] = frozenset(
    {
        "apply_team_preset",
        "batch_recording",
        "cms_event_action",
        "confirm_cms_event_on_device",
        "create_cms_event",
        "delete_cms_event",
        "start_stream_endpoint",
        "stop_stream_endpoint",
        "switch_device_to_cms",
        "update_cms_event",
    }
)
"""The Epiphan tools an EC20 cannot take: it cannot record, stream, hold events, switch CMS or
take presets (it can be listed, read, previewed, rebooted and updated)."""


@functools.lru_cache(maxsize=1024)
def product_family(model: str) -> str:
    """The product line and firmware family of an Epiphan model name: `CAMERA_FAMILY` for any
    spelling of the EC20, `VENUE_FAMILY` for any spelling of the Epiphan Venue, else the model itself with case, spaces, hyphens and underscores folded ("Pearl-2" and
    "pearl 2" are one model; Pearl models keep their own families). ``""`` for no model. Pure;
    kept per model name (a fleet has a handful of models and a beat asks for each of its
    thousands of devices several times)."""
    folded = " ".join(re.split(r"[\s_-]+", model.casefold())).strip()
    words = folded.split()
    if "ec20" in words or "ec 20" in folded:
        return CAMERA_FAMILY
    if "venue" in words:
        return VENUE_FAMILY
    return folded


def model_can(model: str, tool: str) -> bool:
    """False when a device of `model` cannot take `tool` at all (an EC20 asked to record,
    stream or hold an event); True otherwise, and for a model Fleetwatch knows nothing against."""
    return not (product_family(model) == CAMERA_FAMILY and tool in CAMERA_CANNOT)


class FleetShapeError(FleetwatchError):
    """A read result has a shape none of the known ones match, or a row that cannot be read."""

    def __init__(self, tool: str, problem: str) -> None:
        super().__init__(Code.EPIPHAN_BAD_RESULT, f"{tool}: {problem}")
        self.tool = tool


class DeviceWarning(msgspec.Struct, frozen=True):
    """A warning on a device or channel: ``id`` e.g. ``disk_space_error``, ``channel_no_signal``."""

    id: str
    label: str = ""
    message: str = ""
    data: Any = None


class Publisher(msgspec.Struct, frozen=True):
    """A channel's stream publisher (rtmp, srt...): its ID, type and state (``started``...)."""

    id: str
    type: str = ""
    state: str = ""


class Channel(msgspec.Struct, frozen=True):
    """A device channel. ``channel_id`` is the device-local ``"1"``, ``"2"``...

    ``recording`` is None when no source said, and always for an offline device; then
    ``last_known_recording`` holds what Epiphan last reported (None when online).
    ``recording_since`` is when the (last known) recording started.
    """

    channel_id: str
    name: str = ""
    recording: bool | None = None
    recording_since: datetime | None = None
    publishers: tuple[Publisher, ...] = ()
    warnings: tuple[DeviceWarning, ...] = ()
    last_known_recording: bool | None = None


class Device(msgspec.Struct, frozen=True):
    """One Pearl (or EC20, Nexus...) as ``get_devices_in_my_team`` describes it."""

    id: str
    name: str = ""
    model: str = ""
    group_id: str = ""
    group_name: str = ""
    firmware: str = ""
    online: bool = False
    state_time: datetime | None = None
    channels: tuple[Channel, ...] = ()
    warnings: tuple[DeviceWarning, ...] = ()

    def channel(self, channel_id: str) -> Channel | None:
        """The channel with that device-local ID, or None."""
        return next((c for c in self.channels if c.channel_id == channel_id), None)

    @property
    def recording(self) -> bool:
        """True when any channel is known to be recording (never for an offline device)."""
        return any(c.recording for c in self.channels)


class SystemStatus(msgspec.Struct, frozen=True):
    """CPU load (percent), CPU temperature (°C) and the time the device came up (UTC)."""

    device_id: str
    cpu_load_pct: float | None = None
    cpu_temp_c: float | None = None
    up_since: datetime | None = None


class Event(msgspec.Struct, frozen=True):
    """A device's current or next CMS event. Epiphan names the end ``finish``, not ``end``
    (an older shape says ``end``)."""

    id: str
    title: str = ""
    cms: str = ""
    status: str = ""
    confirmed: bool = False
    start: datetime | None = None
    finish: datetime | None = None


class StreamEndpoint(msgspec.Struct, frozen=True):
    """A stream destination: ID (UUID), name and the URL's host only (never the key or path).

    ``secret_digest`` is set only when the reader asked for one (the executor binding what a
    card showed): a keyed digest of the full URL and every secret field (the stream key), made
    from the unredacted entry; the URL and key themselves are never kept.

    ``locked_by`` is the live server's ``LockByDevice`` (the master ID of the device using the
    destination now; None when none does or it was not reported) and ``streaming`` its
    ``CurrentlyStreaming`` (None when not reported, as in older shapes).
    """

    id: str
    name: str = ""
    host: str | None = None
    secret_digest: str | None = None
    locked_by: str | None = None
    streaming: bool | None = None


class UnreadPart(msgspec.Struct, frozen=True):
    """A part of a snapshot that could not be read: ``part`` (``recorder``, ``system``,
    ``events``, ``storage``), the tool, its error code and message, and the devices it was not
    read for (all of them, or those of one call of at most 100)."""

    part: str
    tool: str
    code: str
    message: str
    device_ids: tuple[str, ...] = ()


class FleetSnapshot(msgspec.Struct, frozen=True):
    """What one sign-in's team looks like at ``taken_at`` (UTC).

    ``unread`` names what could not be read: the read side shows what it read and marks the
    rest (a device missing from ``system`` or ``events`` is then unknown, not "nothing")."""

    team_id: str | None
    devices: tuple[Device, ...]
    system: Mapping[str, SystemStatus] = msgspec.field(default_factory=dict)
    events: Mapping[str, Event | None] = msgspec.field(default_factory=dict)
    taken_at: datetime | None = None
    unread: tuple[UnreadPart, ...] = ()

    def device(self, device_id: str) -> Device | None:
        """The device with that master ID, or None."""
        return next((d for d in self.devices if d.id == device_id), None)

    def read_for(self, device_id: str, part: str) -> bool:
        """False when `part` (``recorder``, ``system``, ``events``, ``storage``) could not be
        read for `device_id` (`unread` names it), True otherwise."""
        return not any(u.part == part and device_id in u.device_ids for u in self.unread)


def parse_time(value: Any) -> datetime | None:
    """ISO 8601 (``Z`` or offset; minute precision allowed), epoch s or epoch ms → UTC datetime.

    Returns None for None, "" or a value none of those forms match.
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit():
        value = float(value)
    if isinstance(value, int | float):
        seconds = value / 1000 if value > EPOCH_MS_THRESHOLD else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return None


def shape_of(tool: str, result: Any) -> str:
    """The name of `result`'s known shape for `tool`.

    Raises:
        FleetShapeError: no known shape (the message outlines what came instead).
    """
    shape = recognise(tool, result)
    if shape is None:
        raise FleetShapeError(tool, f"no known shape ({outline(result)})")
    return shape.name


def _get(item: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if key in item and item[key] is not None:
            return item[key]
    return default


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _maps(items: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(items, Sequence) and not isinstance(items, str):
        return (i for i in items if isinstance(i, Mapping))
    return ()


def _keyed_rows(body: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(device ID, row) pairs of a map keyed by ID or a list of rows naming their device."""
    if isinstance(body, Mapping):
        return [(str(k), v) for k, v in body.items()]
    return [(_str(_get(row, "device_id")), row) for row in _maps(body)]


def _warnings(items: Any) -> tuple[DeviceWarning, ...]:
    return tuple(
        DeviceWarning(
            id=_str(_get(w, "id")),
            label=_str(_get(w, "label")),
            message=_str(_get(w, "message")),
            data=w.get("data"),
        )
        for w in _maps(items)
    )


def _recording_state(status: Any) -> tuple[bool | None, datetime | None]:
    if not isinstance(status, Mapping):
        return None, None
    state = _get(status, "state")
    if state is None:
        return None, None
    recording = str(state).lower() == "recording"
    return recording, parse_time(_get(status, "timestamp")) if recording else None


def _channel(item: Mapping[str, Any], online: bool) -> Channel:
    recording, since = _recording_state(_get(item, "recording_status", "RecordingStatus"))
    publishers = tuple(
        Publisher(
            id=_str(_get(p, "id")),
            type=_str(_get(p, "type")),
            state=_str(_get(_get(p, "status", default={}), "state"))
            if isinstance(p.get("status"), Mapping)
            else "",
        )
        for p in _maps(_get(item, "Publishers", "publishers"))
    )
    return Channel(
        channel_id=_str(_get(item, "channel_id", "id", "Id")),
        name=_str(_get(item, "name", "Name")),
        recording=recording if online else None,
        recording_since=since,
        publishers=publishers,
        warnings=_warnings(_get(item, "Warnings", "warnings")),
        last_known_recording=None if online else recording,
    )


def parse_devices(result: Any) -> tuple[str | None, tuple[Device, ...]]:
    """``get_devices_in_my_team`` → (team ID or None, devices).

    Raises:
        FleetShapeError: no known shape, or a device without an ID.
    """
    shape_of(DEVICES, result)
    team = next((str(result[k]) for k in TEAM_ID_KEYS if result.get(k) not in (None, "")), None)
    devices = []
    for item in _maps(result["devices"]):
        device_id = _get(item, "Id", "id", "device_id")
        if device_id in (None, ""):
            raise FleetShapeError(DEVICES, "a device has no ID")
        online = _str(_get(item, "Status", "status")).lower() == "online"
        devices.append(
            Device(
                id=str(device_id),
                name=_str(_get(item, "Name", "name")),
                model=_str(_get(item, "Model", "model")),
                group_id=_str(_get(item, "GroupId", "group_id")),
                group_name=_str(_get(item, "GroupName", "group_name")),
                firmware=_str(_get(item, "Firmware", "firmware")),
                online=online,
                state_time=parse_time(_get(item, "StateTime", "state_time")),
                channels=tuple(_channel(c, online) for c in _maps(_get(item, "Channels", "channels"))),
                warnings=_warnings(_get(item, "Warnings", "warnings")),
            )
        )
    return team, tuple(devices)


def parse_recorder_status(result: Any) -> dict[str, dict[str, bool | None]]:
    """``get_recorder_status_for_devices`` → {master ID: {channel ID: recording}}.

    Shapes: ``current`` (``{devices: {id: {Channels: {"1": {RecordingStatus}}}}}``),
    ``lower_case`` (``channels``/``recording_status``) and ``device_list`` (a list of
    ``{device_id, channels}``; channels as a map or a list).

    Raises:
        FleetShapeError: no known shape.
    """
    shape_of(RECORDER, result)
    out: dict[str, dict[str, bool | None]] = {}
    for device_id, item in _keyed_rows(result["devices"]):
        channels = _get(item, "Channels", "channels", default={})
        if isinstance(channels, Mapping):
            entries = [(str(k), v) for k, v in channels.items() if isinstance(v, Mapping)]
        else:
            entries = [(_str(_get(c, "channel_id", "id")), c) for c in _maps(channels)]
        out[device_id] = {
            cid: _recording_state(_get(ch, "RecordingStatus", "recording_status"))[0] for cid, ch in entries
        }
    return out


def parse_system_status(result: Any) -> dict[str, SystemStatus]:
    """``get_system_status_for_devices`` → {master ID: SystemStatus}.

    Shapes: ``current`` (``{status: [{device_id, cpu_load_pct, cpu_temp_c, uptime_since}]}``)
    and the older ones keyed by device ID (``{status: {id: ...}}``, ``{devices: {id: ...}}``,
    ``{id: ...}``) with ``cpu_load``, ``up_since``. ``status: null`` is no known shape: nothing
    was read, and the snapshot says so.

    Raises:
        FleetShapeError: no known shape.
    """
    shape = shape_of(SYSTEM, result)
    body = {"current": "status", "keyed_status": "status", "keyed_devices": "devices"}.get(shape)
    return {
        device_id: SystemStatus(
            device_id=device_id,
            cpu_load_pct=_number(_get(s, "cpu_load_pct", "cpu_load")),
            cpu_temp_c=_number(_get(s, "cpu_temp_c", "cpu_temp")),
            up_since=parse_time(_get(s, "uptime_since", "up_since")),
        )
        for device_id, s in _keyed_rows(result[body] if body else result)
    }


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def parse_events(result: Any) -> dict[str, Event | None]:
    """``get_current_or_next_cms_events_for_devices`` → {master ID: Event or None}.

    Shapes: ``current`` (``{events: [{device_id, event}]}``, the end is ``finish``) and
    ``keyed_devices`` (older: ``{devices: {id: {event: {id, title, start, end}}}}``). A null
    ``event`` means nothing scheduled; a device missing from the answer is unknown (absent
    from the map). ``events: null`` is no known shape.

    Raises:
        FleetShapeError: no known shape, or an event without an ID.
    """
    shape = shape_of(EVENTS, result)
    rows = _keyed_rows(result["events"] if shape == "current" else result["devices"])
    return {device_id: parse_event(row.get("event"), tool=EVENTS) for device_id, row in rows}


def parse_event(event: Any, *, tool: str = EVENT) -> Event | None:
    """One event map (the ``event`` of a current-or-next answer) → Event, or None for null.
    The end is ``finish`` (``end`` in an older shape).

    Raises:
        FleetShapeError: an event map without an ID.
    """
    if not isinstance(event, Mapping):
        return None
    event_id = _get(event, "id", "Id")
    if event_id in (None, ""):
        raise FleetShapeError(tool, "an event has no ID")
    return Event(
        id=str(event_id),
        title=_str(_get(event, "title")),
        cms=_str(_get(event, "cms")),
        status=_str(_get(event, "status")),
        confirmed=bool(_get(event, "confirmed", default=False)),
        start=parse_time(_get(event, "start")),
        finish=parse_time(_get(event, "finish", "end")),
    )


def parse_current_event(result: Any) -> tuple[str, Event | None]:
    """``get_current_or_next_cms_event_for_device`` → (master ID, Event or None).

    Raises:
        FleetShapeError: no known shape, or an event without an ID.
    """
    shape_of(EVENT, result)
    return _str(result.get("device_id")), parse_event(result["event"])


def parse_stream_endpoints(
    result: Any, *, digest: Callable[[Mapping[str, Any]], str] | None = None
) -> tuple[StreamEndpoint, ...]:
    """``get_stream_endpoints`` → endpoints with ID, name and URL host only.

    Shapes: the list under ``stream_endpoints`` (live), ``endpoints``, ``streams`` or ``items``,
    or a bare list. The real result carries the stream key: it is dropped here. With `digest`
    (given the unredacted entry), each endpoint carries ``digest(entry)`` as its
    ``secret_digest``.

    Raises:
        FleetShapeError: no known shape, or an entry without an ID (the whole read fails).
    """
    # The redaction module compiles its patterns at import (15 ms): only the reads that parse
    # endpoints load it, not every process that merely names a snapshot's types (issue 14).
    from shared.epiphan.redact import url_host

    shape = shape_of(ENDPOINTS, result)
    items = result if shape == "list" else result[{"current": "stream_endpoints"}.get(shape, shape)]
    out = []
    for item in items:
        if _get(item, "id", "Id") in (None, ""):
            raise FleetShapeError(ENDPOINTS, "an endpoint has no ID")
        url = _get(item, "url", "Url")
        streaming = _get(item, "CurrentlyStreaming", "currently_streaming", "currentlyStreaming")
        out.append(
            StreamEndpoint(
                id=str(_get(item, "id", "Id")),
                name=_str(_get(item, "name", "Name")),
                host=url_host(url) if isinstance(url, str) else None,
                secret_digest=digest(item) if digest is not None else None,
                locked_by=_lock(_get(item, "LockByDevice", "lock_by_device", "lockByDevice")),
                streaming=streaming if isinstance(streaming, bool) else None,
            )
        )
    return tuple(out)


def _lock(value: Any) -> str | None:
    """``LockByDevice`` as a master ID: a string or number as text, an object's ``id``/``Id``;
    empty, null or anything else: None (no device)."""
    if isinstance(value, Mapping):
        value = _get(value, "id", "Id", "device_id")
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    return text or None


def merge_recorder(
    devices: tuple[Device, ...], recorder: Mapping[str, Mapping[str, bool | None]]
) -> tuple[Device, ...]:
    """Devices with each channel's ``recording`` taken from the recorder status where it says
    (for an offline device only its ``last_known_recording``: its recording is unknown)."""
    merged = []
    for device in devices:
        states = recorder.get(device.id, {})
        channels = []
        for c in device.channels:
            state = states.get(c.channel_id)
            if state is None:
                channels.append(c)
            elif device.online:
                since = c.recording_since if state else None
                channels.append(msgspec.structs.replace(c, recording=state, recording_since=since))
            else:
                since = c.recording_since if state else None
                channels.append(msgspec.structs.replace(c, last_known_recording=state, recording_since=since))
        merged.append(msgspec.structs.replace(device, channels=tuple(channels)))
    return tuple(merged)


class StorageStatus(msgspec.Struct, frozen=True):
    """A device's storage: ``state`` ``ok``, ``low``, ``critical``, ``missing`` (no storage
    detected) or ``unknown`` (Epiphan said the empty string, as it does for an offline device:
    storage unknown, never zero; free and total are then None), "" when not said; free and
    total bytes (None when not said)."""

    device_id: str
    state: str = ""
    free: int | None = None
    total: int | None = None

    @property
    def free_pct(self) -> float | None:
        """Free space in percent of the total, or None when either is unknown."""
        if self.free is None or not self.total:
            return None
        return 100.0 * self.free / self.total


def _bytes(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def parse_storage_status(result: Any) -> dict[str, StorageStatus]:
    """``get_storage_status_for_devices`` → {master ID: StorageStatus}.

    Shapes: ``current`` (``{storage: [{device_id, state, free, total}]}``, the lab's: EPIPHAN.md
    gives no shape), ``keyed`` (``{storage: {id: ...}}``) and ``keyed_top`` (``{id: ...}``). A
    state missing from a row is left "" (free and total still say); a state given as the empty
    string is ``unknown``, and its free and total (an offline device's zeros) are not kept.

    Raises:
        FleetShapeError: no known shape.
    """
    shape = shape_of(STORAGE, result)
    return {
        device_id: _storage_row(device_id, s)
        for device_id, s in _keyed_rows(result if shape == "keyed_top" else result["storage"])
    }


def _storage_row(device_id: str, row: Mapping[str, Any]) -> StorageStatus:
    state = _get(row, "state", "State")
    if isinstance(state, str) and not state.strip():
        return StorageStatus(device_id, "unknown")
    return StorageStatus(
        device_id=device_id,
        state=_str(state).lower(),
        free=_bytes(_get(row, "free", "free_bytes", "Free")),
        total=_bytes(_get(row, "total", "total_bytes", "Total")),
    )


def storage_from_warnings(device: Device) -> StorageStatus | None:
    """What a device's own warnings say about its storage (``no_storage_detected`` → missing;
    ``disk_space_error`` → its ``state``, free and total), or None when they say nothing."""
    for warning in device.warnings:
        if warning.id == "no_storage_detected":
            return StorageStatus(device.id, "missing")
        if warning.id == "disk_space_error":
            data = warning.data if isinstance(warning.data, Mapping) else {}
            state = _str(data.get("state")).lower() or "low"
            return StorageStatus(device.id, state, _bytes(data.get("free")), _bytes(data.get("total")))
    return None


PARSERS: Final[Mapping[str, Callable[[Any], Any]]] = {
    DEVICES: parse_devices,
    RECORDER: parse_recorder_status,
    SYSTEM: parse_system_status,
    STORAGE: parse_storage_status,
    EVENTS: parse_events,
    EVENT: parse_current_event,
    ENDPOINTS: parse_stream_endpoints,
}
"""The parser of each read tool Fleetwatch reads into typed data (the others reach the model
as they are)."""
