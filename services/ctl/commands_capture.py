"""``fleetwatch capture DIR [--rename] [--in-checkout] [--json]``: read every read tool once through
the read sign-in and keep what came back, redacted, so a first live run teaches the tests.

Through the guarded read client only (the policy's read list; nothing else can be called):
the device list, then every per-device read for every device (in calls of at most 100 IDs,
each call recorded), then each one-device, one-channel and one-destination read for the first
online device, its first channel and the first destination, the presets, the knowledge base.
Each answer is saved redacted with stable placeholders (`shared.epiphan.capture_redact`): keys,
credentialed URLs, tokens, IP and MAC addresses and serial numbers never reach the folder;
names are kept unless ``--rename``. A picture (``get_channel_image``) is never saved. The
manifest (`shared.epiphan.capture.Manifest`) records each call: tool, arguments, time, the known shape
its answer has (or why it has none), or its error.

The folder must be new or empty, is made 0700 with files 0600, and a folder inside a git
checkout is refused unless ``--in-checkout``. A capture never changes anything on the server.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from gettext import gettext as _
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from services.ctl import add_language_option
from shared.config import load_settings
from shared.epiphan.capture import (
    CallError,
    CaptureCall,
    Manifest,
    check_folder,
    prepare_folder,
    utc_text,
    write_json,
    write_manifest,
)
from shared.epiphan.capture_redact import CaptureRedactor, Renamer
from shared.epiphan.fleet import PARSERS, Device, FleetShapeError, parse_devices, parse_stream_endpoints
from shared.epiphan.fleet_shapes import outline, recognise
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanError, EpiphanReadClient
from shared.epiphan.redact import url_host
from shared.errors import FleetwatchError
from shared.policy.definitions import arguments_differ
from shared.text.catalogue import N_, Lexicon, placeholder, translate
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import Language, language_of

if TYPE_CHECKING:
    from shared.policy.loader import ProposeRule


PER_DEVICE: Final = (
    "get_recorder_status_for_devices",
    "get_system_status_for_devices",
    "get_storage_status_for_devices",
    "get_cms_events_for_devices",
    "get_current_or_next_cms_events_for_devices",
    "get_cms_names_for_devices",
)
ONE_DEVICE: Final = (
    "get_device_info",
    "get_device_sources",
    "get_cms_events_for_device",
    "get_current_or_next_cms_event_for_device",
)
ONE_CHANNEL: Final = ("get_channel_settings", "get_channel_image", "get_channel_audio_levels")
PICTURE: Final = "get_channel_image"
KB_QUERY: Final = "firmware"


def _version() -> str:
    try:
        return version("fleetwatch")
    except PackageNotFoundError:
        return ""


class Capturing:
    """One capture in progress: the client, the redaction, the calls made so far."""

    def __init__(self, client: EpiphanReadClient, folder: Path, *, rename: bool) -> None:
        self.client = client
        self.folder = folder
        self.redactor = CaptureRedactor()
        self.renamer = Renamer() if rename else None
        self.calls: list[CaptureCall] = []
        self.kept: dict[str, Any] = {}
        """The last answer of each tool, redacted, not renamed (later calls' arguments come
        from it)."""

    def _hide(self, value: Any) -> Any:
        return self.renamer(value) if self.renamer is not None else value

    def _learn(self, tool: str, data: Any) -> None:
        """Learn the names and IDs to rename from an answer Fleetwatch can parse."""
        if self.renamer is None:
            return
        try:
            if tool == "get_devices_in_my_team":
                team, devices = parse_devices(data)
                self.renamer.learn(
                    names=[(d.name, "room") for d in devices] + [(d.group_name, "group") for d in devices],
                    ids=[(d.id, "master") for d in devices]
                    + [(d.group_id, "uuid") for d in devices]
                    + ([(team, "uuid")] if team else []),
                )
            elif "cms_event" in tool:
                events = _event_maps(data)
                self.renamer.learn(
                    names=[(str(e.get("title") or ""), "event") for e in events],
                    ids=[(str(e.get("id") or ""), "event") for e in events],
                )
            elif tool == "get_stream_endpoints":
                endpoints = parse_stream_endpoints(data)
                self.renamer.learn(
                    names=[(e.name, "stream") for e in endpoints], ids=[(e.id, "uuid") for e in endpoints]
                )
            elif tool == "get_team_presets" and isinstance(data, Mapping):
                presets = [p for p in data.get("presets") or [] if isinstance(p, Mapping)]
                self.renamer.learn(
                    names=[(str(p.get("name") or ""), "preset") for p in presets],
                    ids=[(str(p.get("id") or ""), "uuid") for p in presets],
                )
        except FleetShapeError:
            return  # an answer in no known shape teaches no names; the manifest says why

    def record(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        at: datetime,
        data: Any = None,
        error: EpiphanError | None = None,
    ) -> Any:
        """Keep one call: its data (redacted, renamed) in a file, its line in the manifest.
        Returns the data redacted but not renamed, for choosing the next calls' arguments
        (None for an error or a picture)."""
        seq = len(self.calls) + 1
        shown_arguments = self._hide(self.redactor(dict(arguments)))
        if error is not None:
            message = self._hide(self.redactor.text(error.message))
            self.calls.append(
                CaptureCall(seq, tool, shown_arguments, utc_text(at), error=CallError(error.code, message))
            )
            return None
        if tool == PICTURE:
            self.calls.append(
                CaptureCall(seq, tool, shown_arguments, utc_text(at), note="a picture: never saved")
            )
            return None
        self._learn(tool, data)
        kept = self._hide(data)
        shape, problem = _judge(tool, kept)
        name = f"{seq:03d}-{tool}.json"
        write_json(self.folder, f"calls/{name}", kept)
        self.calls.append(
            CaptureCall(seq, tool, shown_arguments, utc_text(at), file=name, shape=shape, problem=problem)
        )
        self.kept[tool] = data
        return data

    async def one(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call `tool` once (redacted with the capture's placeholders) and keep it."""
        arguments = dict(arguments or {})
        try:
            data = await self.client.call(tool, arguments, stable=self.redactor)
        except EpiphanError as exc:
            return self.record(tool, arguments, datetime.now(UTC), error=exc)
        return self.record(tool, arguments, datetime.now(UTC), data)

    async def per_device(self, tool: str, ids: list[str], arguments: Mapping[str, Any] | None = None) -> None:
        """Read `tool` for every device through the batching client; keep each call."""
        for chunk in await self.client.chunks(tool, ids, arguments, stable=self.redactor):
            self.record(tool, chunk.arguments, chunk.at, chunk.data, chunk.error)


def _event_maps(value: Any) -> list[Mapping[str, Any]]:
    """Every map in an answer that is an event (an ``id``, a ``title`` and a ``start``)."""
    if isinstance(value, Mapping):
        here = [value] if {"id", "title", "start"} <= value.keys() else []
        return here + [e for item in value.values() for e in _event_maps(item)]
    if isinstance(value, list):
        return [e for item in value for e in _event_maps(item)]
    return []


def _judge(tool: str, data: Any) -> tuple[str | None, str | None]:
    """(the answer's known shape, why Fleetwatch cannot read it, or None when it can)."""
    shape = recognise(tool, data)
    if shape is None:
        return None, f"{tool}: no known shape ({outline(data)})"
    parser = PARSERS.get(tool)
    if parser is not None:
        try:
            parser(data)
        except FleetShapeError as exc:
            return shape.name, exc.message
    return shape.name, None


def _first(items: list[Any], test: Callable[[Any], bool]) -> Any:
    return next((item for item in items if test(item)), items[0] if items else None)


async def capture(
    client: EpiphanReadClient, folder: Path, *, rename: bool, server: str, read_tools: frozenset[str]
) -> Manifest:
    """Run one capture into the prepared `folder` (see the module docstring); the manifest.
    A read that fails is recorded with its error; when the device list fails nothing else is
    tried (the manifest's first call says why)."""
    captured_at = datetime.now(UTC).replace(microsecond=0)
    job = Capturing(client, folder, rename=rename)
    listed = await job.one("get_devices_in_my_team")
    try:
        _, devices = parse_devices(listed) if listed is not None else (None, ())
    except FleetShapeError:
        devices = ()
    if listed is not None:
        await _device_reads(job, read_tools, list(devices), captured_at)
    return Manifest(
        format=1,
        captured_at=utc_text(captured_at),
        server=job.redactor.text(server),
        renamed=rename,
        calls=tuple(job.calls),
        placeholders=job.redactor.counts,
        fleetwatch=_version(),
    )


async def _device_reads(
    job: Capturing, read_tools: frozenset[str], devices: list[Device], captured_at: datetime
) -> None:
    """Every per-device read for every device, the one-device and one-channel reads for the
    first online device with a channel, then the team's other reads."""
    ids = [d.id for d in devices]
    until = utc_text(captured_at + timedelta(hours=24))
    for tool in PER_DEVICE:
        if tool in read_tools and ids:
            await job.per_device(
                tool, ids, {"until": until} if tool.startswith("get_current_or_next") else None
            )
    device = _first(list(devices), lambda d: d.online and bool(d.channels))
    if device is not None:
        for tool in ONE_DEVICE:
            if tool in read_tools:
                await job.one(tool, {"device_id": device.id})
        channel = device.channels[0].channel_id if device.channels else "1"
        for tool in ONE_CHANNEL:
            if tool in read_tools:
                await job.one(tool, {"device_id": device.id, "channel_id": channel})
    await _team_reads(job, read_tools, device.id if device is not None else None)


async def _team_reads(job: Capturing, read_tools: frozenset[str], device_id: str | None) -> None:
    """The reads of the whole team that take no device list: destinations, presets, CMS, KB."""
    endpoints: list[Any] = []
    if "get_stream_endpoints" in read_tools:
        kept = await job.one("get_stream_endpoints")
        try:
            endpoints = list(parse_stream_endpoints(kept)) if kept is not None else []
        except FleetShapeError:
            endpoints = []
    if "get_stream_endpoint" in read_tools and endpoints:
        await job.one("get_stream_endpoint", {"endpoint_id": endpoints[0].id})
    if "get_team_presets" in read_tools:
        await job.one("get_team_presets")
    if "get_devices_by_cms" in read_tools:
        cms = _cms_of(job, device_id)
        await job.one("get_devices_by_cms", {"cms": cms})
    if "kb_search" in read_tools:
        found = await job.one("kb_search", {"query": KB_QUERY})
        results = found.get("results") if isinstance(found, Mapping) else None
        first = (
            results[0] if isinstance(results, list) and results and isinstance(results[0], Mapping) else None
        )
        if "kb_fetch" in read_tools and first is not None and isinstance(first.get("id"), str):
            await job.one("kb_fetch", {"id": first["id"]})


def _cms_of(job: Capturing, device_id: str | None) -> str:
    """The CMS of `device_id` from the captured ``get_cms_names_for_devices``, else epiphan."""
    names = job.kept.get("get_cms_names_for_devices")
    rows = names.get("devices") if isinstance(names, Mapping) else None
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and row.get("device_id") == device_id and isinstance(row.get("cms"), str):
            return row["cms"]
    return "epiphan"


async def capture_command(args: argparse.Namespace) -> int:
    """``fleetwatch capture``: see the module docstring."""
    from services.ctl.output import print_json

    # the sign-in's OAuth stack and the policy's validators: only when capture runs
    from shared.epiphan.signin import fresh_sign_in
    from shared.policy.loader import load_policies

    settings = load_settings()
    _, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    folder: Path = args.folder
    check_folder(folder, in_checkout=args.in_checkout)
    sign_in = await fresh_sign_in(settings.read_token_file)
    server_url = sign_in.server or settings.epiphan_mcp_url
    prepare_folder(folder, in_checkout=args.in_checkout)
    connection = McpConnection(server_url, sign_in.access_token)
    async with EpiphanReadClient(connection, tool_policy.read_tools) as client:
        manifest = await capture(
            client,
            folder,
            rename=args.rename,
            server=url_host(server_url) or "",
            read_tools=tool_policy.read_tools,
        )
        if manifest.calls and manifest.calls[0].error is None:
            manifest = await with_tools(manifest, connection, folder, tool_policy.propose)
    write_manifest(folder, manifest)
    first = manifest.calls[0].error
    if first is not None:
        raise FleetwatchError.said(
            first.code, N_("the device list could not be read: %(why)s"), why=first.message
        )
    if args.json:
        print_json(msgspec.to_builtins(manifest))
        return 0
    language = language_of(args.language or settings.language)
    print(summary(manifest, folder, language=language))
    return 0


async def with_tools(
    manifest: Manifest, connection: McpConnection, folder: Path, propose: Mapping[str, ProposeRule]
) -> Manifest:
    """`manifest` with the server's tool list saved (``tools.json``) and each proposable tool's
    arguments compared with its reviewed schema; a failed listing is said in ``proposable``."""
    try:
        tools = await connection.list_tools()
    except FleetwatchError as exc:
        return msgspec.structs.replace(
            manifest, proposable={"*": f"the server's tools could not be listed ({exc.code})"}
        )
    write_json(folder, "tools.json", [{k: v for k, v in t.items() if k != "description"} for t in tools])
    listed = {str(t.get("name")): t.get("input_schema") for t in tools}
    compared = {
        tool: compare_arguments(listed.get(tool), rule.arguments_schema)
        for tool, rule in sorted(propose.items())
    }
    return msgspec.structs.replace(manifest, tools_file="tools.json", proposable=compared)


SAME_ARGUMENTS: Final = N_("same arguments")
NOT_OFFERED: Final = N_("not offered by the server")


def compare_arguments(served: Any, reviewed: Mapping[str, Any]) -> str:
    """``same arguments`` when the server's input schema for a tool names the same arguments,
    with the same required ones, as the reviewed schema; else what differs
    (`shared.policy.definitions.arguments_differ`, the comparison the pinned definitions use
    too); ``not offered`` when the server has no such tool (English: the manifest's words;
    `summary` says them)."""
    if not isinstance(served, Mapping):
        return NOT_OFFERED
    return arguments_differ(served, reviewed) or SAME_ARGUMENTS


PLACEHOLDER_KINDS: Final = Lexicon("placeholder kind")
"""How many values of each kind a capture replaced (``3 IP addresses``), keyed plural entries
by kind (`shared.epiphan.capture_redact`: ``ip``, ``mac``, ``host``, ``serial``, ``secret``)."""


def summary(manifest: Manifest, folder: Path, *, language: Language = "en") -> str:
    """What a person reads after a capture, in `language` (tools, placeholders' kinds, the
    server's own words about an answer and the folder as they are)."""

    def say(msgid: str, **params: object) -> str:
        text = translate(language, msgid)
        return text % {k: str(v) for k, v in params.items()} if params else text

    calls = manifest.calls
    answered = [c for c in calls if c.error is None]
    unknown = [c for c in answered if c.problem is not None]
    lines = [
        say(
            N_("Captured %(n)s calls into %(folder)s (%(answered)s answered, %(errors)s errors)."),
            n=len(calls),
            folder=folder,
            answered=len(answered),
            errors=len(calls) - len(answered),
        ),
    ]
    if unknown:
        lines.append(say(N_("Answers Fleetwatch could not read (shape unknown or a row it cannot read):")))
        lines += [f"  {c.seq:03d} {c.tool}: {c.problem}" for c in unknown]
    else:
        lines.append(say(N_("Every answer has a shape Fleetwatch reads.")))
    differs = {t: v for t, v in manifest.proposable.items() if v != SAME_ARGUMENTS}
    if manifest.proposable and not differs:
        lines.append(say(N_("Every proposable tool takes the same arguments as its reviewed schema.")))
    lines += [
        say(N_("  proposable %(tool)s: %(verdict)s"), tool=tool, verdict=translate(language, verdict))
        for tool, verdict in differs.items()
    ]
    kinds = PLACEHOLDER_KINDS[language]
    replaced = ", ".join(
        kinds.counted(kind, n) or f"{n} {visible(kind, 20)}"
        for kind, n in sorted(manifest.placeholders.items())
    ) or say(N_("nothing"))
    lines.append(
        say(
            N_(
                "Replaced by placeholders: %(replaced)s (the same value has the same placeholder throughout)."
            ),
            replaced=replaced,
        )
    )
    lines.append(
        say(N_("Names were replaced by invented ones."))
        if manifest.renamed
        else say(N_("Room, group and event names are kept; use --rename before sending it anywhere."))
    )
    return "\n".join(lines + replay_lines(folder, say, language))


def replay_lines(folder: Path, say: Callable[..., str], language: Language) -> list[str]:
    """How to replay the capture in `folder` with no account, as commands to paste: the whole
    Fleetwatch on the lab serving it, in a home of its own beside the capture (``DIR-replay``),
    on free ports where one is taken (a running demo's), the read sign-in set by ``up``; then
    what to run against it and how to stop it. The commands keep `language`."""
    command = functools.partial(
        printed_command, language=language, home=str(folder.parent / f"{folder.name}-replay")
    )
    return [
        say(
            N_(
                "Replay it with no account, beside a running demo (its own home, free ports where one is taken):"
            )
        ),
        f"  {command('up', '--capture', str(folder), '--free-ports')}",
        say(
            N_(
                "Then, in that home: the fleet, a question, and the pages that command printed; stop it after:"
            )
        ),
        f"  {command('fleet')}",
        f"  {command('ask', say(N_('what is offline?')))}",
        f"  {command('down')}",
    ]


def add_commands(sub: Any, epilog: str) -> None:
    """Add ``capture`` to the ``fleetwatch`` command tree."""
    parser = sub.add_parser(
        "capture",
        help=_(
            "read every read tool once through the read sign-in and save the answers, redacted, for replay"
        ),
        description=_(
            "Through the guarded read client only (the policy's read list; nothing else can be called): the "
            "device list, every per-device read for every device (at most 100 IDs per call), then each "
            "one-device, one-channel and one-destination read for the first online device, the presets and "
            "the knowledge base. Each answer is saved redacted with stable placeholders: keys, credentialed "
            "URLs, tokens, IP and MAC addresses and serial numbers never reach the folder; names are kept "
            "unless --rename. A picture is never saved. The manifest records each call: tool, arguments, "
            "time, the shape of its answer (or why it has none), or its error."
        ),
        epilog=epilog,
    )
    parser.add_argument(
        "folder", type=Path, metavar=placeholder("DIR"), help=_("a new or empty folder (made 0700)")
    )
    parser.add_argument(
        "--rename",
        action="store_true",
        help=_("replace room, group and event names and IDs by invented ones"),
    )
    parser.add_argument(
        "--in-checkout",
        action="store_true",
        help=_(
            "write into a folder inside a git checkout (refused otherwise: a capture is private until checked)"
        ),
    )
    parser.add_argument("--json", action="store_true", help=_("print the manifest as JSON"))
    add_language_option(parser)
    parser.set_defaults(run=capture_command)
