"""The assistant's read client over the **read** slot: one warm MCP session, the slot read again
before every read.

The read sign-in may be placed (``fleetwatch login``) after the assistant started, and its
access token rotates on refresh, so the slot is read before every read
(`shared.epiphan.signin.fresh_sign_in`, which refreshes under the slot's lock). The session is
kept while the slot holds the same token (issue 14); a sign-in removed from the slot closes it
and refuses the read before any byte is sent (``no_sign_in``); a new token gets a new session;
a read that failed for the sign-in (``epiphan_auth``) drops it. Only the read slot is ever read
here; the sandbox slot belongs to the executor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.errors import Code, FleetwatchError

_REOPEN_ON: Final = frozenset({Code.EPIPHAN_AUTH, Code.EPIPHAN_UNREACHABLE, Code.EPIPHAN_TIMEOUT})


class SlotReader:
    """A guarded read client on the sign-in in `slot`.

    Args:
        slot: the read slot (`Settings.read_token_file`).
        default_server: the MCP URL when the slot names none (`Settings.epiphan_mcp_url`).
        read_tools: the tools this reader may call (`ToolPolicy.model_read_tools`).
        timeout_seconds: bound on each read.

    Errors: as `EpiphanReadClient`, plus ``no_sign_in`` when the slot is empty.
    """

    def __init__(
        self, slot: Path, default_server: str, read_tools: frozenset[str], *, timeout_seconds: float = 30.0
    ) -> None:
        self._slot = slot
        self._default_server = default_server
        self._read_tools = read_tools
        self._timeout = timeout_seconds
        self._client: EpiphanReadClient | None = None
        self._token: str | None = None
        self._lock = asyncio.Lock()

    async def _open(self) -> EpiphanReadClient:
        # the OAuth stack (MCP SDK's auth, pydantic, httpx2) loads with the first read, not at rest
        from shared.epiphan.signin import fresh_sign_in

        async with self._lock:
            try:
                sign_in = await fresh_sign_in(self._slot)
            except FleetwatchError:  # removed, unsafe or dead: the warm session goes at once
                await self._close_locked()
                raise
            if self._client is None or sign_in.access_token != self._token:
                await self._close_locked()
                connection = McpConnection(
                    sign_in.server or self._default_server,
                    sign_in.access_token,
                    timeout_seconds=self._timeout,
                )
                self._client, self._token = (
                    EpiphanReadClient(connection, self._read_tools),
                    sign_in.access_token,
                )
            return self._client

    async def _close_locked(self) -> None:
        client, self._client, self._token = self._client, None, None
        if client is not None:
            await client.__aexit__(None, None, None)

    async def _drop(self, client: EpiphanReadClient) -> None:
        async with self._lock:
            if self._client is client:
                self._client, self._token = None, None
        await client.__aexit__(None, None, None)

    async def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        client = await self._open()
        try:
            return await client.call(tool, arguments)
        except FleetwatchError as exc:
            if exc.code in _REOPEN_ON:
                await self._drop(client)
            raise

    async def snapshot(self, *, on_read: Callable[[str], None] | None = None) -> FleetSnapshot:
        client = await self._open()
        try:
            return await client.snapshot(on_read=on_read)
        except FleetwatchError as exc:
            if exc.code in _REOPEN_ON:
                await self._drop(client)
            raise

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        async with self._lock:
            await self._close_locked()
