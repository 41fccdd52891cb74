"""The guarded read client for Epiphan Edge: the only way Fleetwatch reads a fleet.

Layers:
1. the **guard**: a tool not on the policy's ``read`` list is refused before a byte is sent
   (`Code.TOOL_NOT_ALLOWED`, or `Code.UNKNOWN_TOOL` for a name Epiphan does not have);
   with pins (the tool policy), **pinned definitions**: the server's tool list is listed and
   compared with the reviewed one (`shared.policy.definitions`) whenever the next call would go
   on a session not yet looked at (each session the connection opens; the MCP SDK keeps no list
   we trust, and a server can change its list under a running client), and on demand
   (`EpiphanReadClient.tool_report` with ``fresh``: the executor, on its warm session, at
   Prepare and straight before each write); a read tool whose reviewed definition changed is
   refused (`Code.TOOL_CHANGED`, nothing sent);
2. one call through `shared.epiphan.mcp_session.McpConnection`;
3. result reading: an error result raises; in-band sign-in errors are detected only in error
   results or non-JSON text, never in JSON data (a room may be called "Room 401");
4. **redaction** of every result (`shared.epiphan.redact`);
5. parsing, in known shapes only, into a `shared.epiphan.fleet.FleetSnapshot`;
6. **batching**: every per-device read of many devices goes out in calls of at most
   `DEVICE_IDS_PER_CALL` IDs (`EpiphanReadClient.chunks`, `per_device`, `call_batched`): the
   snapshot, the executor's checks, the assistant's reads and the watch use the same method.

Writes are never possible here: there is no code path from this class to a write tool. The
executor has its own write client and its own sign-in.
"""

from __future__ import annotations

import asyncio
import logging
import re
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from shared.epiphan.capture_redact import CaptureRedactor, verified
from shared.epiphan.fleet import (
    DEVICES,
    ENDPOINTS,
    EVENTS,
    RECORDER,
    SYSTEM,
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
from shared.epiphan.read_batches import BatchedRead, Chunk, DeviceReads, merge_results
from shared.epiphan.redact import redact, redact_parsed, redact_text
from shared.errors import Code, FleetwatchError
from shared.policy.definitions import ToolReport, compare_tools

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy

log = logging.getLogger(__name__)
T = TypeVar("T")

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
    r"|not authenticated|unauthenticated|sign[- ]?in required|login required|\bforbidden\b",
    re.IGNORECASE,
)
"""Sign-in words: a 401, or ``FORBIDDEN``, the other form a missing or dead sign-in takes in a
live tool result (EPIPHAN.md). A plan refusal (`is_plan_error_text`) is told apart first."""


_PLAN = r"(?:plan|subscription|licen[cs]e|tier)"
_PLAN_MARKERS = re.compile(
    r"\bpremium\b"
    rf"|\b{_PLAN}[_ -]?(?:required|needed|insufficient)\b"
    r"|\bupgrade[_ -]?required\b"
    rf"|(?<![a-z])(?:not|outside)[_ ](?:in|of)[_ ](?:your[_ ]|the[_ ])?{_PLAN}\b"
    rf"|\b{_PLAN}\b.{{0,60}}?\b(?:requir\w*|allow\w*|includ\w*|permit\w*|upgrad\w*|support\w*)\b"
    rf"|\b(?:requir\w*|upgrad\w*|needs?|not included|not available)\b.{{0,60}}?\b{_PLAN}\b",
    re.IGNORECASE | re.DOTALL,
)
"""Plan words: Epiphan refuses a write for a team without the Epiphan Edge Premium plan with a
permission/plan error whose exact wording is unconfirmed (EPIPHAN.md), so any text naming the
Premium plan, a plan, subscription, licence or tier next to a requirement (``plan_required``,
"not included in your plan", "requires a higher plan"), or an upgrade required, counts; a bare
403 or ``FORBIDDEN`` does not (that is a dead sign-in)."""


class EpiphanError(FleetwatchError):
    """A read was refused by the guard or failed at Epiphan.

    Codes: `tool_not_allowed`, `unknown_tool` (guard, nothing sent); `tool_changed` (the
    server's definition of the tool differs from the reviewed one; nothing sent); `epiphan_auth` (sign-in
    missing, expired or invalid); `epiphan_tool_error` (an error result); `epiphan_timeout`,
    `epiphan_unreachable`, `epiphan_bad_result`. ``tool`` names the tool.
    """

    def __init__(self, code: Code, tool: str, message: str) -> None:
        super().__init__(code, message)
        self.tool = tool


def is_auth_error_text(text: str) -> bool:
    """True when an error result's (or non-JSON answer's) text reports a sign-in problem (a
    401, ``FORBIDDEN``...), and is not a plan refusal (`is_plan_error_text`)."""
    return bool(_AUTH_MARKERS.search(text)) and not is_plan_error_text(text)


def is_plan_error_text(text: str) -> bool:
    """True when an error text says the team's plan does not allow the call (a write on a team
    without Epiphan Edge Premium), told apart from a dead sign-in and from other errors."""
    return bool(_PLAN_MARKERS.search(text))


def read_result(raw: RawToolResult, *, stable: CaptureRedactor | None = None) -> Any:
    """The redacted data of a read result, or an `EpiphanError`. Redacted by `shared.epiphan.redact`,
    or, for a capture, by `stable` (its placeholders) and then checked by
    `shared.epiphan.capture_redact.verified`, so never less than by `shared.epiphan.redact`.

    An error result with sign-in words → `epiphan_auth`; any other error result →
    `epiphan_tool_error` (its redacted text, capped at 300 characters, in the message).
    Non-JSON text with sign-in words → `epiphan_auth`; other non-JSON text is returned as a str.
    """
    data = unredacted_result(raw)
    if stable is None:
        return redact(data)
    if not isinstance(stable, CaptureRedactor):
        raise TypeError("stable must be a CaptureRedactor")  # no other redaction is accepted
    return verified(stable(data))


def unredacted_result(raw: RawToolResult) -> Any:
    """`read_result` before redaction: for a caller that parses first and redacts what it kept
    (`redact_parsed`), and never lets the data itself go anywhere."""
    if raw.is_error:
        text = redact_text(raw.text)[:300]
        if is_auth_error_text(raw.text):
            raise EpiphanError(Code.EPIPHAN_AUTH, raw.tool, f"{raw.tool}: Epiphan reports no valid sign-in")
        raise EpiphanError(Code.EPIPHAN_TOOL_ERROR, raw.tool, f"{raw.tool}: {text}")
    data = raw.data()
    if isinstance(data, str) and is_auth_error_text(data):
        raise EpiphanError(Code.EPIPHAN_AUTH, raw.tool, f"{raw.tool}: Epiphan reports no valid sign-in")
    return data


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


class _Pinned:
    """One connection's last look at the server's tool list: the session it was taken on (its
    `McpConnection.sessions` count) and the comparison, behind a lock (parallel reads on a new
    session list the tools once)."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.session = -1
        self.policy: ToolPolicy | None = None
        self.report: ToolReport | None = None


_PINNED: weakref.WeakKeyDictionary[McpConnection, _Pinned] = weakref.WeakKeyDictionary()


class EpiphanReadClient:
    """Reads one team through one sign-in, guarded and redacted.

    Args:
        connection: an `McpConnection` holding the read (or, in the executor, sandbox) sign-in.
        read_tools: the policy's read list (`ToolPolicy.read_tools`).
        pins: the tool policy whose reviewed definitions the server's tool list is held to
            (`shared.policy.definitions`). With it, the tool list is listed and compared on
            each session the connection opens, before the first call on it, and a read tool
            whose definition differs from the reviewed one is refused (`tool_changed`, nothing
            sent). Differences are logged once per session.

    Per-device reads of many devices go through `per_device` (parsed, for snapshots and the
    executor's checks) or `call_batched` (raw, for the model): both split the IDs into calls of
    at most `DEVICE_IDS_PER_CALL` (Epiphan's per-call limit), at most `PARALLEL_READS` in
    flight for the whole client.
    """

    def __init__(
        self, connection: McpConnection, read_tools: frozenset[str], *, pins: ToolPolicy | None = None
    ) -> None:
        self._connection = connection
        self._read_tools = frozenset(read_tools) & READ_TOOLS_OF_EPIPHAN
        self._pins = pins
        self._limit = asyncio.Semaphore(PARALLEL_READS)

    @property
    def connection(self) -> McpConnection:
        """The connection this client reads over."""
        return self._connection

    async def __aenter__(self) -> EpiphanReadClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._connection.close()

    async def tool_report(self, policy: ToolPolicy | None = None, *, fresh: bool = False) -> ToolReport:
        """The server's tool list (``tools/list`` on this client's connection) compared with
        the reviewed definitions of `policy` (default: the client's `pins`). Kept per
        connection, session and policy: listed again when `fresh`, when the connection has no
        open session (listing opens the one the next call goes on) or opened another since, or
        for another policy (a person reviewed a change).

        Raises:
            EpiphanError: the list could not be had (``epiphan_*``, tool ``tools/list``).
            ValueError: no `policy` and no pins (a programming error).
        """
        held = policy if policy is not None else self._pins
        if held is None:
            raise ValueError("no tool policy to compare the tool list with")
        pinned = _PINNED.setdefault(self._connection, _Pinned())
        if fresh:
            # Listed outside the lock: reads going out beside it (the executor lists the tools
            # beside its last reads) keep this session's report and do not wait for the list.
            listed = await self._listed()
            async with pinned.lock:
                return self._pin(pinned, held, listed)
        async with pinned.lock:
            same = (
                self._connection.is_open
                and pinned.session == self._connection.sessions
                and held is pinned.policy
            )
            if pinned.report is not None and same:
                return pinned.report
            return self._pin(pinned, held, await self._listed())

    async def _listed(self) -> list[dict[str, Any]]:
        """``tools/list`` on this client's connection. Raises `EpiphanError` (``epiphan_*``)."""
        try:
            return await self._connection.list_tools()
        except FleetwatchError as exc:
            raise EpiphanError(exc.code, "tools/list", exc.message) from exc

    def _pin(self, pinned: _Pinned, held: ToolPolicy, listed: list[dict[str, Any]]) -> ToolReport:
        """`listed` compared with `held`'s reviewed definitions, kept as the connection's report
        for its current session (differences logged when the session or the report is new)."""
        report = compare_tools(listed, held)
        if self._connection.sessions != pinned.session or report != pinned.report:
            for difference in report.differences:
                log.warning("Epiphan's tool list differs from the reviewed one: %s", difference.describe())
        pinned.session, pinned.policy, pinned.report = self._connection.sessions, held, report
        return report

    async def _held_to_pins(self, tool: str) -> None:
        """`tool_changed` when the pins are set and `tool`'s definition differs from the
        reviewed one (the tool list taken on this session first)."""
        if self._pins is None:
            return
        changed = (await self.tool_report()).blocked(tool)
        if changed is not None:
            raise EpiphanError(
                Code.TOOL_CHANGED,
                tool,
                f"Epiphan's definition of {changed.describe()} is not the reviewed one; "
                "not called until a person reviews it (fleetwatch tools diff)",
            )

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        stable: CaptureRedactor | None = None,
    ) -> Any:
        """Call a read tool and return its redacted data (dict, list or str). One call, as
        given: a per-device read of more than 100 devices goes through `per_device` or
        `call_batched`. With `stable` (``fleetwatch capture``) the data carries its stable
        placeholders instead of ``[redacted]``, addresses and serial numbers too, checked to be
        never less redacted (`read_result`).

        Raises:
            EpiphanError: guard refusal (nothing sent) or a failed read; see the class docs.
        """
        return read_result(await self._raw(tool, arguments), stable=stable)

    async def _unredacted(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """`call` before redaction (the guard first, as always); never returned to a caller."""
        return unredacted_result(await self._raw(tool, arguments))

    async def _raw(self, tool: str, arguments: Mapping[str, Any] | None = None) -> RawToolResult:
        """The guard, the pinned definitions, then one call (never repeated here: a read on a
        warm session the server ended is repeated by
        `shared.epiphan.signed_session.SignedConnection.read`)."""
        guard(tool, self._read_tools)
        await self._held_to_pins(tool)
        try:
            return await self._connection.call(tool, arguments)
        except FleetwatchError as exc:
            raise EpiphanError(exc.code, tool, exc.message) from exc

    async def chunks(
        self,
        tool: str,
        device_ids: Sequence[str],
        arguments: Mapping[str, Any] | None = None,
        *,
        stable: CaptureRedactor | None = None,
        on_read: Callable[[str], None] | None = None,
    ) -> list[Chunk]:
        """Read `tool` for `device_ids` in calls of at most `DEVICE_IDS_PER_CALL` IDs (each
        with `arguments` and its ``device_ids``), in order; a failed call is a `Chunk` with its
        error, never an exception. The guard runs first: a refused tool raises before any call.
        `on_read` is told the tool's name as each call goes out.

        Raises:
            EpiphanError: the guard refused the tool (nothing sent).
        """
        return await self._chunks(
            tool, device_ids, arguments, lambda sent: self.call(tool, sent, stable=stable), on_read
        )

    async def _chunks(
        self,
        tool: str,
        device_ids: Sequence[str],
        arguments: Mapping[str, Any] | None,
        read: Callable[[dict[str, Any]], Awaitable[Any]],
        on_read: Callable[[str], None] | None,
    ) -> list[Chunk]:
        """`chunks`, each call made by `read` (given its arguments)."""
        guard(tool, self._read_tools)
        ids = list(dict.fromkeys(device_ids))
        parts = [tuple(ids[i : i + DEVICE_IDS_PER_CALL]) for i in range(0, len(ids), DEVICE_IDS_PER_CALL)]

        async def one(part: tuple[str, ...]) -> Chunk:
            sent = {**(arguments or {}), "device_ids": list(part)}
            async with self._limit:
                if on_read is not None:
                    on_read(tool)
                try:
                    data = await read(sent)
                except EpiphanError as exc:
                    return Chunk(part, sent, datetime.now(UTC), error=exc)
            return Chunk(part, sent, datetime.now(UTC), data=data)

        return list(await asyncio.gather(*(one(part) for part in parts)))

    async def per_device(
        self,
        tool: str,
        device_ids: Sequence[str],
        parser: Callable[[Any], Mapping[str, T]],
        arguments: Mapping[str, Any] | None = None,
        *,
        on_read: Callable[[str], None] | None = None,
    ) -> DeviceReads[T]:
        """`tool` read for `device_ids` (`chunks`), each call's result parsed by `parser`
        (`shared.epiphan.fleet`: {master ID: value}) and merged. A call that failed, or whose result
        has no known shape, is in ``failed``; the others are in ``values``. `on_read` as in
        `chunks`. Each result is parsed as it comes back, first, and only what was kept is
        redacted (`redact_parsed`, as `snapshot` does with the device list): the same values
        as redacting the whole result first, without walking and copying every field of it.

        Raises:
            EpiphanError: the guard refused the tool (nothing sent).
        """
        values: dict[str, T] = {}
        failed: list[Chunk] = []

        async def parsed(sent: dict[str, Any]) -> dict[str, T]:
            # As each call comes back, while the others are still under way.
            found = _parse(tool, parser, await self._unredacted(tool, sent))
            return {key: redact_parsed(value) for key, value in found.items()}

        for chunk in await self._chunks(tool, device_ids, arguments, parsed, on_read):
            if chunk.error is not None:
                failed.append(chunk)
            else:
                values.update(chunk.data)
        return DeviceReads(tool, values, tuple(failed))

    async def call_batched(self, tool: str, arguments: Mapping[str, Any] | None = None) -> BatchedRead:
        """`call`, except that a per-device read naming more than `DEVICE_IDS_PER_CALL` devices
        is split (`chunks`) and its answers merged (`merge_results`); the calls that failed are
        in ``failed``.

        Raises:
            EpiphanError: the guard refused the tool, the one call failed, or every call failed.
        """
        ids = (arguments or {}).get("device_ids")
        if not isinstance(ids, list) or len(ids) <= DEVICE_IDS_PER_CALL:
            return BatchedRead(await self.call(tool, arguments))
        rest = {k: v for k, v in (arguments or {}).items() if k != "device_ids"}
        chunks = await self.chunks(tool, [str(i) for i in ids], rest)
        worked = [c.data for c in chunks if c.error is None]
        failed = tuple(c for c in chunks if c.error is not None)
        if not worked:
            assert failed[0].error is not None
            raise failed[0].error
        return BatchedRead(merge_results(worked), failed)

    async def snapshot(
        self,
        *,
        with_system: bool = True,
        with_events: bool = True,
        on_read: Callable[[str], None] | None = None,
    ) -> FleetSnapshot:
        """The team's devices, with recorder state, system status and current/next events.

        One device-list read, then the per-device reads in parallel (`per_device`). ``taken_at``
        is the local UTC time when the device list came back. A per-device read that fails (or
        comes back in no known shape) leaves its part out and names it in ``unread``: the
        snapshot shows what was read and marks what was not. `on_read` is told the name of each
        read tool as it is called, once per call (the assistant's audit counts them).
        The device list (a few MiB for a few thousand devices) is parsed first and only what was
        kept is redacted (`redact_parsed`): the same result as redacting it whole first, without
        walking and copying every field.

        Raises:
            EpiphanError: the device list could not be read (then nothing is known), or Epiphan
                reported no valid sign-in (``epiphan_auth``) on any read.
        """
        told = on_read or (lambda tool: None)
        told(DEVICES)
        team_id, devices = redact_parsed(_parse(DEVICES, parse_devices, await self._unredacted(DEVICES)))
        taken_at = datetime.now(UTC)
        ids = [d.id for d in devices]
        reads: list[Any] = [self.per_device(RECORDER, ids, parse_recorder_status, on_read=on_read)]
        if with_system:
            reads.append(self.per_device(SYSTEM, ids, parse_system_status, on_read=on_read))
        if with_events:
            reads.append(
                self.per_device(
                    EVENTS, ids, parse_events, {"until": _until_next_day(taken_at)}, on_read=on_read
                )
            )
        done: list[DeviceReads[Any]] = list(await asyncio.gather(*reads))
        for chunk in (c for r in done for c in r.failed):
            if chunk.error is not None and chunk.error.code == Code.EPIPHAN_AUTH:
                raise chunk.error  # the sign-in, not one answer: the caller signs in afresh
        by_tool = {r.tool: r for r in done}
        unread = tuple(u for r in done if (u := r.unread()) is not None)
        for part in unread:
            log.warning("%s could not be read (%s); the snapshot marks it", part.tool, part.code)
        return FleetSnapshot(
            team_id=team_id,
            devices=merge_recorder(devices, by_tool[RECORDER].values),
            system=by_tool[SYSTEM].values if SYSTEM in by_tool else {},
            events=by_tool[EVENTS].values if EVENTS in by_tool else {},
            taken_at=taken_at,
            unread=unread,
        )

    async def stream_endpoints(
        self, *, digest: Callable[[Mapping[str, Any]], str] | None = None
    ) -> tuple[StreamEndpoint, ...]:
        """The team's stream destinations: ID, name and URL host only (never the key).

        With `digest` (the executor binding a card's facts), each endpoint also carries
        ``digest(entry)`` of its unredacted entry (full URL and key): the digest is computed
        here, before redaction, and the entry itself never leaves this method; what it returns
        is redacted as every other read (a secret in a destination's name never reaches a card).

        Raises:
            EpiphanError: as `call`, or the result has no known shape.
        """
        tool = ENDPOINTS
        if digest is None:
            return _parse(tool, parse_stream_endpoints, await self.call(tool))
        raw = await self._raw(tool)
        read_result(raw)  # raises for an error result or a sign-in problem, as every read
        parsed = _parse(tool, lambda data: parse_stream_endpoints(data, digest=digest), raw.data())
        return redact_parsed(parsed)  # the digest saw the unredacted entry; the names are redacted


def _parse(tool: str, parser: Any, data: Any) -> Any:
    try:
        return parser(data)
    except FleetwatchError as exc:
        log.warning("unreadable result shape from %s", tool)
        raise EpiphanError(exc.code, tool, exc.message) from exc


def _until_next_day(now: datetime) -> str:
    """Epiphan's ``until`` (UTC ``YYYY-MM-DDTHH:MM:SSZ``): 24 hours after ``now``."""
    return (now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
