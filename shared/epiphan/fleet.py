"""Tolerant parsers from Epiphan read results into one typed fleet snapshot (pure, no I/O).

Every parser accepts each shape EPIPHAN.md lists (the current one and the older ones) and turns
it into the same frozen structures, so the rest of Fleetwatch never sees a raw Epiphan dict.
A shape that cannot be read at all raises `FleetShapeError` (code `epiphan_bad_result`); a field
that is merely missing or null is tolerated (Epiphan's declared schemas do not always match).

Times are UTC ``datetime`` objects. Epiphan sends ISO 8601 (``2026-09-16T20:36Z``, minute
precision for ``StateTime``), epoch seconds, or epoch milliseconds (values above 1e11).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from shared.epiphan.redact import url_host
from shared.errors import Code, FleetwatchError

EPOCH_MS_THRESHOLD = 1e11
"""Epoch values above this are milliseconds (Epiphan sends both)."""

TEAM_ID_KEYS = ("team_id", "teamId", "TeamId", "TeamID")
"""Where a team ID may sit at the top level of ``get_devices_in_my_team`` (unconfirmed)."""


class FleetShapeError(FleetwatchError):
    """A read result has a shape none of the known ones match."""

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

    ``recording`` is None when no source said.
    """

    channel_id: str
    name: str = ""
    recording: bool | None = None
    recording_since: datetime | None = None
    publishers: tuple[Publisher, ...] = ()
    warnings: tuple[DeviceWarning, ...] = ()


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
        """True when any channel is recording."""
        return any(c.recording for c in self.channels)


class SystemStatus(msgspec.Struct, frozen=True):
    """CPU load (percent), CPU temperature (°C) and the time the device came up (UTC)."""

    device_id: str
    cpu_load_pct: float | None = None
    cpu_temp_c: float | None = None
    up_since: datetime | None = None


class Event(msgspec.Struct, frozen=True):
    """A device's current or next CMS event. Epiphan names the end ``finish``, not ``end``."""

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
    """

    id: str
    name: str = ""
    host: str | None = None
    secret_digest: str | None = None


class FleetSnapshot(msgspec.Struct, frozen=True):
    """What one sign-in's team looks like at ``taken_at`` (UTC)."""

    team_id: str | None
    devices: tuple[Device, ...]
    system: Mapping[str, SystemStatus] = msgspec.field(default_factory=dict)
    events: Mapping[str, Event | None] = msgspec.field(default_factory=dict)
    taken_at: datetime | None = None

    def device(self, device_id: str) -> Device | None:
        """The device with that master ID, or None."""
        return next((d for d in self.devices if d.id == device_id), None)


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


def _channel(item: Mapping[str, Any]) -> Channel:
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
        recording=recording,
        recording_since=since,
        publishers=publishers,
        warnings=_warnings(_get(item, "Warnings", "warnings")),
    )


def parse_devices(result: Any) -> tuple[str | None, tuple[Device, ...]]:
    """``get_devices_in_my_team`` → (team ID or None, devices).

    Raises:
        FleetShapeError: the result is not a map with a ``devices`` list, or a device has no ID.
    """
    if not isinstance(result, Mapping) or not isinstance(result.get("devices"), list):
        raise FleetShapeError("get_devices_in_my_team", "expected a map with a 'devices' list")
    team = next((str(result[k]) for k in TEAM_ID_KEYS if result.get(k) not in (None, "")), None)
    devices = []
    for item in _maps(result["devices"]):
        device_id = _get(item, "Id", "id", "device_id")
        if device_id in (None, ""):
            raise FleetShapeError("get_devices_in_my_team", "a device has no ID")
        devices.append(
            Device(
                id=str(device_id),
                name=_str(_get(item, "Name", "name")),
                model=_str(_get(item, "Model", "model")),
                group_id=_str(_get(item, "GroupId", "group_id")),
                group_name=_str(_get(item, "GroupName", "group_name")),
                firmware=_str(_get(item, "Firmware", "firmware")),
                online=_str(_get(item, "Status", "status")).lower() == "online",
                state_time=parse_time(_get(item, "StateTime", "state_time")),
                channels=tuple(_channel(c) for c in _maps(_get(item, "Channels", "channels"))),
                warnings=_warnings(_get(item, "Warnings", "warnings")),
            )
        )
    return team, tuple(devices)


def parse_recorder_status(result: Any) -> dict[str, dict[str, bool | None]]:
    """``get_recorder_status_for_devices`` → {master ID: {channel ID: recording}}.

    Accepts ``{devices: {id: {Channels: {"1": {RecordingStatus}}}}}``, the lower-case variant
    (``channels``/``recording_status``), and a list of ``{device_id, channels}``.

    Raises:
        FleetShapeError: none of those shapes.
    """
    devices = result.get("devices") if isinstance(result, Mapping) else None
    if isinstance(devices, Mapping):
        pairs = [(str(k), v) for k, v in devices.items() if isinstance(v, Mapping)]
    elif isinstance(devices, list):
        pairs = [(_str(_get(d, "device_id", "Id", "id")), d) for d in _maps(devices)]
    else:
        raise FleetShapeError("get_recorder_status_for_devices", "expected 'devices' as a map or a list")
    out: dict[str, dict[str, bool | None]] = {}
    for device_id, item in pairs:
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

    Accepts ``{status: [{device_id, cpu_load_pct, cpu_temp_c, uptime_since}]}`` and the older
    ``{<id>: {cpu_load, cpu_temp_c, up_since}}`` (optionally under ``status``). ``status: null``
    (schema drift) reads as nothing known: an empty map.

    Raises:
        FleetShapeError: neither shape.
    """
    if not isinstance(result, Mapping):
        raise FleetShapeError("get_system_status_for_devices", "expected a map")
    body = result.get("status", result)
    if body is None:
        return {}  # a null where the schema says list: tolerated, nothing known
    pairs = _rows(body, "get_system_status_for_devices", "expected 'status' as a list or a map")
    return {
        device_id: SystemStatus(
            device_id=device_id,
            cpu_load_pct=_number(_get(s, "cpu_load_pct", "cpu_load")),
            cpu_temp_c=_number(_get(s, "cpu_temp_c", "cpu_temp")),
            up_since=parse_time(_get(s, "uptime_since", "up_since")),
        )
        for device_id, s in pairs
        if device_id
    }


def _rows(body: Any, tool: str, problem: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(device ID, row) pairs from a list of rows naming their device, or a map keyed by ID.

    Raises:
        FleetShapeError: `body` is neither (`problem` says what was expected).
    """
    if isinstance(body, list):
        return [(_str(_get(s, "device_id", "Id", "id")), s) for s in _maps(body)]
    if isinstance(body, Mapping):
        return [(str(k), v) for k, v in body.items() if isinstance(v, Mapping)]
    raise FleetShapeError(tool, problem)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def parse_events(result: Any) -> dict[str, Event | None]:
    """``get_current_or_next_cms_events_for_devices`` → {master ID: Event or None}.

    A null or missing ``event`` means nothing scheduled. The end field is ``finish``. A device
    missing from the answer is unknown (absent from the map), and ``events: null`` (schema
    drift) makes every device unknown.

    Raises:
        FleetShapeError: no ``events`` key, or not a list, or an event without an ID.
    """
    if isinstance(result, Mapping) and "events" in result and result["events"] is None:
        return {}
    if not isinstance(result, Mapping) or not isinstance(result.get("events"), list):
        raise FleetShapeError(
            "get_current_or_next_cms_events_for_devices", "expected a map with an 'events' list"
        )
    out: dict[str, Event | None] = {}
    for item in _maps(result["events"]):
        device_id = _str(_get(item, "device_id"))
        if not device_id:
            continue
        out[device_id] = parse_event(item.get("event"))
    return out


def parse_event(event: Any) -> Event | None:
    """One event map (the ``event`` of a current-or-next answer) → Event, or None for null.

    Raises:
        FleetShapeError: an event map without an ID.
    """
    if not isinstance(event, Mapping):
        return None
    event_id = _get(event, "id", "Id")
    if event_id in (None, ""):
        raise FleetShapeError("get_current_or_next_cms_event", "an event has no ID")
    return Event(
        id=str(event_id),
        title=_str(_get(event, "title")),
        cms=_str(_get(event, "cms")),
        status=_str(_get(event, "status")),
        confirmed=bool(_get(event, "confirmed", default=False)),
        start=parse_time(_get(event, "start")),
        finish=parse_time(_get(event, "finish")),
    )


def parse_stream_endpoints(
    result: Any, *, digest: Callable[[Mapping[str, Any]], str] | None = None
) -> tuple[StreamEndpoint, ...]:
    """``get_stream_endpoints`` → endpoints with ID, name and URL host only.

    The list may sit under ``stream_endpoints``, ``endpoints``, ``streams`` or ``items`` (or be
    the result itself). The real result carries the stream key: it is dropped here. With
    `digest` (given the unredacted entry), each endpoint carries ``digest(entry)`` as its
    ``secret_digest``.

    Raises:
        FleetShapeError: no list found, or an entry without an ID (the whole read fails).
    """
    items = result
    if isinstance(result, Mapping):
        items = next(
            (result[k] for k in ("stream_endpoints", "endpoints", "streams", "items") if k in result), None
        )
    if not isinstance(items, list):
        raise FleetShapeError("get_stream_endpoints", "expected a list of endpoints")
    out = []
    for item in items:
        if not isinstance(item, Mapping) or _get(item, "id", "Id") in (None, ""):
            raise FleetShapeError("get_stream_endpoints", "an endpoint has no ID")
        url = _get(item, "url", "Url")
        out.append(
            StreamEndpoint(
                id=str(_get(item, "id", "Id")),
                name=_str(_get(item, "name", "Name")),
                host=url_host(url) if isinstance(url, str) else None,
                secret_digest=digest(item) if digest is not None else None,
            )
        )
    return tuple(out)


def merge_recorder(
    devices: tuple[Device, ...], recorder: Mapping[str, Mapping[str, bool | None]]
) -> tuple[Device, ...]:
    """Devices with each channel's ``recording`` taken from the recorder status where it says."""
    merged = []
    for device in devices:
        states = recorder.get(device.id, {})
        channels = tuple(
            msgspec.structs.replace(
                c,
                recording=states[c.channel_id],
                recording_since=c.recording_since if states[c.channel_id] else None,
            )
            if states.get(c.channel_id) is not None
            else c
            for c in device.channels
        )
        merged.append(msgspec.structs.replace(device, channels=channels))
    return tuple(merged)


class StorageStatus(msgspec.Struct, frozen=True):
    """A device's storage: ``state`` ``ok``, ``low``, ``critical`` or ``missing`` (no storage
    detected; "" when not said), free and total bytes (None when not said)."""

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

    Accepts a list of ``{device_id, state, free, total}`` under ``storage`` (or ``devices``,
    ``status``) and a map keyed by device ID. EPIPHAN.md gives no shape for this tool: the lab's
    is the list; a state missing from a row is left "" (free and total still say).

    Raises:
        FleetShapeError: neither shape.
    """
    body = result
    if isinstance(result, Mapping):
        body = next((result[k] for k in ("storage", "devices", "status") if k in result), result)
    pairs = _rows(body, "get_storage_status_for_devices", "expected a list or a map of devices")
    return {
        device_id: StorageStatus(
            device_id=device_id,
            state=_str(_get(s, "state", "State")).lower(),
            free=_bytes(_get(s, "free", "free_bytes", "Free")),
            total=_bytes(_get(s, "total", "total_bytes", "Total")),
        )
        for device_id, s in pairs
        if device_id
    }


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
