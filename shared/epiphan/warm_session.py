"""One warm MCP session per sign-in (issue 14), the slot read again before every use.

`WarmSession.current` reads the slot (`shared.epiphan.signin.fresh_sign_in`: a file of a few
hundred bytes, refreshed under the slot's lock when its token ends) and returns the connection
of its token, the same one while the token is the same:

- a sign-in removed from the slot, unsafe or dead closes the session at once, and the error
  comes back before any byte is sent (so a removed sign-in stops the next read and the next
  write at once, warm session or not);
- a replaced token (rotated, refreshed, another sign-in) closes the old session and opens one
  with the new token;
- a session the server ended is reopened by the next read (`EpiphanReadClient` sends that read
  once more); a write never reopens one (`services.executor.write_client`).

Users: the executor (the sandbox slot, its own only: it alone passes that path here) and the
assistant (the read slot). Errors: `shared.epiphan.slots.SlotError`,
`shared.epiphan.signin_oauth.SignInError` (both `FleetwatchError`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from shared.epiphan.mcp_session import McpConnection
from shared.errors import FleetwatchError


class WarmSession:
    """The MCP connection of the sign-in in `slot` (see the module doc).

    Args:
        slot: a token slot this process may read.
        default_server: the MCP URL when the slot names none.
        timeout_seconds: bound on each call and on connecting.
    """

    def __init__(self, slot: Path, default_server: str, *, timeout_seconds: float) -> None:
        self._slot = slot
        self._default_server = default_server
        self._timeout = timeout_seconds
        self._connection: McpConnection | None = None
        self._token: str | None = None
        self._lock = asyncio.Lock()

    async def current(self) -> McpConnection:
        """The connection of the slot's token as it is now.

        Raises:
            FleetwatchError: the slot's sign-in cannot be had (the session is closed first).
        """
        # the sign-in module brings the OAuth stack (the MCP SDK's auth, pydantic, httpx2): it
        # loads with the first use, not while a service waits for one (issue 14: idle memory)
        from shared.epiphan.signin import fresh_sign_in

        async with self._lock:
            try:
                sign_in = await fresh_sign_in(self._slot)
            except FleetwatchError:
                await self._close_locked()
                raise
            if self._connection is None or sign_in.access_token != self._token:
                await self._close_locked()
                self._connection = McpConnection(
                    sign_in.server or self._default_server,
                    sign_in.access_token,
                    timeout_seconds=self._timeout,
                )
                self._token = sign_in.access_token
            return self._connection

    async def drop(self, connection: McpConnection) -> None:
        """Close `connection` and forget it, unless a newer one replaced it already."""
        async with self._lock:
            if self._connection is connection:
                self._connection, self._token = None, None
        await connection.close()

    async def _close_locked(self) -> None:
        connection, self._connection, self._token = self._connection, None, None
        if connection is not None:
            await connection.close()

    async def close(self) -> None:
        """Close the session (idempotent)."""
        async with self._lock:
            await self._close_locked()
