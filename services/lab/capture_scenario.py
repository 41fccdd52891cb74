"""A capture folder (``fleetwatch capture``, `shared.epiphan.capture`) as the lab's starting world, so
the whole product runs on a real team's answers with no account.

The captured team becomes the ``normal`` team (and a second capture, ``--capture-sandbox``, the
``sandbox`` team; without one the base scenario's sandbox stays). Every time is kept relative to
the capture's ``captured_at``, so the lab's clock shifts them: a room offline for three hours
at the capture is offline for three hours when the lab starts (to the second, and exactly when
the lab's clock starts at ``captured_at``). What the parsers read is kept as it was: names,
models, firmware, status, channels and their recording (an offline device's stale state too),
publishers (with their settings: URL, stream, user name, password, SRT stream ID and
passphrase), warnings as given, CPU, temperature and uptime, storage bytes and state, events
with their channels, CMS, stream destinations and presets; IP addresses, serial numbers and
keys are the capture's placeholders.

Each tool is answered in the named shape its capture had (`shared.epiphan.fleet_shapes`); a tool whose
captured answer had no known shape is answered with that answer as it was, so the product's
reaction to it can be tried. What the lab's world cannot hold (a preset or destination whose ID
is not a UUID, an event with no start) is left out and listed in `Replay.notes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from services.lab.scenario import (
    UUID_LIKE,
    ChannelSpec,
    DeviceSpec,
    EventChannelSpec,
    EventSpec,
    GroupSpec,
    OptionsSpec,
    PresetSpec,
    PublisherSpec,
    Scenario,
    SourceSpec,
    StorageSpec,
    StreamEndpointSpec,
    TeamSpec,
    TeamsSpec,
    check_scenario,
)
from services.lab.shapes import SERVED_SHAPES
from shared.epiphan.attention import newest_firmware_by_model
from shared.epiphan.capture import Capture, CaptureError, read_capture
from shared.epiphan.fleet import (
    DEVICES,
    EVENTS,
    PARSERS,
    STORAGE,
    SYSTEM,
    Device,
    FleetShapeError,
    parse_devices,
    parse_event,
    parse_storage_status,
    parse_system_status,
    parse_time,
)
from shared.errors import Code

_GB = 1e9
_CHANNEL = re.compile(r"^[1-9][0-9]{0,2}$")


@dataclass(frozen=True)
class Replay:
    """A capture made ready for the lab: the scenario, the shapes to answer in, the answers to
    give as they were (team → tool → data), when the capture was made, and what was left out."""

    scenario: Scenario
    captured_at: datetime
    verbatim: Mapping[str, Mapping[str, Any]]
    notes: tuple[str, ...] = ()


def _readable(capture: Capture, tool: str) -> list[Any]:
    """The answers of `tool` in a known shape that Fleetwatch reads without a problem."""
    return [data for call, data in capture.answers(tool) if call.shape is not None and call.problem is None]


def _merged(capture: Capture, tool: str, parser: Any) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for data in _readable(capture, tool):
        try:
            merged.update(parser(data))
        except FleetShapeError:
            continue
    return merged


def _minutes_before(at: datetime, when: datetime | None) -> float | None:
    return None if when is None else (at - when).total_seconds() / 60


def _maps(items: Any) -> list[Mapping[str, Any]]:
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def _text(item: Mapping[str, Any], *keys: str) -> str:
    return next((str(item[k]) for k in keys if item.get(k) is not None), "")


def _setting(settings: Mapping[str, Any], *ids: str) -> str | None:
    """The value of the first of `ids` a publisher's settings (by lower-cased ``id``) hold, as
    text; None when none does (a capture keeps every setting's shape, its secrets as
    placeholders)."""
    return next((str(settings[i]) for i in ids if settings.get(i) is not None), None)


class _Builder:
    """One team's specs from one capture."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.at = capture.manifest.captured
        self.minute = self.at.replace(second=0, microsecond=0)
        self.notes: list[str] = []
        self.parsed: tuple[Device, ...] = ()

    def team(self) -> tuple[TeamSpec, bool]:
        """The team, and whether the capture saw a team ID."""
        listed = _readable(self.capture, DEVICES)
        if not listed:
            raise CaptureError(
                Code.CAPTURE_INVALID, f"{self.capture.folder}: no device list in a shape Fleetwatch reads"
            )
        team_id, parsed = parse_devices(listed[0])
        self.parsed = parsed
        raw = _maps(listed[0].get("devices"))
        endpoints = self.endpoints()
        devices = [self.device(item, {e.id for e in endpoints}) for item in raw]
        groups: list[GroupSpec] = []
        for item, device in zip(raw, devices, strict=True):
            key = (_text(item, "GroupId", "group_id"), _text(item, "GroupName", "group_name"))
            if groups and (groups[-1].id, groups[-1].name) == key:
                groups[-1] = GroupSpec(id=key[0], name=key[1], devices=(*groups[-1].devices, device))
            else:
                groups.append(GroupSpec(id=key[0], name=key[1], devices=(device,)))
        spec = TeamSpec(
            team_id=team_id or "00000000-0000-4000-8000-000000000000",
            groups=tuple(groups),
            stream_endpoints=endpoints,
            presets=self.presets(),
            events=tuple(self.events({d.id: {c.id for c in d.channels} for d in devices})),
        )
        return spec, team_id is not None

    def device(self, item: Mapping[str, Any], endpoint_ids: set[str]) -> DeviceSpec:
        device_id = _text(item, "Id", "id", "device_id")
        online = _text(item, "Status", "status").lower() == "online"
        system = self.system.get(device_id)
        state = _minutes_before(self.at, parse_time(item.get("StateTime") or item.get("state_time")))
        uptime = _minutes_before(self.at, system.up_since if system is not None else None)
        warnings = item.get("Warnings", item.get("warnings"))
        return DeviceSpec(
            id=device_id,
            name=_text(item, "Name", "name"),
            model=_text(item, "Model", "model"),
            firmware=_text(item, "Firmware", "firmware"),
            serial=_text(item, "SerialNumber", "serial_number"),
            ip=_text(item, "IPAddress", "ip_address"),
            status="online" if online else "offline",
            state_minutes_ago=state if state is not None else 0.0,
            uptime_minutes=uptime,
            cpu_load_pct=system.cpu_load_pct if system is not None else None,
            cpu_temp_c=system.cpu_temp_c if system is not None else None,
            cms=self.cms.get(device_id, "epiphan"),
            storage=self.storage_of(device_id),
            sources=self.sources.get(device_id, (SourceSpec(name="HDMI-A"),)),
            channels=tuple(
                self.channel(c, endpoint_ids) for c in _maps(item.get("Channels", item.get("channels")))
            ),
            warnings=tuple(dict(w) for w in _maps(warnings)),
        )

    def channel(self, item: Mapping[str, Any], endpoint_ids: set[str]) -> ChannelSpec:
        status = item.get("recording_status") or item.get("RecordingStatus")
        status = status if isinstance(status, Mapping) else {}
        recording = str(status.get("state", "")).lower() == "recording"
        since = _minutes_before(self.at, parse_time(status.get("timestamp")))
        warnings = _maps(item.get("Warnings", item.get("warnings")))
        return ChannelSpec(
            id=_text(item, "channel_id", "id", "Id"),
            name=_text(item, "name", "Name"),
            recording=recording,
            recording_minutes_ago=since if since is not None and recording else 20.0,
            publishers=tuple(
                self.publisher(p, endpoint_ids) for p in _maps(item.get("Publishers", item.get("publishers")))
            ),
            warnings=tuple(dict(w) for w in warnings),
        )

    def publisher(self, item: Mapping[str, Any], endpoint_ids: set[str]) -> PublisherSpec:
        status = item.get("status") if isinstance(item.get("status"), Mapping) else {}
        since = _minutes_before(self.at, parse_time(status.get("since")))
        settings = {_text(s, "id").lower(): s.get("value") for s in _maps(item.get("settings"))}
        publisher_id = _text(item, "id")
        return PublisherSpec(
            id=publisher_id,
            type=_text(item, "type") or "rtmp",
            started=str(status.get("state", "")).lower() == "started",
            started_minutes_ago=since if since is not None else 30.0,
            endpoint=publisher_id if publisher_id in endpoint_ids else None,
            url=_setting(settings, "url"),
            key=_setting(settings, "stream", "stream_key", "key"),
            username=_setting(settings, "username", "user"),
            password=_setting(settings, "password"),
            streamid=_setting(settings, "streamid"),
            passphrase=_setting(settings, "passphrase"),
        )

    # --- per-device reads --------------------------------------------------------------------

    @cached_property
    def system(self) -> dict[str, Any]:
        return _merged(self.capture, SYSTEM, parse_system_status)

    @cached_property
    def cms(self) -> dict[str, str]:
        names: dict[str, str] = {}
        for data in _readable(self.capture, "get_cms_names_for_devices"):
            names.update({_text(r, "device_id"): _text(r, "cms") for r in _maps(data.get("devices"))})
        return names

    @cached_property
    def sources(self) -> dict[str, tuple[SourceSpec, ...]]:
        found: dict[str, tuple[SourceSpec, ...]] = {}
        for data in _readable(self.capture, "get_device_sources"):
            rows = [
                SourceSpec(
                    name=_text(s, "name"),
                    kind=_text(s, "type") or "hdmi",
                    signal=s.get("signal") is not False,
                    resolution=_text(s, "resolution") or "1920x1080",
                )
                for s in _maps(data.get("sources"))
            ]
            if rows:
                found[_text(data, "device_id")] = tuple(rows)
        return found

    @cached_property
    def storage(self) -> dict[str, Any]:
        return _merged(self.capture, STORAGE, parse_storage_status)

    def storage_of(self, device_id: str) -> StorageSpec | None:
        storage = self.storage.get(device_id)
        if storage is None or storage.state == "unknown":  # unknown (an offline device's ""): not none
            return StorageSpec()
        if storage.state == "missing" or storage.free is None or not storage.total:
            return None
        return StorageSpec(
            total_gb=storage.total / _GB, free_gb=storage.free / _GB, state=storage.state or None
        )

    def events(self, channels: Mapping[str, set[str]]) -> Iterable[EventSpec]:
        """Every event read: all of each device's events, and the current or next ones."""
        raw: dict[str, tuple[str, Mapping[str, Any]]] = {}
        for data in _readable(self.capture, "get_cms_events_for_devices"):
            for row in _maps(data.get("events")):
                for event in _maps(row.get("events")):
                    raw.setdefault(_text(event, "id"), (_text(row, "device_id"), event))
        for data in _readable(self.capture, EVENTS):
            rows = (
                data["events"]
                if "events" in data
                else [{"device_id": k, **v} for k, v in data["devices"].items()]
            )
            for row in _maps(rows):
                event = row.get("event")
                if isinstance(event, Mapping):
                    raw.setdefault(_text(event, "id"), (_text(row, "device_id"), event))
        for device_id, event in raw.values():
            spec = self.event(device_id, event, channels.get(device_id))
            if spec is not None:
                yield spec

    def event(self, device_id: str, raw: Mapping[str, Any], channels: set[str] | None) -> EventSpec | None:
        """One event of `device_id` (whose channels are `channels`; None: not in the team)."""
        try:
            event = parse_event(raw)
        except FleetShapeError:
            event = None
        if event is None or event.start is None or channels is None:
            self.notes.append(f"an event of {device_id} without an ID, a start or a device was left out")
            return None
        finish = event.finish or event.start + timedelta(hours=1)
        on = [
            EventChannelSpec(
                channel_id=_text(c, "channel_id"),
                recording=c.get("recording") is not False,
                streaming=c.get("streaming") is True,
            )
            for d in _maps(raw.get("devices"))
            for c in _maps(d.get("channels"))
        ]
        return EventSpec(
            id=event.id,
            title=event.title,
            device=device_id,
            start_in_minutes=(event.start - self.minute).total_seconds() / 60,
            duration_minutes=max((finish - event.start).total_seconds() / 60, 1.0),
            cms=event.cms or "epiphan",
            confirmed=event.confirmed,
            channels=tuple(c for c in on if c.channel_id in channels and _CHANNEL.match(c.channel_id)),
        )

    def endpoints(self) -> tuple[StreamEndpointSpec, ...]:
        out = []
        for data in _readable(self.capture, "get_stream_endpoints")[:1]:
            items = data if isinstance(data, list) else next(v for v in data.values() if isinstance(v, list))
            for item in _maps(items):
                endpoint_id = _text(item, "id", "Id")
                if not UUID_LIKE.match(endpoint_id):
                    self.notes.append(
                        f"a stream destination whose ID is not a UUID was left out ({endpoint_id[:40]!r})"
                    )
                    continue
                out.append(
                    StreamEndpointSpec(
                        id=endpoint_id,
                        name=_text(item, "name", "Name"),
                        type=_text(item, "type") or "rtmp",
                        url=_text(item, "url", "Url"),
                        key=item.get("key") if isinstance(item.get("key"), str) else None,
                    )
                )
        return tuple(out)

    def presets(self) -> tuple[PresetSpec, ...]:
        out = []
        for data in _readable(self.capture, "get_team_presets")[:1]:
            for item in _maps(data.get("presets")):
                preset_id = _text(item, "id")
                if UUID_LIKE.match(preset_id):
                    out.append(
                        PresetSpec(
                            id=preset_id, name=_text(item, "name"), description=_text(item, "description")
                        )
                    )
                else:
                    self.notes.append(f"a preset whose ID is not a UUID was left out ({preset_id[:40]!r})")
        return tuple(out)


def captured_shapes(capture: Capture) -> dict[str, str]:
    """Tool → the named shape its captured answers had, when not the live one (``current``),
    for the tools the lab serves in more than one shape."""
    shapes: dict[str, str] = {}
    for call in capture.manifest.calls:
        if call.tool in SERVED_SHAPES and call.shape in SERVED_SHAPES[call.tool] and call.problem is None:
            shapes.setdefault(call.tool, call.shape)
    return {tool: shape for tool, shape in shapes.items() if shape != "current"}


def unreadable_answers(capture: Capture) -> dict[str, Any]:
    """Tool → the first captured answer Fleetwatch could not read (no known shape, or a row it
    cannot read), for the lab to give as it was."""
    out: dict[str, Any] = {}
    for call in capture.manifest.calls:
        if (
            call.seq in capture.data
            and (call.shape is None or call.problem is not None)
            and call.tool in PARSERS
        ):
            out.setdefault(call.tool, capture.data[call.seq])
    return out


def replay(normal: Path, base: Scenario, sandbox: Path | None = None) -> Replay:
    """The lab's scenario for the capture in `normal` (and `sandbox`, else `base`'s sandbox).

    Raises:
        CaptureError: a folder is not a readable capture, or has no device list Fleetwatch reads.
        services.lab.scenario.ScenarioError: the captured world breaks the lab's checks (e.g. a
            device in both teams).
    """
    captures = {"normal": read_capture(normal)}
    if sandbox is not None:
        captures["sandbox"] = read_capture(sandbox)
    teams = {"normal": base.teams.normal, "sandbox": base.teams.sandbox}
    notes: list[str] = []
    exposed = True
    latest: dict[str, str] = dict(base.firmware_latest)
    for name, capture in captures.items():
        builder = _Builder(capture)
        teams[name], seen = builder.team()
        exposed = exposed and seen
        notes += builder.notes
        latest.update(newest_firmware_by_model(builder.parsed))
    normal_capture = captures["normal"]
    scenario = Scenario(
        name=f"capture:{normal.name}",
        description=f"Replay of the capture in {normal.name}, taken {normal_capture.manifest.captured_at}.",
        teams=TeamsSpec(normal=teams["normal"], sandbox=teams["sandbox"]),
        options=OptionsSpec(expose_team_id=exposed, shapes=captured_shapes(normal_capture)),
        firmware_latest=latest,
    )
    checked = check_scenario(scenario, where=str(normal))
    verbatim = {name: unreadable_answers(capture) for name, capture in captures.items()}
    return Replay(checked, normal_capture.manifest.captured, verbatim, tuple(notes))
