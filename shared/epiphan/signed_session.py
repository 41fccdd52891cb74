"""Reading Epiphan through the sign-in of one slot: one warm MCP session, refreshed when the
sign-in has ended.

**One warm session per sign-in** (issue 14). `SignedConnection.current` reads the slot again
before every operation and every read (a file of a few hundred bytes) and returns the connection
of its token, the same one while the token is the same, so its MCP session stays open between
operations:

- a sign-in removed from the slot, unsafe or dead **closes the session at once**, and the error
  comes back before any byte is sent: a removed sign-in stops the next read and the next write
  at once, warm session or not; a read still running on that session cannot open another
  (`McpConnection.retire`);
- a replaced token (rotated, refreshed, another sign-in) closes the old session the same way and
  opens one with the new token;
- a session the server ended (it reaped an idle one, or restarted: ``epiphan_unreachable`` on a
  connection that answered before) is dropped and **that read** is run once more on a new one,
  the slot read again first; a write never comes here, never opens a session and is never
  repeated (`services.executor.write_client`: on a session that died it is ``unknown``).

Two ways a token ends, two answers:

- **The slot says so** (its ``expires_at``, on this machine's clock, is within a minute):
  `SignedConnection.current` refreshes before use (`shared.epiphan.signin.fresh_sign_in`), and a
  connection opened with an older token is replaced, so a warm connection never keeps a token
  the slot has moved past.
- **Epiphan says so** (an in-band sign-in refusal, ``epiphan_auth``, although the local clock
  said the token was valid; or it was revoked): `SignedConnection.read` refreshes once
  (`shared.epiphan.signin.refresh_refused`: under the slot's lock, or the token another process just
  stored) and repeats **that read** once. A write is never repeated: it has no path through
  here (`services.executor.write_client` calls its connection once).

Refresh tokens rotate, so every refresh holds the slot's inter-process lock
(`shared.epiphan.slots.locked_slot`). A sign-in that cannot refresh (a static or lab token) leaves the
refusal as it was.

Users: the assistant (the read slot), ``fleetwatch fleet`` and ``fleetwatch doctor --live`` run
where the CLI may read a slot, and the executor (the sandbox slot, its own only: it alone passes
that path here).

Errors: `shared.epiphan.slots.SlotError`, `shared.epiphan.signin.SignInError` (opening or refreshing the
sign-in), `shared.epiphan.read_client.EpiphanError` (the read).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_batches import BatchedRead, DeviceReads
from shared.epiphan.read_client import EpiphanReadClient
from shared.epiphan.sdk_import import import_client
from shared.errors import Code, FleetwatchError

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy

log = logging.getLogger(__name__)
T = TypeVar("T")

REOPEN_ON = frozenset({Code.EPIPHAN_UNREACHABLE, Code.EPIPHAN_TIMEOUT})
"""A read failing so drops the connection: the next one opens afresh. The read itself is repeated
only when the connection was warm and the session is gone (``epiphan_unreachable``)."""


async def _signin() -> ModuleType:
    """`shared.epiphan.signin`. It brings the OAuth stack (the MCP SDK's auth, pydantic,
    httpx2), so it loads with the first use, not while a service waits for one (issue 14: idle
    memory), in a thread (the event loop keeps answering while it loads), and without the SDK's
    server side (`shared.epiphan.sdk_import`)."""
    if "shared.epiphan.signin" not in sys.modules:
        await asyncio.to_thread(import_client, "shared.epiphan.signin")
    from shared.epiphan import signin

    return signin


class SignedConnection:
    """The MCP connection of the sign-in in `slot` (see the module doc).

    Args:
        slot: a token slot this process may read.
        default_server: the MCP URL when the slot names none.
        timeout_seconds: bound on each call and on connecting.
    """

    def __init__(self, slot: Path, default_server: str, *, timeout_seconds: float = 30.0) -> None:
        self.slot = slot
        self._default_server = default_server
        self._timeout = timeout_seconds
        self._connection: McpConnection | None = None
        self._token: str | None = None
        self._lock = asyncio.Lock()
        self.refreshed = 0
        """How many times a refused token was refreshed here (for tests and doctor)."""

    async def __aenter__(self) -> SignedConnection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def last_used(self) -> McpConnection:
        """The connection the last read went through, as it is (the executor's write goes
        there, straight after its last read: no slot read, no refresh in between).

        Raises:
            RuntimeError: nothing was read yet.
        """
        if self._connection is None:
            raise RuntimeError("no connection: read before writing")
        return self._connection

    async def current(self) -> McpConnection:
        """The connection of the slot's current token, refreshed first when the slot says it
        ended; a connection of an older token is closed (retired) and replaced, and a slot
        that holds no usable sign-in closes the connection before the error comes back.

        Raises:
            SlotError / SignInError: as `shared.epiphan.signin.fresh_sign_in`.
        """
        signin = await _signin()
        async with self._lock:
            try:
                sign_in = await signin.fresh_sign_in(self.slot)
            except FleetwatchError:
                await self._retire_locked()
                raise
            if self._connection is not None and sign_in.access_token == self._token:
                return self._connection
            await self._retire_locked()
            self._connection = McpConnection(
                sign_in.server or self._default_server, sign_in.access_token, timeout_seconds=self._timeout
            )
            self._token = sign_in.access_token
            return self._connection

    async def _retire_locked(self) -> None:
        connection, self._connection, self._token = self._connection, None, None
        if connection is not None:
            await connection.retire()

    async def _after_refusal(self, refused: McpConnection) -> McpConnection | None:
        """A connection with a token refreshed after `refused`'s was refused in-band, or None
        when the sign-in cannot refresh."""
        signin = await _signin()
        async with self._lock:
            if self._connection is not refused and self._connection is not None:
                return self._connection  # another read already refreshed
            fresh = await signin.refresh_refused(self.slot, self._token or "")
            if fresh is None:
                return None
            self.refreshed += 1
            log.info("Epiphan refused the token of %s in-band; refreshed it", self.slot.name)
            await self._retire_locked()
            self._connection = McpConnection(
                fresh.server or self._default_server, fresh.access_token, timeout_seconds=self._timeout
            )
            self._token = fresh.access_token
            return self._connection

    async def _drop(self, connection: McpConnection) -> None:
        async with self._lock:
            if self._connection is connection:
                self._connection, self._token = None, None
        await connection.retire()

    async def read(
        self,
        read_tools: frozenset[str],
        op: Callable[[EpiphanReadClient], Awaitable[T]],
        *,
        failures: Callable[[T], Iterable[str]] | None = None,
        pins: ToolPolicy | None = None,
    ) -> T:
        """Run the read `op` with a guarded read client on the current connection (the slot read
        first); after an in-band sign-in refusal, refresh once and run it once more; on a warm
        connection whose session is gone, run it once more on a new one (see the module doc).

        `failures` gives the codes of the parts of a result that could not be read (a batched
        read's failed calls, a snapshot's unread parts: `shared.epiphan.read_batches`): a part
        refused for the sign-in counts as the read refused (refresh, run once more), and one
        that lost the connection drops it, as when the whole read raises. `pins`: the tool
        policy the read client holds the server's tool list to (`EpiphanReadClient`).

        Raises:
            EpiphanError: the read failed (a second refusal included).
            SlotError / SignInError: the sign-in could not be had or refreshed.
        """
        return await self._read(read_tools, op, failures, warm_retry=True, pins=pins)

    async def _read(
        self,
        read_tools: frozenset[str],
        op: Callable[[EpiphanReadClient], Awaitable[T]],
        failures: Callable[[T], Iterable[str]] | None,
        *,
        warm_retry: bool,
        pins: ToolPolicy | None = None,
    ) -> T:
        connection = await self.current()
        warm = warm_retry and connection.answered > 0
        try:
            result = await op(EpiphanReadClient(connection, read_tools, pins=pins))
        except FleetwatchError as exc:
            if exc.code in REOPEN_ON:
                await self._drop(connection)
            if warm and exc.code is Code.EPIPHAN_UNREACHABLE:
                log.info("the warm session of %s was gone; the read runs once more", self.slot.name)
                return await self._read(read_tools, op, failures, warm_retry=False, pins=pins)
            if exc.code is not Code.EPIPHAN_AUTH:
                raise
            fresh = await self._after_refusal(connection)
            if fresh is None:
                raise
            return await op(EpiphanReadClient(fresh, read_tools, pins=pins))
        codes = set(failures(result)) if failures is not None else set()
        if codes & REOPEN_ON:
            await self._drop(connection)
        if warm and Code.EPIPHAN_UNREACHABLE in codes:
            log.info("the warm session of %s was gone; the read runs once more", self.slot.name)
            return await self._read(read_tools, op, failures, warm_retry=False, pins=pins)
        if Code.EPIPHAN_AUTH in codes:
            fresh = await self._after_refusal(connection)
            if fresh is not None:
                return await op(EpiphanReadClient(fresh, read_tools, pins=pins))
        return result

    async def close(self) -> None:
        """Close the connection (idempotent); the process stops."""
        async with self._lock:
            await self._retire_locked()


def failed_codes(read: BatchedRead | DeviceReads[Any]) -> list[str]:
    """The codes of a batched read's failed calls (for `SignedConnection.read`'s `failures`)."""
    return [str(chunk.error.code) for chunk in read.failed if chunk.error is not None]


class SignedReader:
    """Guarded reads (the policy's `read_tools`) through the sign-in in `slot`, refreshed as the
    module doc says; the assistant's reader and ``fleetwatch fleet``'s. `pins`: the tool policy
    the server's tool list is held to on each session (`EpiphanReadClient`).

    Errors: as `SignedConnection.read`.
    """

    def __init__(
        self,
        slot: Path,
        default_server: str,
        read_tools: frozenset[str],
        *,
        timeout_seconds: float = 30.0,
        pins: ToolPolicy | None = None,
    ) -> None:
        self.connection = SignedConnection(slot, default_server, timeout_seconds=timeout_seconds)
        self._read_tools = frozenset(read_tools)
        self._pins = pins

    async def __aenter__(self) -> SignedReader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def call_batched(self, tool: str, arguments: Mapping[str, Any] | None = None) -> BatchedRead:
        """`EpiphanReadClient.call_batched` (a per-device read of many devices in calls of at
        most 100, merged); a call refused for the sign-in repeats the read once after a refresh."""
        return await self.connection.read(
            self._read_tools,
            lambda client: client.call_batched(tool, arguments),
            failures=failed_codes,
            pins=self._pins,
        )

    async def snapshot(self, *, on_read: Callable[[str], None] | None = None) -> FleetSnapshot:
        """The team's snapshot (`EpiphanReadClient.snapshot`; `on_read` is told each read tool
        as it is called, a repeated one again); a refusal repeats it whole, once."""
        return await self.connection.read(
            self._read_tools,
            lambda client: client.snapshot(on_read=on_read),
            failures=lambda snapshot: (u.code for u in snapshot.unread),
            pins=self._pins,
        )

    async def close(self) -> None:
        await self.connection.close()
