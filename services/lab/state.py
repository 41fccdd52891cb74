"""The simulated world: devices, channels, publishers, events, stream endpoints, presets.

The world is mutable on purpose (writes change it) but holds no clock: every operation takes
``now`` (UTC) and `World.settle` advances pending changes lazily: a reboot keeps a device
offline for `REBOOT_SECONDS`; a firmware update installs for `FIRMWARE_INSTALL_SECONDS`
(online), reboots for `FIRMWARE_REBOOT_SECONDS` (offline), then reports the new
``Firmware``. Recording never starts by itself: only writes (and the scenario) start it.

Controls are asynchronous, as on a live Pearl (EPIPHAN.md, "Facts from a live-verified peer"):
a recording or stream write is checked at once (its per-device error comes back at once) and
applied ``control_delay`` seconds of lab time later (`World.apply_due`; 0: at once). A stream
endpoint's ``LockByDevice`` and ``CurrentlyStreaming`` are not stored: `World.endpoint_use`
reads them from the publishers that are started, so they follow every start, stop, reboot
and firmware update. Operations return ``None`` when they worked or the error string the real server would put in
the write result map (``"device offline"``...).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from services.lab.scenario import TEAM_NAMES, DeviceSpec, EventSpec, Scenario, TeamSpec

REBOOT_SECONDS = 90
PRESET_SECONDS = 30
FIRMWARE_INSTALL_SECONDS = 240
FIRMWARE_REBOOT_SECONDS = 60
GB = 10**9


class LabClock:
    """The lab's clock: wall time plus an offset tests can move, or a frozen time.

    `now` returns an aware UTC datetime. `advance(seconds)` and `set(when)` move it;
    `restart()` returns to how it was made (used by a lab reset).
    """

    def __init__(self, start: datetime | None = None, *, frozen: bool = False, wall=time.time) -> None:
        if frozen and start is None:
            raise ValueError("a frozen clock needs a start time")
        if start is not None and start.tzinfo is None:
            raise ValueError("clock start must be timezone-aware (UTC)")
        self._wall = wall
        self._frozen = frozen
        self._start = start
        self._offset = 0.0
        self.restart()

    def restart(self) -> None:
        base = self._start.timestamp() if self._start is not None else self._wall()
        self._offset = base - (0.0 if self._frozen else self._wall())

    def now(self) -> datetime:
        seconds = self._offset + (0.0 if self._frozen else self._wall())
        return datetime.fromtimestamp(seconds, UTC)

    def advance(self, seconds: float) -> None:
        self._offset += seconds

    def set(self, when: datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("clock time must be timezone-aware (UTC)")
        self._offset += when.timestamp() - self.now().timestamp()


@dataclass
class Source:
    name: str
    kind: str
    signal: bool
    resolution: str


@dataclass
class Publisher:
    """A stream a channel sends; ``endpoint_id`` when started from a stream endpoint."""

    id: str
    type: str
    started: bool
    since: datetime
    url: str
    key: str | None
    endpoint_id: str | None = None
    username: str | None = None
    password: str | None = None
    streamid: str | None = None
    passphrase: str | None = None


@dataclass
class Channel:
    channel_id: str
    name: str
    source: str | None
    recording: bool
    recording_since: datetime
    publishers: list[Publisher] = field(default_factory=list)
    warnings: list[dict[str, Any]] | None = None


@dataclass
class Device:
    id: str
    team: str
    name: str
    model: str
    group_id: str
    group_name: str
    firmware: str
    serial: str
    ip: str
    online: bool
    state_time: datetime
    up_since: datetime | None
    cpu_load_pct: float | None
    cpu_temp_c: float | None
    cms: str
    storage_total: int | None
    storage_free: int | None
    sources: list[Source]
    channels: list[Channel]
    preset: str | None = None
    storage_state: str | None = None
    warnings: list[dict[str, Any]] | None = None
    offline_until: datetime | None = None
    update_started: datetime | None = None
    update_target: str | None = None

    def channel(self, channel_id: str) -> Channel | None:
        return next((c for c in self.channels if c.channel_id == channel_id), None)

    def source_signal(self, name: str | None) -> bool:
        return next((s.signal for s in self.sources if s.name == name), True)

    @property
    def busy(self) -> bool:
        return self.update_started is not None


@dataclass
class EventChannel:
    channel_id: str
    recording: bool
    streaming: bool


@dataclass
class Event:
    """A CMS event; its status follows the clock unless an action set ``paused``."""

    id: str
    title: str
    cms: str
    device_id: str
    start: datetime
    finish: datetime
    confirmed: bool
    channels: list[EventChannel]
    paused: bool = False

    def status(self, now: datetime) -> str:
        if now < self.start:
            return "scheduled"
        if now >= self.finish:
            return "completed"
        return "paused" if self.paused else "in_progress"


@dataclass
class StreamEndpoint:
    id: str
    name: str
    type: str
    url: str
    key: str | None


@dataclass
class Preset:
    id: str
    name: str
    description: str


@dataclass
class Team:
    name: str
    team_id: str
    device_ids: list[str]
    endpoints: dict[str, StreamEndpoint]
    presets: dict[str, Preset]


@dataclass
class World:
    """Everything the lab simulates. Build it with `World.build(scenario, now)`."""

    teams: dict[str, Team]
    devices: dict[str, Device]
    events: dict[str, Event]
    firmware_latest: dict[str, str]
    control_delay: float = 0.0
    """Seconds of lab time between a recording or stream write and its effect (0: at once)."""
    pending: list[tuple[datetime, Callable[[datetime], None]]] = field(default_factory=list)
    """Controls accepted and not applied yet: (when they apply, how), oldest first."""

    @classmethod
    def build(cls, scenario: Scenario, now: datetime) -> World:
        """The scenario's starting world with relative times placed around ``now``."""
        teams: dict[str, Team] = {}
        devices: dict[str, Device] = {}
        events: dict[str, Event] = {}
        minute = now.replace(second=0, microsecond=0)
        for team_name in TEAM_NAMES:
            spec = scenario.team(team_name)
            for group, device in spec.devices():
                devices[device.id] = _build_device(device, team_name, group.id, group.name, spec, now)
            teams[team_name] = Team(
                name=team_name,
                team_id=spec.team_id,
                device_ids=[d.id for _g, d in spec.devices()],
                endpoints={
                    e.id: StreamEndpoint(e.id, e.name, e.type, e.url, e.key) for e in spec.stream_endpoints
                },
                presets={p.id: Preset(p.id, p.name, p.description) for p in spec.presets},
            )
            for event in spec.events:
                events[event.id] = _build_event(event, minute)
        return cls(
            teams=teams, devices=devices, events=events, firmware_latest=dict(scenario.firmware_latest)
        )

    # --- reading ---------------------------------------------------------------------------

    def team_device(self, team: str, device_id: str, now: datetime) -> Device | None:
        """The device if it belongs to ``team`` (settled to ``now``), else None."""
        device = self.devices.get(device_id)
        if device is None or device.team != team:
            return None
        self.settle_device(device, now)
        return device

    def team_devices(self, team: str, now: datetime) -> list[Device]:
        """The team's devices in scenario order, settled to ``now``."""
        devices = [self.devices[d] for d in self.teams[team].device_ids]
        for device in devices:
            self.settle_device(device, now)
        return devices

    def device_events(self, device_id: str) -> list[Event]:
        return sorted((e for e in self.events.values() if e.device_id == device_id), key=lambda e: e.start)

    def team_event(self, team: str, event_id: str) -> Event | None:
        event = self.events.get(event_id)
        if event is None or self.devices[event.device_id].team != team:
            return None
        return event

    def current_or_next_event(self, device_id: str, now: datetime, until: datetime | None) -> Event | None:
        """The event in progress, else the next one (starting no later than ``until``)."""
        for event in self.device_events(device_id):
            if event.finish > now and (until is None or event.start <= until):
                return event
        return None

    def endpoint_use(self, endpoint_id: str) -> tuple[str | None, bool]:
        """(``LockByDevice``, ``CurrentlyStreaming``) of a stream endpoint: the device whose
        channel sends it now (None: no device) and whether one does."""
        for device in self.devices.values():
            for channel in device.channels:
                if any(p.endpoint_id == endpoint_id and p.started for p in channel.publishers):
                    return device.id, True
        return None, False

    # --- settling --------------------------------------------------------------------------

    def apply_due(self, now: datetime) -> None:
        """Apply the accepted controls whose time has come at ``now``, in the order accepted."""
        while self.pending and self.pending[0][0] <= now:
            due, apply = self.pending.pop(0)
            apply(due)

    def _control(self, now: datetime, apply: Callable[[datetime], None]) -> None:
        """Apply a checked control now, or after `control_delay` (see the module doc); `apply`
        gets the time it takes effect."""
        if self.control_delay <= 0:
            apply(now)
        else:
            self.pending.append((now + timedelta(seconds=self.control_delay), apply))

    def settle_device(self, device: Device, now: datetime) -> None:
        """Apply the device's pending changes that are due at ``now``."""
        if device.offline_until is not None and now >= device.offline_until:
            _come_online(device, device.offline_until)
        if device.update_started is None:
            return
        reboot_at = device.update_started + timedelta(seconds=FIRMWARE_INSTALL_SECONDS)
        back_at = reboot_at + timedelta(seconds=FIRMWARE_REBOOT_SECONDS)
        if now >= reboot_at and device.online and device.state_time < reboot_at:
            device.online, device.state_time, device.up_since = False, reboot_at, None
        if now >= back_at:
            device.firmware = device.update_target or device.firmware
            device.update_started = device.update_target = None
            _come_online(device, back_at)

    # --- changing (each returns None or the per-device error string) -----------------------

    def set_recording(self, device: Device, channel_id: str, recording: bool, now: datetime) -> str | None:
        channel = device.channel(channel_id)
        if channel is None:
            return "channel not found"
        if not device.online:
            return "device offline"

        def apply(at: datetime) -> None:
            if device.online and channel.recording != recording:
                channel.recording, channel.recording_since = recording, at

        self._control(now, apply)
        return None

    def set_stream(
        self, device: Device, channel_id: str, endpoint: StreamEndpoint, started: bool, now: datetime
    ) -> str | None:
        channel = device.channel(channel_id)
        if channel is None:
            return "channel not found"
        if not device.online:
            return "device offline"
        publisher = next((p for p in channel.publishers if p.endpoint_id == endpoint.id), None)
        if publisher is None and not started:
            return "stream endpoint is not started on this channel"
        locked_by, _streaming = self.endpoint_use(endpoint.id)
        if started and locked_by is not None and locked_by != device.id:
            return "stream endpoint is in use by another device"

        def apply(at: datetime) -> None:
            nonlocal publisher
            if not device.online or (started and self.endpoint_use(endpoint.id)[0] not in (None, device.id)):
                return
            if publisher is None:
                publisher = Publisher(
                    endpoint.id, endpoint.type, False, at, endpoint.url, endpoint.key, endpoint.id
                )
                channel.publishers.append(publisher)
            if publisher.started != started:
                publisher.started, publisher.since = started, at

        self._control(now, apply)
        return None

    def reboot(self, device: Device, now: datetime, seconds: int = REBOOT_SECONDS) -> str | None:
        if not device.online:
            return "device offline"
        if device.busy:
            return "firmware update in progress"
        _stop_everything(device, now)
        device.online, device.state_time, device.up_since = False, now, None
        device.offline_until = now + timedelta(seconds=seconds)
        return None

    def update_firmware(self, device: Device, now: datetime) -> str | None:
        if not device.online:
            return "device offline"
        if device.busy:
            return "firmware update in progress"
        latest = self.firmware_latest.get(device.model)
        if latest is None or latest == device.firmware:
            return "firmware is up to date"
        _stop_everything(device, now)
        device.update_started, device.update_target = now, latest
        return None

    def apply_preset(self, device: Device, preset: Preset, now: datetime) -> str | None:
        error = self.reboot(device, now, seconds=PRESET_SECONDS)
        if error is None:
            device.preset = preset.name
        return error

    def stop_endpoint_everywhere(self, endpoint_id: str, now: datetime) -> None:
        for device in self.devices.values():
            for channel in device.channels:
                for publisher in channel.publishers:
                    if publisher.endpoint_id == endpoint_id and publisher.started:
                        publisher.started, publisher.since = False, now


def _stop_everything(device: Device, now: datetime) -> None:
    for channel in device.channels:
        if channel.recording:
            channel.recording, channel.recording_since = False, now
        for publisher in channel.publishers:
            if publisher.started:
                publisher.started, publisher.since = False, now


def _come_online(device: Device, at: datetime) -> None:
    device.online, device.state_time, device.up_since, device.offline_until = True, at, at, None


def _minutes(minutes: float) -> timedelta:
    """A scenario's minutes as a span, kept to the millisecond (whole seconds stay whole)."""
    return timedelta(seconds=round(minutes * 60, 3))


def _build_device(
    spec: DeviceSpec, team: str, group_id: str, group_name: str, team_spec: TeamSpec, now: datetime
) -> Device:
    state_time = now - _minutes(spec.state_minutes_ago)
    online = spec.status == "online"
    uptime = spec.uptime_minutes if spec.uptime_minutes is not None else spec.state_minutes_ago
    endpoints = {e.id: e for e in team_spec.stream_endpoints}
    channels = []
    for ch in spec.channels:
        publishers = []
        for pub in ch.publishers:
            endpoint = endpoints.get(pub.endpoint) if pub.endpoint else None
            publishers.append(
                Publisher(
                    id=pub.id,
                    type=endpoint.type if endpoint else pub.type,
                    started=pub.started,
                    since=now - _minutes(pub.started_minutes_ago),
                    url=endpoint.url if endpoint else (pub.url or ""),
                    key=endpoint.key if endpoint else pub.key,
                    endpoint_id=pub.endpoint,
                    username=pub.username,
                    password=pub.password,
                    streamid=pub.streamid,
                    passphrase=pub.passphrase,
                )
            )
        since = now - _minutes(ch.recording_minutes_ago if ch.recording else 24 * 60)
        warnings = [dict(w) for w in ch.warnings] if ch.warnings is not None else None
        channels.append(Channel(ch.id, ch.name, ch.source, ch.recording, since, publishers, warnings))
    return Device(
        id=spec.id,
        team=team,
        name=spec.name,
        model=spec.model,
        group_id=group_id,
        group_name=group_name,
        firmware=spec.firmware,
        serial=spec.serial,
        ip=spec.ip,
        online=online,
        state_time=state_time,
        up_since=now - _minutes(uptime) if online else None,
        cpu_load_pct=spec.cpu_load_pct,
        cpu_temp_c=spec.cpu_temp_c,
        cms=spec.cms,
        storage_total=round(spec.storage.total_gb * GB) if spec.storage else None,
        storage_free=round(spec.storage.free_gb * GB) if spec.storage else None,
        storage_state=spec.storage.state if spec.storage else None,
        warnings=[dict(w) for w in spec.warnings] if spec.warnings is not None else None,
        sources=[Source(s.name, s.kind, s.signal, s.resolution) for s in spec.sources],
        channels=channels,
    )


def _build_event(spec: EventSpec, minute: datetime) -> Event:
    start = minute + _minutes(spec.start_in_minutes)
    return Event(
        id=spec.id,
        title=spec.title,
        cms=spec.cms,
        device_id=spec.device,
        start=start,
        finish=start + _minutes(spec.duration_minutes),
        confirmed=spec.confirmed,
        channels=[EventChannel(c.channel_id, c.recording, c.streaming) for c in spec.channels],
    )
