"""The executor's fresh reads of the sandbox team, through the guarded read client.

`WarmSandbox` is the only place in Fleetwatch that reads the sandbox token slot: a fresh read
for every operation, so a removed or replaced sign-in takes effect at once, while the MCP
session itself stays open between operations as long as the token is the same. Every read here
fails closed: a read that fails, times out, or comes back in no known shape raises
`ExecutorError` with a refusal code (``device_list_unreadable`` for the device list,
``state_read_failed`` for everything else), never a guess.

Order at Execute (the service decides it): the device list first (team ID, membership,
allowlist, channels), the stream endpoint list, then the recorder status and the events last,
in parallel, straight before the write.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from services.executor import ExecutorError
from services.executor.checks import (
    DeviceList,
    Fence,
    Proposed,
    Refusal,
    epiphan_time,
    membership_refusal,
    stream_refusal,
    target_states,
)
from shared.binding import TargetState
from shared.epiphan.fleet import (
    Event,
    StreamEndpoint,
    SystemStatus,
    parse_devices,
    parse_events,
    parse_recorder_status,
    parse_system_status,
)
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.epiphan.slots import SignIn, SlotError, read_slot
from shared.epiphan.warm_session import WarmSession
from shared.errors import Code, FleetwatchError

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


class WarmSandbox:
    """The sandbox sign-in's warm session (`shared.epiphan.warm_session.WarmSession`): one MCP
    session kept between operations while the slot holds the same token, the slot read again
    before each operation, so a removed sign-in is refused (``no_sign_in``) before any byte is
    sent and its session closed at once."""

    def __init__(self, slot: Path, default_url: str, *, timeout_seconds: float) -> None:
        self._session = WarmSession(slot, default_url, timeout_seconds=timeout_seconds)

    @contextlib.asynccontextmanager
    async def use(self) -> AsyncIterator[McpConnection]:
        """The connection of the slot's current token, for one operation (``async with``); it
        stays open after the block.

        Raises:
            ExecutorError: ``no_sign_in`` when the slot is missing, unusable or its sign-in is
                dead or cannot be refreshed now (never the token in the message).
        """
        try:
            connection = await self._session.current()
        except FleetwatchError as exc:
            raise ExecutorError(Code.NO_SIGN_IN, f"No usable sandbox sign-in: {exc.message}") from exc
        yield connection

    async def close(self) -> None:
        """Close the session (idempotent); the executor calls it when it stops."""
        await self._session.close()


@dataclass(frozen=True, slots=True)
class TargetReads:
    """The freshest per-target reads: recorder status (master ID -> channel -> recording),
    the current/next events (master ID -> Event or None) and, when asked, system status."""

    recorder: Mapping[str, Mapping[str, bool | None]]
    events: Mapping[str, Event | None]
    system: Mapping[str, SystemStatus]


async def _read(code: Code, what: str, read: Awaitable[T]) -> T:
    try:
        return await read
    except FleetwatchError as exc:
        raise ExecutorError(code, f"{what} could not be read ({exc.code}): failing closed.") from exc


class SandboxReader:
    """Fresh reads of the sandbox team. `clock` gives the current UTC time (for ``until``);
    `digest` makes each stream endpoint's keyed secret digest (`services.executor.facts`)."""

    def __init__(
        self,
        client: EpiphanReadClient,
        clock: Callable[[], datetime],
        digest: Callable[[Mapping[str, Any]], str] | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self._digest = digest

    async def device_list(self) -> DeviceList:
        """``get_devices_in_my_team`` -> `DeviceList`. Raises `ExecutorError`
        (``device_list_unreadable``)."""
        data = await _read(
            Code.DEVICE_LIST_UNREADABLE,
            "The sandbox team's device list",
            self._client.call("get_devices_in_my_team"),
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
            self._client.stream_endpoints(digest=self._digest),
        )

    async def targets(self, targets: tuple[str, ...], *, with_system: bool = False) -> TargetReads:
        """Recorder status and current/next events of `targets` (and system status when
        `with_system`), read in parallel. Raises `ExecutorError` (``state_read_failed``)."""
        ids = list(targets)
        until = epiphan_time(self._clock() + EVENTS_HORIZON)
        reads: list[Awaitable[Any]] = [
            self._client.call("get_recorder_status_for_devices", {"device_ids": ids}),
            self._client.call(
                "get_current_or_next_cms_events_for_devices", {"device_ids": ids, "until": until}
            ),
        ]
        if with_system:
            reads.append(self._client.call("get_system_status_for_devices", {"device_ids": ids}))
        what = "The targets' recorder status and events"
        results = await _read(Code.STATE_READ_FAILED, what, _gather(reads))
        recorder = await _read(Code.STATE_READ_FAILED, what, _parsed(parse_recorder_status, results[0]))
        events = await _read(Code.STATE_READ_FAILED, what, _parsed(parse_events, results[1]))
        system = (
            await _read(Code.STATE_READ_FAILED, what, _parsed(parse_system_status, results[2]))
            if with_system
            else {}
        )
        return TargetReads(recorder=recorder, events=events, system=system)


async def _gather(reads: list[Awaitable[Any]]) -> list[Any]:
    return list(await asyncio.gather(*reads))


async def _parsed(parser: Callable[[Any], T], data: Any) -> T:
    return parser(data)


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
    reader: SandboxReader, proposed: Proposed, fence: Fence, targets: tuple[str, ...]
) -> World:
    """The reads Prepare and Execute make, each followed by its checks, in order: the device
    list (team ID, membership, allowlist, channel), the stream endpoints when the call names a
    ``stream_id``, then the recorder status and events of `targets`, last (the fingerprint).

    Raises:
        ExecutorError: the first refusal, or a failed read (fail closed).
    """
    listed = await reader.device_list()
    raise_refusal(membership_refusal(proposed, listed, fence))
    endpoints = None
    if "stream_id" in proposed.arguments:
        endpoints = await reader.stream_endpoints()
        raise_refusal(stream_refusal(proposed.arguments, endpoints))
    reads = await reader.targets(targets)
    states = target_states(targets, listed.devices, reads.recorder, reads.events)
    if isinstance(states, Refusal):
        raise ExecutorError(states.code, states.message)
    return World(listed=listed, endpoints=endpoints, reads=reads, states=states)
