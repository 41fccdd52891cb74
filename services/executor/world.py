"""The executor's fresh reads of the sandbox team, through the guarded read client.

`sandbox_connection` and `sandbox_session` are the only places in Fleetwatch that read the sandbox
token slot: the executor keeps one warm connection of it
(`shared.epiphan.signed_session.SignedConnection`, its MCP session kept while the slot holds the
same token), and the slot is read again before every operation and every read, so a removed or
replaced sign-in takes effect at once (a removed one closes the session). The connection
refreshes the sign-in before use when the slot says the token ended, a read Epiphan refuses
in-band (``epiphan_auth``) is repeated once after a refresh, and a read on a session the server
ended is sent once more on a new one; the write is never repeated and never opens a session
(`services.executor.write_client`). Every read here
fails closed: a read that fails, times out, or comes back in no known shape raises
`ExecutorError` with a refusal code (``device_list_unreadable`` for the device list,
``state_read_failed`` for everything else), never a guess.

Order at Execute (the service decides it): the device list first (team ID, membership,
allowlist, channels), the stream endpoint list, then the recorder status and the events last,
in parallel, straight before the write; the server's tool list is listed afresh beside those
last reads (`Beside`) and judged after their checks, as when it came after them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from services.executor import ExecutorError
from services.executor.checks import (
    DeviceList,
    Fence,
    Proposed,
    Refusal,
    destination_refusal,
    epiphan_time,
    membership_refusal,
    stream_refusal,
    target_states,
)
from shared.binding import TargetState
from shared.epiphan.fleet import (
    EVENTS,
    RECORDER,
    SYSTEM,
    Event,
    StreamEndpoint,
    SystemStatus,
    parse_devices,
    parse_events,
    parse_recorder_status,
    parse_system_status,
)
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_batches import DeviceReads
from shared.epiphan.read_client import EpiphanReadClient
from shared.epiphan.signed_session import SignedConnection, failed_codes
from shared.epiphan.slots import SignIn, SlotError, read_slot
from shared.errors import Code, FleetwatchError

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy

T = TypeVar("T")
EVENTS_HORIZON = timedelta(hours=24)
"""How far ahead ``get_current_or_next_cms_events_for_devices`` looks (its ``until``)."""


def sandbox_sign_in(slot: Path) -> SignIn:
    """The sandbox sign-in as stored in its token slot (no refresh; `Health` uses this).

    Raises:
        ExecutorError: ``no_sign_in`` when the slot is missing or unusable (wrong owner or mode,
            not a slot); the message names the slot's problem, never the token.
    """
    try:
        return read_slot(slot)
    except SlotError as exc:
        raise ExecutorError(Code.NO_SIGN_IN, f"No usable sandbox sign-in: {exc.message}") from exc


def sandbox_connection(slot: Path, default_url: str, *, timeout_seconds: float) -> SignedConnection:
    """The executor's one warm connection of the sandbox sign-in in `slot` (the slot's server,
    else `default_url`); nothing is read or opened until the first operation
    (`sandbox_session`). The executor closes it when it stops."""
    return SignedConnection(slot, default_url, timeout_seconds=timeout_seconds)


@contextlib.asynccontextmanager
async def sandbox_session(session: SignedConnection) -> AsyncIterator[SignedConnection]:
    """One operation on the warm sandbox connection `session` (``async with``): the slot is read
    first (refreshed when it says its token ended; a removed or unusable sign-in closes the
    session before any byte is sent); the session stays open after the block.

    Raises:
        ExecutorError: ``no_sign_in`` when the slot is missing or unusable, or its sign-in is
            dead or cannot be refreshed now (never the token in the message).
    """
    try:
        await session.current()
    except FleetwatchError as exc:  # SlotError, SignInError (its module loads with the first use)
        raise ExecutorError(Code.NO_SIGN_IN, f"No usable sandbox sign-in: {exc.message}") from exc
    yield session


@dataclass(frozen=True, slots=True)
class TargetReads:
    """The freshest per-target reads: recorder status (master ID -> channel -> recording),
    the current/next events (master ID -> Event or None) and, when asked, system status."""

    recorder: Mapping[str, Mapping[str, bool | None]]
    events: Mapping[str, Event | None]
    system: Mapping[str, SystemStatus]


async def _read(code: Code, what: str, read: Awaitable[T]) -> T:
    """`read`'s value; a failure is `ExecutorError` with `code` (every operation declares it),
    naming the read's own code: ``tool_changed`` when the read client refused a read tool whose
    reviewed definition changed (fail closed, as for any read that did not happen)."""
    try:
        return await read
    except FleetwatchError as exc:
        raise ExecutorError(code, f"{what} could not be read ({exc.code}): failing closed.") from exc


class SandboxReader:
    """Fresh reads of the sandbox team over `session` (guarded: the policy's `read_tools`; a
    read refused in-band is repeated once after a refresh). `clock` gives the current UTC time
    (for ``until``); `digest` makes each stream endpoint's keyed secret digest
    (`services.executor.facts`); `pins`: the tool policy whose reviewed definitions the
    server's tool list is held to on each session (`EpiphanReadClient`)."""

    def __init__(
        self,
        session: SignedConnection,
        read_tools: frozenset[str],
        clock: Callable[[], datetime],
        digest: Callable[[Mapping[str, Any]], str] | None = None,
        *,
        pins: ToolPolicy | None = None,
    ) -> None:
        self._session = session
        self._read_tools = read_tools
        self._clock = clock
        self._digest = digest
        self._pins = pins
        self._last: McpConnection | None = None

    @property
    def last_used(self) -> McpConnection:
        """The connection this reader's last read came back on (the executor's write goes
        there, straight after its last read: no slot read, no refresh, no new session in
        between; another operation's reads on the same warm connection do not move it).

        Raises:
            RuntimeError: nothing was read yet.
        """
        if self._last is None:
            raise RuntimeError("no connection: read before writing")
        return self._last

    def _through(
        self,
        op: Callable[[EpiphanReadClient], Awaitable[T]],
        failures: Callable[[T], Iterable[str]] | None = None,
    ) -> Awaitable[T]:
        """`SignedConnection.read` of `op`, noting the connection it came back on."""

        async def noted(client: EpiphanReadClient) -> T:
            result = await op(client)
            self._last = client.connection
            return result

        return self._session.read(self._read_tools, noted, failures=failures, pins=self._pins)

    async def definition_check(self, tool: str) -> None:
        """The server's tool list listed afresh on the session (the SDK does not notice a tool
        list that changed under a running session) and compared with the reviewed definitions:
        Prepare calls it before its reads, Execute straight before the write.

        Raises:
            ExecutorError: ``tool_changed`` naming what differs; ``state_read_failed`` when the
                list cannot be had (fail closed); ``internal_error`` without pins.
        """
        if self._pins is None:
            raise ExecutorError(Code.INTERNAL_ERROR, "no tool policy to hold the tool list to")
        report = await _read(
            Code.STATE_READ_FAILED,
            "Epiphan's tool list",
            self._through(lambda client: client.tool_report(fresh=True)),
        )
        changed = report.blocked(tool)
        if changed is not None:
            raise ExecutorError(
                Code.TOOL_CHANGED,
                f"Epiphan's definition of {changed.describe()} is not the one reviewed in the "
                "policy; nothing ran. A person reviews it (fleetwatch tools diff) and updates the "
                "policy first.",
            )

    def _call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Awaitable[Any]:
        return self._through(lambda client: client.call(tool, arguments))

    def _per_device(
        self,
        tool: str,
        ids: list[str],
        parser: Callable[[Any], Mapping[str, T]],
        arguments: Mapping[str, Any] | None = None,
    ) -> Awaitable[DeviceReads[T]]:
        """`EpiphanReadClient.per_device` over the session; a call refused for the sign-in
        repeats the whole read once after a refresh (`SignedConnection.read`'s `failures`)."""
        return self._through(
            lambda client: client.per_device(tool, ids, parser, arguments), failures=failed_codes
        )

    async def device_list(self) -> DeviceList:
        """``get_devices_in_my_team`` -> `DeviceList`. Raises `ExecutorError`
        (``device_list_unreadable``)."""
        data = await _read(
            Code.DEVICE_LIST_UNREADABLE,
            "The sandbox team's device list",
            self._call("get_devices_in_my_team"),
        )
        team_id, devices = await _read(
            Code.DEVICE_LIST_UNREADABLE, "The sandbox team's device list", _parsed(parse_devices, data)
        )
        return DeviceList(team_id=team_id, devices={d.id: d for d in devices})

    async def stream_endpoints(self) -> tuple[StreamEndpoint, ...]:
        """The sandbox team's stream endpoints (ID, name, URL host, secret digest). Raises
        `ExecutorError` (``state_read_failed``)."""
        return await _read(
            Code.STATE_READ_FAILED,
            "The sandbox team's stream destinations",
            self._through(lambda client: client.stream_endpoints(digest=self._digest)),
        )

    async def targets(self, targets: tuple[str, ...], *, with_system: bool = False) -> TargetReads:
        """Recorder status and current/next events of `targets` (and system status when
        `with_system`), read in parallel through the batching client (calls of at most 100 IDs,
        `shared.epiphan.read_client.EpiphanReadClient.per_device`), all or nothing: one call that fails or
        comes back in no known shape fails the whole read. Raises `ExecutorError`
        (``state_read_failed``)."""
        ids = list(targets)
        until = epiphan_time(self._clock() + EVENTS_HORIZON)
        reads: list[Awaitable[DeviceReads[Any]]] = [
            self._per_device(RECORDER, ids, parse_recorder_status),
            self._per_device(EVENTS, ids, parse_events, {"until": until}),
        ]
        if with_system:
            reads.append(self._per_device(SYSTEM, ids, parse_system_status))
        what = "The targets' recorder status and events"
        results = await _read(Code.STATE_READ_FAILED, what, _gather(reads))
        recorder, events, *system = [await _read(Code.STATE_READ_FAILED, what, _required(r)) for r in results]
        return TargetReads(recorder=recorder, events=events, system=system[0] if system else {})


async def _required(reads: DeviceReads[T]) -> dict[str, T]:
    return reads.require()


async def _gather(reads: list[Awaitable[Any]]) -> list[Any]:
    return list(await asyncio.gather(*reads))


async def _parsed(parser: Callable[[Any], T], data: Any) -> T:
    return parser(data)


class Beside:
    """One more read, started beside the last reads of an operation and judged after their
    checks (``async with Beside(work) as beside``): `start` sends it (once), `result` starts it
    if it was not and waits for its answer (its error raised then, in the operation's order of
    refusals). A block left without its `result` (a read failed or a check refused first)
    cancels it and waits for it to end: nothing of it outlives the block, and its error is not
    raised over the one that ended the block."""

    def __init__(self, work: Callable[[], Awaitable[Any]]) -> None:
        self._work = work
        self._task: asyncio.Future[Any] | None = None

    async def __aenter__(self) -> Beside:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def start(self) -> None:
        """Send the read now (a second call does nothing)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._work())

    async def result(self) -> Any:
        """The read's answer; its error is raised here."""
        self.start()
        assert self._task is not None
        return await self._task


def raise_refusal(refusal: Refusal | None) -> None:
    """Raise `ExecutorError` with the refusal's code and message, if there is one."""
    if refusal is not None:
        raise ExecutorError(refusal.code, refusal.message)


@dataclass(frozen=True, slots=True)
class World:
    """What Prepare and Execute read, in order: the device list, the stream endpoints (None
    when the call names no ``stream_id``), the targets' recorder status and events, and the
    fingerprint taken from them."""

    listed: DeviceList
    endpoints: tuple[StreamEndpoint, ...] | None
    reads: TargetReads
    states: dict[str, TargetState]


async def read_and_check(
    reader: SandboxReader,
    proposed: Proposed,
    fence: Fence,
    targets: tuple[str, ...],
    *,
    beside_last: Beside | None = None,
) -> World:
    """The reads Prepare and Execute make, each followed by its checks, in order: the device
    list (team ID, membership, allowlist, channel), the stream endpoints when the call names a
    ``stream_id`` (on the list; in use by another device or not streaming: `destination_refusal`), then the recorder status and events of `targets`, last (the fingerprint).
    `beside_last` is started with those last reads (the caller judges it after its checks).

    Raises:
        ExecutorError: the first refusal, or a failed read (fail closed).
    """
    listed = await reader.device_list()
    raise_refusal(membership_refusal(proposed, listed, fence))
    endpoints = None
    if "stream_id" in proposed.arguments:
        endpoints = await reader.stream_endpoints()
        raise_refusal(stream_refusal(proposed.arguments, endpoints))
        raise_refusal(destination_refusal(proposed.rule.tool, proposed.arguments, endpoints, listed.devices))
    if beside_last is not None:
        beside_last.start()
    reads = await reader.targets(targets)
    states = target_states(targets, listed.devices, reads.recorder, reads.events)
    if isinstance(states, Refusal):
        raise ExecutorError(states.code, states.message)
    return World(listed=listed, endpoints=endpoints, reads=reads, states=states)
