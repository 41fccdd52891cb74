"""Scenarios: the lab's starting world, loaded from YAML into frozen data.

A scenario holds exactly two teams, ``normal`` and ``sandbox``, each with its own team ID and
devices (no device in both), stream endpoints, presets and CMS events. Times are relative to
the moment the world is built ("now"): ``start_in_minutes: 40`` is a class starting in forty
minutes, ``state_minutes_ago: 12`` a status that changed twelve minutes ago (fractions of a
minute are kept to the millisecond: a replayed capture puts times back to the second). Bundled scenarios
live in ``services/lab/scenarios/`` (``campus``); `generate_fleet` makes fleets of thousands.

Device IDs are master IDs (11 digits in real life, ``^[0-9a-f]{8,32}$`` accepted); channel IDs
inside a device are ``"1"``, ``"2"``... Quote IDs in YAML so they stay strings.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import msgspec

from services.lab import LabError
from services.lab.faults import Fault

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
MASTER_ID = re.compile(r"^[0-9a-f]{8,32}$")
CHANNEL_NUMBER = re.compile(r"^[1-9][0-9]{0,2}$")
UUID_LIKE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
EVENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_:-]{0,127}$")

PublisherType = Literal["rtmp", "srt", "rtsp", "rtp-udp", "ndi", "mpegts-udp"]


class ScenarioError(LabError):
    """A scenario file is missing or invalid; the message names the file and the place."""


class _Spec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class SourceSpec(_Spec):
    """A video input (``HDMI-A``, ``SDI-A``...); ``signal: false`` makes its channels dark."""

    name: str
    kind: str = "hdmi"
    signal: bool = True
    resolution: str = "1920x1080"


class PublisherSpec(_Spec):
    """A stream a channel sends. With ``endpoint`` (a stream endpoint ID of the same team) the
    type, URL and key come from that endpoint and the publisher's ID is the endpoint's ID.

    The rest are a Pearl publisher's own settings, secret-looking on purpose (invented values,
    example.com / example.net hosts): ``key`` is an RTMP publisher's ``stream`` (on a Pearl the
    stream name is the key), ``username``/``password`` its sign-in, ``streamid`` and
    ``passphrase`` an SRT publisher's."""

    id: str
    type: PublisherType = "rtmp"
    started: bool = False
    started_minutes_ago: float = 30
    endpoint: str | None = None
    url: str | None = None
    key: str | None = None
    username: str | None = None
    password: str | None = None
    streamid: str | None = None
    passphrase: str | None = None


class ChannelSpec(_Spec):
    id: str
    name: str
    source: str | None = None
    recording: bool = False
    recording_minutes_ago: float = 20
    publishers: tuple[PublisherSpec, ...] = ()
    warnings: tuple[dict[str, Any], ...] | None = None
    """The channel's ``Warnings`` as given (a replayed capture); None: worked out from its
    source's signal."""


class StorageSpec(_Spec):
    """Storage size in GB (10**9 bytes); a device with ``storage: null`` has none. ``state``
    (``ok``, ``low``, ``critical``) is worked out from the sizes unless given."""

    total_gb: float = 931.0
    free_gb: float = 640.0
    state: str | None = None


class DeviceSpec(_Spec):
    id: str
    name: str
    model: str
    firmware: str
    serial: str
    ip: str
    status: Literal["online", "offline"] = "online"
    state_minutes_ago: float = 2880
    uptime_minutes: float | None = None
    cpu_load_pct: float | None = 18.0
    cpu_temp_c: float | None = 52.0
    cms: str = "epiphan"
    storage: StorageSpec | None = StorageSpec()
    sources: tuple[SourceSpec, ...] = (SourceSpec(name="HDMI-A"),)
    channels: tuple[ChannelSpec, ...] = (ChannelSpec(id="1", name="Program", source="HDMI-A"),)
    warnings: tuple[dict[str, Any], ...] | None = None
    """The device's ``Warnings`` as given (a replayed capture); None: worked out from its
    storage and sources."""


class GroupSpec(_Spec):
    id: str
    name: str
    devices: tuple[DeviceSpec, ...]


class EventChannelSpec(_Spec):
    channel_id: str
    recording: bool = True
    streaming: bool = False


class EventSpec(_Spec):
    id: str
    title: str
    device: str
    start_in_minutes: float
    duration_minutes: float = 75
    cms: str = "epiphan"
    confirmed: bool = False
    channels: tuple[EventChannelSpec, ...] = (EventChannelSpec(channel_id="1"),)


class StreamEndpointSpec(_Spec):
    """A stream destination. ``url`` and ``key`` are secret-looking on purpose (the real
    server returns stream keys); use only example.com / example.net / .invalid hosts."""

    id: str
    name: str
    type: PublisherType
    url: str
    key: str | None = None


class PresetSpec(_Spec):
    id: str
    name: str
    description: str = ""


class TeamSpec(_Spec):
    team_id: str
    groups: tuple[GroupSpec, ...]
    stream_endpoints: tuple[StreamEndpointSpec, ...] = ()
    presets: tuple[PresetSpec, ...] = ()
    events: tuple[EventSpec, ...] = ()

    def devices(self) -> Iterable[tuple[GroupSpec, DeviceSpec]]:
        for group in self.groups:
            for device in group.devices:
                yield group, device


class TeamsSpec(_Spec):
    normal: TeamSpec
    sandbox: TeamSpec


class OptionsSpec(_Spec):
    """Lab behaviour a scenario may set (the command line and `run_lab` can override).

    ``anonymous``: ``admit`` (the real server's way: no token still connects, tool calls answer
    an in-band 401) or ``challenge`` (HTTP 401 with ``WWW-Authenticate``). ``expose_team_id``:
    whether ``get_devices_in_my_team`` carries ``team_id`` (unconfirmed for the real server).
    """

    anonymous: Literal["admit", "challenge"] = "admit"
    expose_team_id: bool = True
    older_shapes: bool = False
    access_token_ttl_seconds: int = 3600
    shapes: dict[str, str] = {}
    """Tool → named shape (`shared.epiphan.fleet_shapes`) to answer in; a replayed capture sets the
    shapes it was captured in."""


class Scenario(_Spec):
    name: str
    teams: TeamsSpec
    description: str = ""
    options: OptionsSpec = OptionsSpec()
    firmware_latest: dict[str, str] = {}
    faults: tuple[Fault, ...] = ()

    def team(self, name: str) -> TeamSpec:
        return self.teams.normal if name == "normal" else self.teams.sandbox


TEAM_NAMES: tuple[str, str] = ("normal", "sandbox")


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load and check a scenario: a bundled name (``campus``) or a path to a YAML file.

    Raises `ScenarioError` naming the file and the place (``$.teams.normal...``) of a problem.
    """
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.yaml"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        known = ", ".join(sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml")))
        raise ScenarioError(f"cannot read scenario {str(path)!r} ({exc.strerror}); bundled: {known}") from exc
    try:
        scenario = msgspec.yaml.decode(raw, type=Scenario)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    return check_scenario(scenario, where=str(path))


def check_scenario(scenario: Scenario, *, where: str = "scenario") -> Scenario:
    """Cross-check what the types cannot: ID patterns, references, no device in both teams."""
    problems: list[str] = []
    seen_devices: dict[str, str] = {}
    for team_name in TEAM_NAMES:
        team = scenario.team(team_name)
        problems += _check_team(team_name, team, seen_devices)
    for fault in scenario.faults:
        if fault.count is not None and fault.count < 1:
            problems.append(f"fault for {fault.tool}: count must be at least 1")
    if problems:
        raise ScenarioError(f"{where}: " + "; ".join(problems))
    return scenario


def _check_team(team_name: str, team: TeamSpec, seen_devices: dict[str, str]) -> list[str]:
    problems: list[str] = []
    endpoints = {e.id for e in team.stream_endpoints}
    channels_of: dict[str, set[str]] = {}
    for endpoint in team.stream_endpoints:
        if not UUID_LIKE.match(endpoint.id):
            problems.append(f"{team_name}: stream endpoint ID {endpoint.id!r} is not a UUID")
    for preset in team.presets:
        if not UUID_LIKE.match(preset.id):
            problems.append(f"{team_name}: preset ID {preset.id!r} is not a UUID")
    for _group, device in team.devices():
        here = f"{team_name} device {device.id!r}"
        if not MASTER_ID.match(device.id):
            problems.append(f"{here}: not a master ID (^[0-9a-f]{{8,32}}$)")
        if device.id in seen_devices:
            problems.append(f"{here}: already in team {seen_devices[device.id]}")
        seen_devices[device.id] = team_name
        sources = {s.name for s in device.sources}
        ids = [c.id for c in device.channels]
        channels_of[device.id] = set(ids)
        if len(set(ids)) != len(ids) or not all(CHANNEL_NUMBER.match(i) for i in ids):
            problems.append(f"{here}: channel IDs must be unique, '1'..'999'")
        for channel in device.channels:
            if channel.source is not None and channel.source not in sources:
                problems.append(f"{here} channel {channel.id}: unknown source {channel.source!r}")
            for pub in channel.publishers:
                if pub.endpoint is not None and pub.endpoint not in endpoints:
                    problems.append(f"{here} channel {channel.id}: unknown endpoint {pub.endpoint!r}")
    for event in team.events:
        if not EVENT_ID.match(event.id):
            problems.append(f"{team_name} event {event.id!r}: bad event ID")
        if event.device not in channels_of:
            problems.append(f"{team_name} event {event.id!r}: device {event.device!r} not in this team")
        elif any(c.channel_id not in channels_of[event.device] for c in event.channels):
            problems.append(f"{team_name} event {event.id!r}: names a channel the device lacks")
        if event.duration_minutes < 1:
            problems.append(f"{team_name} event {event.id!r}: duration must be at least a minute")
    return problems


def with_normal_team(scenario: Scenario, normal: TeamSpec, *, name: str | None = None) -> Scenario:
    """The scenario with its normal team replaced (e.g. by a generated fleet), re-checked."""
    return with_team(scenario, "normal", normal, name=name)


def with_team(scenario: Scenario, team: str, spec: TeamSpec, *, name: str | None = None) -> Scenario:
    """The scenario with its ``normal`` or ``sandbox`` team replaced, re-checked."""
    teams = msgspec.structs.replace(scenario.teams, **{team: spec})
    replaced = msgspec.structs.replace(scenario, teams=teams, name=name or scenario.name)
    return check_scenario(replaced, where=replaced.name)


def generate_sandbox(n_devices: int, seed: int = 0) -> TeamSpec:
    """A generated, healthy sandbox team of ``n_devices`` (master IDs ``29`` + 9 digits; no
    device of a generated or bundled normal team has one)."""
    if n_devices < 1:
        raise ScenarioError("a generated sandbox needs at least one device")
    return _generate_team(random.Random(seed), n_devices, id_prefix="29", healthy=True)


# --- the fleet generator --------------------------------------------------------------------

FIRMWARE_LATEST: Mapping[str, str] = MappingProxyType(
    {
        "Pearl-2": "4.24.6",
        "Pearl Mini": "4.24.6",
        "Pearl Nano": "4.24.6",
        "Pearl Nexus": "4.24.6",
        "EC20": "3.6.2",
    }
)
_OLDER_FIRMWARE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "Pearl-2": ("4.24.3", "4.23.1", "4.22.0"),
        "Pearl Mini": ("4.24.2", "4.23.1"),
        "Pearl Nano": ("4.23.1", "4.22.4"),
        "Pearl Nexus": ("4.24.1", "4.23.0"),
        "EC20": ("3.6.0", "3.5.4"),
    }
)
_MODEL_WEIGHTS = (("Pearl-2", 30), ("Pearl Mini", 30), ("Pearl Nano", 15), ("Pearl Nexus", 15), ("EC20", 10))
_BUILDINGS = (
    ("SCI", "Science Hall"),
    ("ENG", "Engineering"),
    ("LIB", "Library"),
    ("ART", "Arts Center"),
    ("LAW", "Law School"),
    ("BUS", "Business School"),
    ("MED", "Medical Center"),
    ("MUS", "Music Hall"),
    ("IDI", "Centro de Idiomas"),
    ("ATH", "Athletics"),
)
_CMS_WEIGHTS = (("panopto", 40), ("kaltura", 20), ("epiphan", 30), ("yuja", 10))


def generate_fleet(n_devices: int, seed: int = 0) -> Scenario:
    """A scenario with a generated normal team of ``n_devices`` and a small healthy sandbox.

    Deterministic for a given seed. The normal team has the real-world mix: ~25 devices a
    group, models and firmware spread, ~3 % offline, ~2 % dark channels, disk warnings, hot
    CPUs, recent reboots, and events for ~40 % of devices from an hour ago to ten hours ahead.
    Master IDs are 11 digits (``19`` + 9 digits; the sandbox's start with ``29``).
    """
    if n_devices < 1:
        raise ScenarioError("generate_fleet needs at least one device")
    rng = random.Random(seed)
    normal = _generate_team(rng, n_devices, id_prefix="19", healthy=False)
    sandbox = _generate_team(rng, 3, id_prefix="29", healthy=True)
    scenario = Scenario(
        name=f"generated-{n_devices}",
        description=f"Generated fleet of {n_devices} devices (seed {seed}).",
        teams=TeamsSpec(normal=normal, sandbox=sandbox),
        firmware_latest=dict(FIRMWARE_LATEST),
    )
    return check_scenario(scenario, where=scenario.name)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _pick(rng: random.Random, weighted: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([w[0] for w in weighted], weights=[w[1] for w in weighted])[0]


def _generate_team(rng: random.Random, n: int, *, id_prefix: str, healthy: bool) -> TeamSpec:
    endpoints = tuple(
        StreamEndpointSpec(
            id=_uuid(rng),
            name=name,
            type=kind,
            url=url,
            key=f"live_sk_{rng.getrandbits(96):024x}" if kind == "rtmp" else None,
        )
        for name, kind, url in (
            ("Main stage (RTMP)", "rtmp", "rtmp://live.example.net/app"),
            (
                "Overflow (SRT)",
                "srt",
                f"srt://ingest.example.com:9000?passphrase=pp{rng.getrandbits(64):016x}",
            ),
        )
    )
    presets = (
        PresetSpec(id=_uuid(rng), name="Lecture capture 1080p"),
        PresetSpec(id=_uuid(rng), name="Stream only"),
    )
    groups: list[GroupSpec] = []
    events: list[EventSpec] = []
    devices: list[DeviceSpec] = []
    for i in range(n):
        abbr, building = _BUILDINGS[(i // 25) % len(_BUILDINGS)]
        device = _generate_device(rng, f"{id_prefix}{i + 1:09d}", f"{abbr} {100 + i % 25 + 1}", healthy)
        devices.append(device)
        if rng.random() < 0.4:
            start = rng.randrange(-60, 600, 5)
            events.append(
                EventSpec(
                    id=f"ev{rng.getrandbits(32):08x}:{1791484740 + i}",
                    title=f"Class {abbr}-{rng.randrange(100, 499)}",
                    device=device.id,
                    start_in_minutes=start,
                    duration_minutes=rng.choice((50, 75, 110)),
                    cms=device.cms,
                    confirmed=rng.random() < 0.7,
                )
            )
        if len(devices) == 25 or i == n - 1:
            groups.append(
                GroupSpec(id=_uuid(rng), name=f"{building} {len(groups) + 1}", devices=tuple(devices))
            )
            devices = []
    return TeamSpec(
        team_id=_uuid(rng),
        groups=tuple(groups),
        stream_endpoints=endpoints,
        presets=presets,
        events=tuple(events),
    )


def _generate_device(rng: random.Random, device_id: str, name: str, healthy: bool) -> DeviceSpec:
    model = _pick(rng, _MODEL_WEIGHTS)
    roll = 1.0 if healthy else rng.random()
    firmware = FIRMWARE_LATEST[model] if rng.random() < 0.7 else rng.choice(_OLDER_FIRMWARE[model])
    two_inputs = model in ("Pearl-2", "Pearl Nexus")
    sources = (SourceSpec(name="HDMI-A"),) + (
        (SourceSpec(name="SDI-A", kind="sdi", signal=not (0.0 <= roll < 0.02)),) if two_inputs else ()
    )
    channels = (ChannelSpec(id="1", name="Program", source="HDMI-A", recording=rng.random() < 0.15),) + (
        (ChannelSpec(id="2", name="Camera 2", source="SDI-A"),) if two_inputs else ()
    )
    storage: StorageSpec | None = StorageSpec(total_gb=931.0, free_gb=round(rng.uniform(200, 900), 1))
    if 0.02 <= roll < 0.04:
        storage = StorageSpec(total_gb=931.0, free_gb=round(rng.uniform(2, 40), 1))
    elif 0.04 <= roll < 0.05:
        storage = None
    recent = 0.05 <= roll < 0.06
    return DeviceSpec(
        id=device_id,
        name=name,
        model=model,
        firmware=firmware,
        serial=f"{model[:2].upper()}{rng.randrange(10**7):07d}",
        ip=f"10.{rng.randrange(1, 250)}.{rng.randrange(1, 250)}.{rng.randrange(2, 250)}",
        status="offline" if 0.06 <= roll < 0.09 else "online",
        state_minutes_ago=rng.randrange(5, 25) if recent else rng.randrange(60, 40000),
        cpu_load_pct=float(rng.randrange(92, 99)) if 0.09 <= roll < 0.10 else float(rng.randrange(8, 45)),
        cpu_temp_c=float(rng.randrange(81, 88)) if 0.09 <= roll < 0.10 else float(rng.randrange(45, 66)),
        cms=_pick(rng, _CMS_WEIGHTS),
        storage=storage,
        sources=sources,
        channels=channels,
    )
