"""The world rendered in the result shapes Epiphan's server sends (key names and casing as
``EPIPHAN.md`` gives them), the older shapes some versions send, and schema drift.

Times: ``StateTime`` is minute precision (``2026-09-16T20:36Z``); ``recording_status.timestamp``
and publisher ``since`` are epoch seconds as strings; event ``start``/``finish`` are ISO 8601
(``...Z``) in the current shapes, epoch seconds (event lists) or epoch milliseconds (current
or next event) in the older ones; ``uptime_since`` is RFC 3339. Sizes are bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

from services.lab.state import Device, Event, Publisher, StreamEndpoint, World

Json = dict[str, Any]


def iso_minute(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%MZ")


def iso_seconds(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_text(when: datetime) -> str:
    return str(int(when.timestamp()))


def _warning(wid: str, label: str, message: str, data: Json | None) -> Json:
    return {"id": wid, "label": label, "message": message, "data": data}


FIRMWARE_UPDATE_WARNING = "firmware_update_in_progress"
"""How the lab reports a firmware update that is installing. *Unconfirmed*: EPIPHAN.md does not
say how Epiphan reports one (open until the first live run); the watch also reads a ``Status``
other than online/offline as an update."""


def device_warnings(device: Device) -> list[Json]:
    """Device-level warnings derived from state: a firmware update installing (unconfirmed
    form, `FIRMWARE_UPDATE_WARNING`), storage and sources without signal (or, for a replayed
    capture, the ones it held)."""
    if device.warnings is not None:
        return [dict(w) for w in device.warnings]
    warnings: list[Json] = []
    if device.busy and device.online:
        warnings.append(
            _warning(
                FIRMWARE_UPDATE_WARNING,
                "Firmware update",
                f"Installing firmware {device.update_target}.",
                {"target": device.update_target},
            )
        )
    if device.storage_total is None or device.storage_free is None:
        warnings.append(
            _warning("no_storage_detected", "No storage detected", "Recordings cannot be saved.", None)
        )
    elif device.storage_free < device.storage_total // 10:
        state = "critical" if device.storage_free < device.storage_total // 50 else "low"
        pct = round(100 * device.storage_free / device.storage_total, 1)
        warnings.append(
            _warning(
                "disk_space_error",
                "Low disk space",
                f"Only {pct}% of storage is free.",
                {"free": device.storage_free, "total": device.storage_total, "state": state},
            )
        )
    used = {c.source for c in device.channels}
    for source in device.sources:
        if not source.signal and source.name in used:
            warnings.append(
                _warning(
                    "source_no_signal",
                    "No signal",
                    f"No signal on {source.name}.",
                    {"source_name": source.name},
                )
            )
    return warnings


def publisher_settings(publisher: Publisher) -> list[Json]:
    """A publisher's settings as a Pearl lists them, ``[{id, type: {name}, title, value}]``: the
    ``url``, then for SRT ``streamid`` and ``passphrase``, for the others ``stream`` (the stream
    name, which on a Pearl *is* the key), ``username`` and ``password``. A value not set is null."""
    p = publisher
    rows: list[tuple[str, str, str, str | None]] = [("url", "string", "URL", p.url)]
    if p.type == "srt":
        rows += [
            ("streamid", "string", "Stream ID", p.streamid),
            ("passphrase", "password", "Passphrase", p.passphrase),
        ]
    else:
        rows += [
            ("stream", "string", "Stream", p.key),
            ("username", "string", "Username", p.username),
            ("password", "password", "Password", p.password),
        ]
    return [
        {"id": i, "type": {"name": kind}, "title": title, "value": value} for i, kind, title, value in rows
    ]


def channel_entry(device: Device, channel_index: int) -> Json:
    channel = device.channels[channel_index]
    entry: Json = {
        "channel_id": channel.channel_id,
        "name": channel.name,
        "recording_status": {
            "state": "recording" if channel.recording else "stopped",
            "timestamp": epoch_text(channel.recording_since),
            "description": "Recording" if channel.recording else "Stopped",
        },
    }
    if channel.publishers:
        entry["Publishers"] = [
            {
                "id": p.id,
                "type": p.type,
                "status": {
                    "state": "started" if p.started else "stopped",
                    "started": p.started,
                    "since": epoch_text(p.since),
                    "description": "Streaming" if p.started else "Stopped",
                },
                "settings": publisher_settings(p),
            }
            for p in channel.publishers
        ]
    if channel.warnings is not None:
        if channel.warnings:
            entry["Warnings"] = [dict(w) for w in channel.warnings]
    elif not device.source_signal(channel.source):
        entry["Warnings"] = [
            _warning(
                "channel_no_signal",
                "No signal",
                f"{channel.name} has no video signal.",
                {"channel_name": channel.name},
            )
        ]
    return entry


def device_entry(device: Device) -> Json:
    """One device as ``get_devices_in_my_team`` lists it (and ``get_device_info`` returns it)."""
    return {
        "Id": device.id,
        "Name": device.name,
        "Model": device.model,
        "GroupId": device.group_id,
        "GroupName": device.group_name,
        "Firmware": device.firmware,
        "Status": "online" if device.online else "offline",
        "StateTime": iso_minute(device.state_time),
        "IPAddress": device.ip,
        "SerialNumber": device.serial,
        "Channels": [channel_entry(device, i) for i in range(len(device.channels))],
        "Warnings": device_warnings(device),
    }


OLDER_SHAPES: Mapping[str, str] = MappingProxyType(
    {
        "get_recorder_status_for_devices": "device_list",
        "get_system_status_for_devices": "keyed_status",
        "get_stream_endpoints": "endpoints",
    }
)
"""The shapes ``--older-shapes`` serves (with epoch times for events)."""


def _recording(device: Device) -> list[Json]:
    return [channel_entry(device, i) for i in range(len(device.channels))]


def recorder_status(devices: list[Device], shape: str = "current") -> Json:
    """``current``: ``{devices: {<id>: {Name, Channels: {"<n>": {Name, RecordingStatus}}}}}``;
    ``lower_case``: the same with ``name``/``channels``/``recording_status``; ``device_list``:
    a list of ``{device_id, name, channels: {"<n>": {name, recording_status}}}``."""
    if shape == "device_list":
        return {
            "devices": [
                {
                    "device_id": d.id,
                    "name": d.name,
                    "channels": {
                        c["channel_id"]: {"name": c["name"], "recording_status": c["recording_status"]}
                        for c in _recording(d)
                    },
                }
                for d in devices
            ]
        }
    keys = (
        ("name", "channels", "recording_status")
        if shape == "lower_case"
        else ("Name", "Channels", "RecordingStatus")
    )
    name, channels, status = keys
    return {
        "devices": {
            d.id: {
                name: d.name,
                channels: {
                    c["channel_id"]: {name: c["name"], status: c["recording_status"]} for c in _recording(d)
                },
            }
            for d in devices
        }
    }


def system_status(devices: list[Device], shape: str = "current") -> Json:
    """``current``: ``{status: [{device_id, cpu_load_pct, cpu_temp_c, uptime_since}]}``; an
    offline device has nulls. Older, keyed by device ID with ``cpu_load``/``up_since``:
    ``keyed_status`` (under ``status``), ``keyed_devices`` (under ``devices``), ``keyed`` (at
    the top)."""

    def up(d: Device) -> str | None:
        return iso_seconds(d.up_since) if d.online and d.up_since else None

    def known(d: Device, value: float | None) -> float | None:
        return value if d.online else None

    if shape == "current":
        rows = [
            {
                "device_id": d.id,
                "cpu_load_pct": known(d, d.cpu_load_pct),
                "cpu_temp_c": known(d, d.cpu_temp_c),
                "uptime_since": up(d),
            }
            for d in devices
        ]
        return {"status": rows}
    keyed = {
        d.id: {"cpu_load": known(d, d.cpu_load_pct), "cpu_temp_c": known(d, d.cpu_temp_c), "up_since": up(d)}
        for d in devices
    }
    return {"keyed_status": {"status": keyed}, "keyed_devices": {"devices": keyed}}.get(shape, keyed)


def storage_state(device: Device) -> str:
    """``missing``, ``critical`` (under 2 %), ``low`` (under 10 %) or ``ok``; a scenario (or a
    capture) may say it outright."""
    if device.storage_state:
        return device.storage_state
    if device.storage_total is None or device.storage_free is None:
        return "missing"
    if device.storage_free < device.storage_total // 10:
        return "critical" if device.storage_free < device.storage_total // 50 else "low"
    return "ok"


def storage_status(devices: list[Device], shape: str = "current") -> Json:
    """``current``: ``{storage: [{device_id, state: ok|low|critical|missing, free, total}]}``
    (bytes); ``keyed``: ``{storage: {<id>: {state, free, total}}}``; ``keyed_top``: that map
    alone. An offline device says ``state: ""`` with zero sizes, as the live server does
    (EPIPHAN.md): storage unknown, not zero."""
    rows = [
        {"device_id": d.id, "state": storage_state(d), "free": d.storage_free, "total": d.storage_total}
        if d.online
        else {"device_id": d.id, "state": "", "free": 0, "total": 0}
        for d in devices
    ]
    if shape == "current":
        return {"storage": rows}
    keyed = {row.pop("device_id"): row for row in rows}
    return {"storage": keyed} if shape == "keyed" else keyed


def event_entry(event: Event, now: datetime, times: str) -> Json:
    """One CMS event; ``times`` is ``iso``, ``s`` (epoch seconds) or ``ms`` (epoch millis).

    ``status`` follows the clock: ``scheduled``, ``in_progress`` (``paused``), ``completed``.
    """

    def when(dt: datetime) -> str | int:
        if times == "s":
            return int(dt.timestamp())
        if times == "ms":
            return int(dt.timestamp() * 1000)
        return iso_seconds(dt)

    return {
        "id": event.id,
        "title": event.title,
        "cms": event.cms,
        "status": event.status(now),
        "confirmed": event.confirmed,
        "start": when(event.start),
        "finish": when(event.finish),
        "devices": [
            {
                "device_id": event.device_id,
                "channels": [
                    {"channel_id": c.channel_id, "recording": c.recording, "streaming": c.streaming}
                    for c in event.channels
                ],
            }
        ],
    }


def stream_endpoint_entry(endpoint: StreamEndpoint, world: World) -> Json:
    """A stream endpoint with its stream key and full URL, as the real server sends it, and
    ``LockByDevice`` (the device using it now, or null) and ``CurrentlyStreaming`` (bool), as
    the live server does (`World.endpoint_use`)."""
    locked_by, streaming = world.endpoint_use(endpoint.id)
    return {
        "id": endpoint.id,
        "name": endpoint.name,
        "type": endpoint.type,
        "url": endpoint.url,
        "key": endpoint.key,
        "LockByDevice": locked_by,
        "CurrentlyStreaming": streaming,
    }


def stream_endpoints(world: World, team: str, shape: str = "current") -> Json | list[Json]:
    """``current``: ``{stream_endpoints: [...]}``; ``endpoints``, ``streams``, ``items``: the
    list under that key; ``list``: the bare list."""
    items = [stream_endpoint_entry(e, world) for e in world.teams[team].endpoints.values()]
    if shape == "list":
        return items
    return {"stream_endpoints" if shape == "current" else shape: items}


def current_or_next_events(rows: list[tuple[str, Json | None]], shape: str = "current") -> Json:
    """``current``: ``{events: [{device_id, event}]}``; ``keyed_devices`` (older, issue 16):
    ``{devices: {<id>: {event: {id, title, start, end}}}}``."""
    if shape == "keyed_devices":
        return {
            "devices": {
                device_id: {
                    "event": None
                    if event is None
                    else {
                        "id": event["id"],
                        "title": event["title"],
                        "start": event["start"],
                        "end": event["finish"],
                    }
                }
                for device_id, event in rows
            }
        }
    return {"events": [{"device_id": device_id, "event": event} for device_id, event in rows]}


SERVED_SHAPES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "get_devices_in_my_team": frozenset({"current"}),
        "get_recorder_status_for_devices": frozenset({"current", "lower_case", "device_list"}),
        "get_system_status_for_devices": frozenset({"current", "keyed_status", "keyed_devices", "keyed"}),
        "get_storage_status_for_devices": frozenset({"current", "keyed", "keyed_top"}),
        "get_current_or_next_cms_events_for_devices": frozenset({"current", "keyed_devices"}),
        "get_stream_endpoints": frozenset({"current", "endpoints", "streams", "items", "list"}),
    }
)
"""The named shapes (`shared.epiphan.fleet_shapes`) the lab can serve, per tool (``--shape TOOL=NAME``);
every other tool has its one shape."""


# --- schema drift -----------------------------------------------------------------------------

_DEVICE_TOOLS = frozenset({"get_devices_in_my_team", "get_device_info"})


def drift(tool: str, result: Json) -> Json:
    """``result`` broken the way Epiphan's results break their declared output schema:
    device lists get ``Warnings[].data: null`` and a ``recording_status: null``; recorder
    status gets lower-case keys; anything else gets ``null`` for its top-level values (an
    empty write map becomes ``{"result": null}``)."""
    if tool in _DEVICE_TOOLS:
        devices = result.get("devices", [result])
        for device in devices:
            for warning in device.get("Warnings", []):
                warning["data"] = None
            for channel in device.get("Channels", [])[:1]:
                channel["recording_status"] = None
        return result
    if tool == "get_recorder_status_for_devices":
        return _lower_keys(result)
    if not result:
        return {"result": None}
    return dict.fromkeys(result)


def _lower_keys(value: Any) -> Any:
    if isinstance(value, dict):
        renamed = {"RecordingStatus": "recording_status"}
        return {renamed.get(k, k[:1].lower() + k[1:]): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value
