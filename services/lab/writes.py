"""The 15 write tools. Each takes a `Call` and returns the write result map: target ID ->
error string, ``{}`` when every target worked (Epiphan's shape). The target is the device
(master) ID, except the channel ID for ``batch_recording`` and the event or stream endpoint
ID for the tools that act on those. A target outside the caller's team gets
``device not found`` (or ``event not found``...) and nothing changes for it. An EC20 (a camera)
asked to record, stream, hold an event, switch CMS or take a preset gets `NOT_ON_CAMERA`
(`shared.epiphan.fleet.model_can`).
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType

from services.lab.calls import BadArguments, Call, parse_utc
from services.lab.state import Device, Event, EventChannel, StreamEndpoint
from shared.epiphan.fleet import model_can

WriteResult = dict[str, str]
NOT_FOUND = "device not found"
NOT_ON_CAMERA = "not supported on EC20"
"""The per-target error of a write an EC20 cannot take (the live wording is not known)."""


def _unable(device: Device | None, tool: str) -> str | None:
    """`NOT_FOUND` for no device, `NOT_ON_CAMERA` when its model cannot take `tool`, else None."""
    if device is None:
        return NOT_FOUND
    return None if model_can(device.model, tool) else NOT_ON_CAMERA


def _per_device(call: Call, act: Callable[..., str | None], *extra: object) -> WriteResult:
    errors: WriteResult = {}
    for device_id in call.args["device_ids"]:
        device = call.world.team_device(call.team, device_id, call.now)
        error = NOT_FOUND if device is None else act(device, *extra, call.now)
        if error:
            errors[device_id] = error
    return errors


def batch_recording(call: Call) -> WriteResult:
    recording = call.args["action"] == "start"
    errors: WriteResult = {}
    for channel_id in call.args["device_ids"]:
        master, number = channel_id.rsplit("-", 1)
        device = call.world.team_device(call.team, master, call.now)
        error = _unable(device, "batch_recording") or call.world.set_recording(
            device, number, recording, call.now
        )
        if error:
            errors[channel_id] = error
    return errors


def _stream(call: Call, started: bool) -> WriteResult:
    device_id = call.args["device_id"]
    device = call.world.team_device(call.team, device_id, call.now)
    unable = _unable(device, "start_stream_endpoint" if started else "stop_stream_endpoint")
    if unable or device is None:
        return {device_id: unable or NOT_FOUND}
    endpoint = call.world.teams[call.team].endpoints.get(call.args["stream_id"])
    if endpoint is None:
        return {device_id: "stream endpoint not found"}
    error = call.world.set_stream(device, call.args["channel_id"], endpoint, started, call.now)
    return {device_id: error} if error else {}


def start_stream_endpoint(call: Call) -> WriteResult:
    return _stream(call, True)


def stop_stream_endpoint(call: Call) -> WriteResult:
    return _stream(call, False)


def create_cms_event(call: Call) -> WriteResult:
    start, finish = parse_utc(call.args["start"]), parse_utc(call.args["finish"])
    if finish <= start:
        raise BadArguments("finish must be after start")
    device_id = call.args["device_id"]
    device = call.world.team_device(call.team, device_id, call.now)
    unable = _unable(device, "create_cms_event")
    if unable or device is None:
        return {device_id: unable or NOT_FOUND}
    channels = call.args.get("channels") or [{"channel_id": "1"}]
    if any(device.channel(c["channel_id"]) is None for c in channels):
        return {device_id: "channel not found"}
    event_id = f"{secrets.token_hex(4)}:{int(start.timestamp())}"
    call.world.events[event_id] = Event(
        id=event_id,
        title=call.args["title"],
        cms="epiphan",
        device_id=device.id,
        start=start,
        finish=finish,
        confirmed=False,
        channels=[
            EventChannel(c["channel_id"], c.get("recording", True), c.get("streaming", False))
            for c in channels
        ],
    )
    return {}


def update_cms_event(call: Call) -> WriteResult:
    start = parse_utc(call.args["start"]) if "start" in call.args else None
    finish = parse_utc(call.args["finish"]) if "finish" in call.args else None
    event_id = call.args["event_id"]
    event = call.world.team_event(call.team, event_id)
    if event is None:
        return {event_id: "event not found"}
    if (finish or event.finish) <= (start or event.start):
        return {event_id: "finish must be after start"}
    event.start, event.finish = start or event.start, finish or event.finish
    event.title = call.args.get("title", event.title)
    return {}


def delete_cms_event(call: Call) -> WriteResult:
    event_id = call.args["event_id"]
    if call.world.team_event(call.team, event_id) is None:
        return {event_id: "event not found"}
    del call.world.events[event_id]
    return {}


def cms_event_action(call: Call) -> WriteResult:
    event_id, action, now = call.args["event_id"], call.args["action"], call.now
    event = call.world.team_event(call.team, event_id)
    if event is None:
        return {event_id: "event not found"}
    status = event.status(now)
    if status == "completed":
        return {event_id: "event has finished"}
    if action == "start":
        event.start, event.paused = min(event.start, now), False
    elif action == "extend":
        event.finish += timedelta(minutes=call.args.get("minutes", 15))
    elif status == "scheduled":
        return {event_id: "event is not in progress"}
    elif action == "stop":
        event.finish = now
    elif action == "pause":
        event.paused = True
    elif not event.paused:
        return {event_id: "event is not paused"}
    else:
        event.paused = False
    return {}


def confirm_cms_event_on_device(call: Call) -> WriteResult:
    device_id = call.args["device_id"]
    unable = _unable(call.world.team_device(call.team, device_id, call.now), "confirm_cms_event_on_device")
    if unable:
        return {device_id: unable}
    event = call.world.team_event(call.team, call.args["event_id"])
    if event is None or event.device_id != device_id:
        return {device_id: "event not found on this device"}
    event.confirmed = True
    return {}


def create_stream_endpoint(call: Call) -> WriteResult:
    endpoint_id = str(uuid.uuid4())
    args = call.args
    endpoint = StreamEndpoint(endpoint_id, args["name"], args["type"], args["url"], args.get("key"))
    call.world.teams[call.team].endpoints[endpoint_id] = endpoint
    return {}


def update_stream_endpoint(call: Call) -> WriteResult:
    endpoint_id = call.args["endpoint_id"]
    endpoint = call.world.teams[call.team].endpoints.get(endpoint_id)
    if endpoint is None:
        return {endpoint_id: "stream endpoint not found"}
    endpoint.name = call.args.get("name", endpoint.name)
    endpoint.url = call.args.get("url", endpoint.url)
    endpoint.key = call.args.get("key", endpoint.key)
    return {}


def delete_stream_endpoint(call: Call) -> WriteResult:
    endpoint_id = call.args["endpoint_id"]
    if call.world.teams[call.team].endpoints.pop(endpoint_id, None) is None:
        return {endpoint_id: "stream endpoint not found"}
    call.world.stop_endpoint_everywhere(endpoint_id, call.now)
    return {}


def apply_team_preset(call: Call) -> WriteResult:
    preset = call.world.teams[call.team].presets.get(call.args["preset_id"])
    if preset is None:
        return dict.fromkeys(call.args["device_ids"], "preset not found")

    def take(device: Device, now: datetime) -> str | None:
        return _unable(device, "apply_team_preset") or call.world.apply_preset(device, preset, now)

    return _per_device(call, take)


def switch_device_to_cms(call: Call) -> WriteResult:
    device_id = call.args["device_id"]
    device = call.world.team_device(call.team, device_id, call.now)
    unable = _unable(device, "switch_device_to_cms")
    if unable or device is None:
        return {device_id: unable or NOT_FOUND}
    if not device.online:
        return {device_id: "device offline"}
    device.cms = call.args["cms"]
    return {}


def batch_reboot(call: Call) -> WriteResult:
    return _per_device(call, call.world.reboot)


def batch_firmware_update(call: Call) -> WriteResult:
    return _per_device(call, call.world.update_firmware)


WRITE_HANDLERS: Mapping[str, Callable[[Call], WriteResult]] = MappingProxyType(
    {
        fn.__name__: fn
        for fn in (
            batch_recording,
            start_stream_endpoint,
            stop_stream_endpoint,
            create_cms_event,
            update_cms_event,
            delete_cms_event,
            cms_event_action,
            confirm_cms_event_on_device,
            create_stream_endpoint,
            update_stream_endpoint,
            delete_stream_endpoint,
            apply_team_preset,
            switch_device_to_cms,
            batch_reboot,
            batch_firmware_update,
        )
    }
)
