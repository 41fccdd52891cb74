"""The 20 read tools. Each takes a `Call` and returns the result object (or an `Image`).

Single-device reads answer ``Device not found`` (an error result) for a device outside the
caller's team, exactly as for a device that does not exist; multi-device reads leave such
devices out. Nothing here changes the world.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Mapping
from types import MappingProxyType

from services.lab.calls import Call, Image, ToolFailure, parse_utc
from services.lab.shapes import (
    Json,
    current_or_next_events,
    device_entry,
    event_entry,
    recorder_status,
    stream_endpoint_entry,
    stream_endpoints,
    system_status,
)
from services.lab.shapes import storage_status as storage_shape
from services.lab.state import Device

_KB: tuple[tuple[str, str, str], ...] = (
    (
        "pearl-firmware-update",
        "Updating Pearl firmware",
        "Firmware updates take about five minutes and reboot the device. Do not update during "
        "a scheduled event; recording and streaming stop while the update installs.",
    ),
    (
        "no-signal-troubleshooting",
        "Troubleshooting a channel with no signal",
        "A dark channel usually means the source lost its signal: check the cable, the camera "
        "power, and the input's resolution. The channel warning channel_no_signal names it.",
    ),
    (
        "disk-space",
        "Managing storage and disk space warnings",
        "When free space falls below ten percent Pearl raises disk_space_error. Offload or "
        "delete recordings, or enable automatic file upload with delete after upload.",
    ),
    (
        "cms-scheduling",
        "Scheduling recordings with Panopto, Kaltura and YuJa",
        "Events scheduled in the CMS appear on the device; an unconfirmed event has not yet "
        "been acknowledged by the device. Keep the device online before the event starts.",
    ),
    (
        "rtmp-streaming",
        "Streaming to an RTMP or SRT destination",
        "A stream endpoint holds the destination URL and the stream key. Keep stream keys "
        "secret; anyone with the key can publish to your channel.",
    ),
    (
        "grabacion-programada",
        "Grabación programada con Pearl",
        "Los eventos programados inician la grabación a la hora indicada. Revise que el "
        "codificador esté en línea y con señal antes de la clase.",
    ),
)


def get_devices_in_my_team(call: Call) -> Json:
    result: Json = {"devices": [device_entry(d) for d in call.world.team_devices(call.team, call.now)]}
    if call.expose_team_id:
        result = {"team_id": call.world.teams[call.team].team_id, **result}
    return result


def get_device_info(call: Call) -> Json:
    return device_entry(call.device())


def get_device_sources(call: Call) -> Json:
    device = call.device()
    return {
        "device_id": device.id,
        "sources": [
            {
                "id": s.name.lower(),
                "name": s.name,
                "type": s.kind,
                "signal": s.signal,
                "resolution": s.resolution if s.signal else None,
            }
            for s in device.sources
        ],
    }


def get_system_status_for_devices(call: Call) -> Json:
    return system_status(call.devices(), call.shape("get_system_status_for_devices"))


def get_recorder_status_for_devices(call: Call) -> Json:
    return recorder_status(call.devices(), call.shape("get_recorder_status_for_devices"))


def get_storage_status_for_devices(call: Call) -> Json:
    return storage_shape(call.devices(), call.shape("get_storage_status_for_devices"))


def _channel(call: Call) -> tuple[Device, str, str | None]:
    device = call.device()
    channel = device.channel(call.args["channel_id"])
    if channel is None:
        raise ToolFailure(f"Channel not found: {device.id}-{call.args['channel_id']}")
    return device, channel.name, channel.source


def get_channel_settings(call: Call) -> Json:
    device, name, source = _channel(call)
    small = device.model in ("Pearl Nano", "EC20")
    return {
        "device_id": device.id,
        "channel_id": call.args["channel_id"],
        "name": name,
        "source": source,
        "encoding": {
            "video_codec": "H.264",
            "resolution": "1920x1080",
            "frame_rate": 30,
            "video_bitrate_kbps": 6000 if small else 8000,
            "audio_codec": "AAC",
            "audio_bitrate_kbps": 128,
        },
    }


def get_channel_image(call: Call) -> Image:
    device, _name, source = _channel(call)
    if not device.online:
        raise ToolFailure(f"Device is offline: {device.id}")
    dark = source is None or not device.source_signal(source)
    return Image(_png(32, 18, (0, 0, 0) if dark else (92, 118, 140)))


def get_channel_audio_levels(call: Call) -> Json:
    device, _name, source = _channel(call)
    if not device.online:
        raise ToolFailure(f"Device is offline: {device.id}")
    silent = source is None or not device.source_signal(source)
    level = -90.0 if silent else -18.0
    return {
        "device_id": device.id,
        "channel_id": call.args["channel_id"],
        "levels": [
            {"name": "left", "peak_db": level + 6, "rms_db": level},
            {"name": "right", "peak_db": level + 5, "rms_db": level - 1},
        ],
        "silent": silent,
    }


def get_stream_endpoint(call: Call) -> Json:
    endpoint = call.world.teams[call.team].endpoints.get(call.args["endpoint_id"])
    if endpoint is None:
        raise ToolFailure(f"Stream endpoint not found: {call.args['endpoint_id']}")
    return stream_endpoint_entry(endpoint, call.world)


def get_stream_endpoints(call: Call) -> Json:
    return stream_endpoints(call.world, call.team, call.shape("get_stream_endpoints"))


def get_team_presets(call: Call) -> Json:
    presets = call.world.teams[call.team].presets.values()
    return {"presets": [{"id": p.id, "name": p.name, "description": p.description} for p in presets]}


def _list_times(call: Call) -> str:
    return "s" if call.older_shapes else "iso"


def _next_times(call: Call) -> str:
    return "ms" if call.older_shapes else "iso"


def get_cms_events_for_device(call: Call) -> Json:
    device = call.device()
    events = call.world.device_events(device.id)
    return {"device_id": device.id, "events": [event_entry(e, call.now, _list_times(call)) for e in events]}


def get_cms_events_for_devices(call: Call) -> Json:
    return {
        "events": [
            {
                "device_id": d.id,
                "events": [
                    event_entry(e, call.now, _list_times(call)) for e in call.world.device_events(d.id)
                ],
            }
            for d in call.devices()
        ]
    }


def get_current_or_next_cms_event_for_device(call: Call) -> Json:
    device = call.device()
    event = call.world.current_or_next_event(device.id, call.now, None)
    return {
        "device_id": device.id,
        "event": event_entry(event, call.now, _next_times(call)) if event else None,
    }


def get_current_or_next_cms_events_for_devices(call: Call) -> Json:
    until = parse_utc(call.args["until"])
    rows = []
    for device in call.devices():
        event = call.world.current_or_next_event(device.id, call.now, until)
        rows.append((device.id, event_entry(event, call.now, _next_times(call)) if event else None))
    return current_or_next_events(rows, call.shape("get_current_or_next_cms_events_for_devices"))


def get_cms_names_for_devices(call: Call) -> Json:
    return {"devices": [{"device_id": d.id, "cms": d.cms} for d in call.devices()]}


def get_devices_by_cms(call: Call) -> Json:
    cms = call.args["cms"].lower()
    devices = [d for d in call.world.team_devices(call.team, call.now) if d.cms == cms]
    return {"cms": cms, "devices": [{"device_id": d.id, "name": d.name} for d in devices]}


KB_WEAK_RESULTS = 2
"""How many articles a search no article matches still returns, flagged ``low_confidence``."""


def kb_search(call: Call) -> Json:
    """Articles whose title or text holds a word of the query. A query no article matches gets
    the first `KB_WEAK_RESULTS` articles all the same with ``low_confidence: true``, as the live
    server does when Epiphan's documents do not cover the question (EPIPHAN.md)."""
    words = [w for w in call.args["query"].lower().split() if len(w) > 2]
    hits = [a for a in _KB if any(w in f"{a[1]} {a[2]}".lower() for w in words)]
    low_confidence = not hits
    if low_confidence:
        hits = list(_KB[:KB_WEAK_RESULTS])
    return {
        "low_confidence": low_confidence,
        "results": [
            {
                "id": a[0],
                "title": a[1],
                "snippet": a[2][:120],
                "url": f"https://kb.example.com/articles/{a[0]}",
            }
            for a in hits
        ],
    }


def kb_fetch(call: Call) -> Json:
    for article_id, title, content in _KB:
        if article_id == call.args["id"]:
            return {
                "id": article_id,
                "title": title,
                "content": content,
                "url": f"https://kb.example.com/articles/{article_id}",
            }
    raise ToolFailure(f"Article not found: {call.args['id']}")


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour RGB PNG (the channel's picture; black when the channel is dark)."""
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


READ_HANDLERS: Mapping[str, Callable[[Call], Json | Image]] = MappingProxyType(
    {
        fn.__name__: fn
        for fn in (
            get_devices_in_my_team,
            get_device_info,
            get_device_sources,
            get_system_status_for_devices,
            get_recorder_status_for_devices,
            get_storage_status_for_devices,
            get_channel_settings,
            get_channel_image,
            get_channel_audio_levels,
            get_stream_endpoint,
            get_stream_endpoints,
            get_team_presets,
            get_cms_events_for_device,
            get_cms_events_for_devices,
            get_current_or_next_cms_event_for_device,
            get_current_or_next_cms_events_for_devices,
            get_cms_names_for_devices,
            get_devices_by_cms,
            kb_search,
            kb_fetch,
        )
    }
)
