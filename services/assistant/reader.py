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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.read_client import EpiphanReadClient
from shared.epiphan.warm_session import WarmSession
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
        self._session = WarmSession(slot, default_server, timeout_seconds=timeout_seconds)
        self._read_tools = read_tools

    async def _open(self) -> EpiphanReadClient:
        return EpiphanReadClient(await self._session.current(), self._read_tools)

    async def _drop(self, client: EpiphanReadClient) -> None:
        await self._session.drop(client.connection)

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
        await self._session.close()
