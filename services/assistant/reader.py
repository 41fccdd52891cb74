"""The assistant's read client over the **read** slot, opened lazily and reopened on sign-in trouble.

The read sign-in may be placed (``fleetwatch login``) after the assistant started, and its
access token rotates on refresh, so the slot is read when a connection is first needed
(`shared.epiphan.signin.fresh_sign_in`, which refreshes under the slot's lock), and again after a read
that failed for the sign-in (``epiphan_auth``) or the connection. Only the read slot is ever
read here; the sandbox slot belongs to the executor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.epiphan.signin import fresh_sign_in
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
        self._lock = asyncio.Lock()

    async def _open(self) -> EpiphanReadClient:
        async with self._lock:
            if self._client is None:
                sign_in = await fresh_sign_in(self._slot)
                connection = McpConnection(
                    sign_in.server or self._default_server,
                    sign_in.access_token,
                    timeout_seconds=self._timeout,
                )
                self._client = EpiphanReadClient(connection, self._read_tools)
            return self._client

    async def _drop(self, client: EpiphanReadClient) -> None:
        async with self._lock:
            if self._client is client:
                self._client = None
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
            client, self._client = self._client, None
        if client is not None:
            await client.__aexit__(None, None, None)
