"""The guarded read client for Epiphan Edge: the only way Fleetwatch reads a fleet.

Layers:
1. the **guard**: a tool not on the policy's ``read`` list is refused before a byte is sent
   (`Code.TOOL_NOT_ALLOWED`, or `Code.UNKNOWN_TOOL` for a name Epiphan does not have);
2. one call through `shared.epiphan.mcp_session.McpConnection`;
3. result reading: an error result raises; in-band sign-in errors are detected only in error
   results or non-JSON text, never in JSON data (a room may be called "Room 401");
4. **redaction** of every result (`shared.epiphan.redact`);
5. tolerant parsing into a `shared.epiphan.fleet.FleetSnapshot`.

Writes are never possible here: there is no code path from this class to a write tool. The
executor has its own write client and its own sign-in.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.epiphan.fleet import (
    FleetSnapshot,
    StreamEndpoint,
    merge_recorder,
    parse_devices,
    parse_events,
    parse_recorder_status,
    parse_stream_endpoints,
    parse_system_status,
)
from shared.epiphan.mcp_session import McpConnection, RawToolResult
from shared.epiphan.redact import redact, redact_text
from shared.errors import Code, FleetwatchError

log = logging.getLogger(__name__)

READ_TOOLS_OF_EPIPHAN = frozenset(
    {
        "get_devices_in_my_team",
        "get_device_info",
        "get_device_sources",
        "get_system_status_for_devices",
        "get_recorder_status_for_devices",
        "get_storage_status_for_devices",
        "get_channel_settings",
        "get_channel_image",
        "get_channel_audio_levels",
        "get_stream_endpoint",
        "get_stream_endpoints",
        "get_team_presets",
        "get_cms_events_for_device",
        "get_cms_events_for_devices",
        "get_current_or_next_cms_event_for_device",
        "get_current_or_next_cms_events_for_devices",
        "get_cms_names_for_devices",
        "get_devices_by_cms",
        "kb_search",
        "kb_fetch",
    }
)
"""The 20 read tools Epiphan's MCP server offers (EPIPHAN.md)."""

WRITE_TOOLS_OF_EPIPHAN = frozenset(
    {
        "batch_recording",
        "start_stream_endpoint",
        "stop_stream_endpoint",
        "create_cms_event",
        "update_cms_event",
        "delete_cms_event",
        "cms_event_action",
        "confirm_cms_event_on_device",
        "create_stream_endpoint",
        "update_stream_endpoint",
        "delete_stream_endpoint",
        "apply_team_preset",
        "switch_device_to_cms",
        "batch_reboot",
        "batch_firmware_update",
    }
)
"""The 15 write tools Epiphan's MCP server offers (EPIPHAN.md)."""

DEVICE_IDS_PER_CALL = 100
"""Most device IDs sent in one per-device read (the lab enforces 100; Epiphan's own cap is not
published, so Fleetwatch stays at or below it)."""

PARALLEL_READS = 4
"""Per-device reads in flight at once over one session."""

_AUTH_MARKERS = re.compile(
    r"\b401\b|unauthori[sz]ed|invalid_token|invalid token|token (?:has )?expired|expired token"
    r"|not authenticated|unauthenticated|sign[- ]?in required|login required",
    re.IGNORECASE,
)


class EpiphanError(FleetwatchError):
    """A read was refused by the guard or failed at Epiphan.

    Codes: `tool_not_allowed`, `unknown_tool` (guard, nothing sent); `epiphan_auth` (sign-in
    missing, expired or invalid); `epiphan_tool_error` (an error result); `epiphan_timeout`,
    `epiphan_unreachable`, `epiphan_bad_result`. ``tool`` names the tool.
    """

    def __init__(self, code: Code, tool: str, message: str) -> None:
        super().__init__(code, message)
        self.tool = tool


def is_auth_error_text(text: str) -> bool:
    """True when an error result's (or non-JSON answer's) text reports a sign-in problem."""
    return bool(_AUTH_MARKERS.search(text))


def read_result(raw: RawToolResult) -> Any:
    """The redacted data of a read result, or an `EpiphanError`.

    An error result with sign-in words → `epiphan_auth`; any other error result →
    `epiphan_tool_error` (its redacted text, capped at 300 characters, in the message).
    Non-JSON text with sign-in words → `epiphan_auth`; other non-JSON text is returned as a str.
    """
    if raw.is_error:
        text = redact_text(raw.text)[:300]
        if is_auth_error_text(raw.text):
            raise EpiphanError(Code.EPIPHAN_AUTH, raw.tool, f"{raw.tool}: Epiphan reports no valid sign-in")
        raise EpiphanError(Code.EPIPHAN_TOOL_ERROR, raw.tool, f"{raw.tool}: {text}")
    data = raw.data()
    if isinstance(data, str) and is_auth_error_text(data):
        raise EpiphanError(Code.EPIPHAN_AUTH, raw.tool, f"{raw.tool}: Epiphan reports no valid sign-in")
    return redact(data)


def guard(tool: str, read_tools: frozenset[str]) -> None:
    """Refuse a tool that is not on the read list. Runs before any byte is sent.

    Raises:
        EpiphanError: `unknown_tool` for a name Epiphan does not offer; `tool_not_allowed` for a
            write tool or a read tool the policy leaves off its read list.
    """
    if tool not in READ_TOOLS_OF_EPIPHAN and tool not in WRITE_TOOLS_OF_EPIPHAN:
        raise EpiphanError(Code.UNKNOWN_TOOL, tool, f"{tool!r}: no such Epiphan tool")
    if tool not in read_tools or tool in WRITE_TOOLS_OF_EPIPHAN:
        raise EpiphanError(
            Code.TOOL_NOT_ALLOWED, tool, f"{tool!r} is not on the read list; refused before sending"
        )


class EpiphanReadClient:
    """Reads one team through one sign-in, guarded and redacted.

    Args:
        connection: an `McpConnection` holding the read (or, in the executor, sandbox) sign-in.
        read_tools: the policy's read list (`ToolPolicy.read_tools`).
    """

    def __init__(self, connection: McpConnection, read_tools: frozenset[str]) -> None:
        self._connection = connection
        self._read_tools = frozenset(read_tools) & READ_TOOLS_OF_EPIPHAN

    async def __aenter__(self) -> EpiphanReadClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._connection.close()

    async def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call a read tool and return its redacted data (dict, list or str).

        Raises:
            EpiphanError: guard refusal (nothing sent) or a failed read; see the class docs.
        """
        guard(tool, self._read_tools)
        try:
            raw = await self._connection.call(tool, arguments)
        except FleetwatchError as exc:
            raise EpiphanError(exc.code, tool, exc.message) from exc
        return read_result(raw)

    async def snapshot(
        self,
        *,
        with_system: bool = True,
        with_events: bool = True,
        on_read: Callable[[str], None] | None = None,
    ) -> FleetSnapshot:
        """The team's devices, with recorder state, system status and current/next events.

        One device-list read, then the per-device reads in parallel. ``taken_at`` is the local
        UTC time when the device list came back. `on_read` is told the name of each read tool
        as it is called (the assistant's audit counts them).

        Raises:
            EpiphanError: any of the reads failed (a snapshot is never partly made up).
        """
        told = on_read or (lambda tool: None)
        told("get_devices_in_my_team")
        team_id, devices = _parse(
            "get_devices_in_my_team", parse_devices, await self.call("get_devices_in_my_team")
        )
        taken_at = datetime.now(UTC)
        ids = [d.id for d in devices]
        parsers: dict[str, Any] = {"get_recorder_status_for_devices": parse_recorder_status}
        if with_system:
            parsers["get_system_status_for_devices"] = parse_system_status
        if with_events:
            parsers["get_current_or_next_cms_events_for_devices"] = parse_events
        until = _until_next_day(taken_at)
        calls = [
            (tool, {"device_ids": chunk} | ({"until": until} if tool.endswith("events_for_devices") else {}))
            for tool in parsers
            for chunk in _chunks(ids, DEVICE_IDS_PER_CALL)
        ]
        limit = asyncio.Semaphore(PARALLEL_READS)

        async def read(tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
            async with limit:
                told(tool)
                return tool, _parse(tool, parsers[tool], await self.call(tool, arguments))

        merged: dict[str, dict[str, Any]] = {tool: {} for tool in parsers}
        for tool, part in await asyncio.gather(*(read(t, a) for t, a in calls)):
            merged[tool].update(part)
        devices = merge_recorder(devices, merged["get_recorder_status_for_devices"])
        return FleetSnapshot(
            team_id=team_id,
            devices=devices,
            system=merged.get("get_system_status_for_devices", {}),
            events=merged.get("get_current_or_next_cms_events_for_devices", {}),
            taken_at=taken_at,
        )

    async def stream_endpoints(
        self, *, digest: Callable[[Mapping[str, Any]], str] | None = None
    ) -> tuple[StreamEndpoint, ...]:
        """The team's stream destinations: ID, name and URL host only (never the key).

        With `digest` (the executor binding a card's facts), each endpoint also carries
        ``digest(entry)`` of its unredacted entry (full URL and key): the digest is computed
        here, before redaction, and the entry itself never leaves this method.

        Raises:
            EpiphanError: as `call`, or the result has no known shape.
        """
        tool = "get_stream_endpoints"
        if digest is None:
            return _parse(tool, parse_stream_endpoints, await self.call(tool))
        guard(tool, self._read_tools)
        try:
            raw = await self._connection.call(tool, None)
        except FleetwatchError as exc:
            raise EpiphanError(exc.code, tool, exc.message) from exc
        read_result(raw)  # raises for an error result or a sign-in problem, as every read
        return _parse(tool, lambda data: parse_stream_endpoints(data, digest=digest), raw.data())


def _parse(tool: str, parser: Any, data: Any) -> Any:
    try:
        return parser(data)
    except FleetwatchError as exc:
        log.warning("unreadable result shape from %s", tool)
        raise EpiphanError(exc.code, tool, exc.message) from exc


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _until_next_day(now: datetime) -> str:
    """Epiphan's ``until`` (UTC ``YYYY-MM-DDTHH:MM:SSZ``): 24 hours after ``now``."""
    return (now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
