"""Where the browser comes back to after sign-in: a one-shot HTTP listener on 127.0.0.1.

`LoopbackCallback` listens on ``127.0.0.1:<ephemeral port>`` (loopback only: nothing off this
host can reach it) and answers ``GET /callback?...`` requests. Only a request whose ``state``
is this sign-in's counts; anything else gets 400/404 and the listener keeps waiting, so a stray
or hostile local request cannot end the sign-in. The first matching request's full URL is what
`wait` returns; the browser is told it may close the tab.

For a headless box (``--paste``), `paste_redirect_uri` gives a redirect URI on a free loopback
port without listening: the person's browser, on another machine, fails to load it, and the
person pastes the address it shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/callback"
_MAX_REQUEST_BYTES = 16 * 1024
_DONE_PAGE = (
    "<!doctype html><meta charset='utf-8'><title>Fleetwatch</title>"
    "<p>Fleetwatch got the answer. You may close this tab and go back to the terminal.</p>"
)


def _reply(status: str, body: str) -> bytes:
    data = body.encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(data)}\r\n"
        "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + data


def paste_redirect_uri() -> str:
    """A loopback redirect URI on a port free right now (nothing will listen on it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


class LoopbackCallback:
    """``async with LoopbackCallback() as callback``: `redirect_uri` to register, then
    ``await callback.wait(state, timeout_seconds)`` for the redirect URL the browser brought."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._port = 0
        self._state: str | None = None
        self._answer: asyncio.Future[str] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackCallback:
        self._answer = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, host="127.0.0.1", port=0)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self._answer is not None and not self._answer.done():
            self._answer.cancel()

    async def wait(self, state: str, timeout_seconds: float) -> str:
        """The redirect URL of the first request carrying `state`.

        Raises:
            TimeoutError: nobody came back within `timeout_seconds`.
        """
        assert self._answer is not None, "use LoopbackCallback as an async context manager"
        self._state = state
        async with asyncio.timeout(timeout_seconds):
            return await asyncio.shield(self._answer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
            writer.write(self._answer_for(head))
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            pass  # not a usable request; the listener keeps waiting
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _answer_for(self, head: bytes) -> bytes:
        if len(head) > _MAX_REQUEST_BYTES:
            return _reply("431 Request Header Fields Too Large", "")
        parts = head.decode("latin-1").split("\r\n", 1)[0].split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return _reply("405 Method Not Allowed", "")
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return _reply("404 Not Found", "")
        state = parse_qs(target.query).get("state", [""])[0]
        if (
            self._state is None
            or not secrets.compare_digest(state, self._state)
            or self._answer is None
            or self._answer.done()
        ):
            return _reply("400 Bad Request", "<p>This is not the sign-in Fleetwatch is waiting for.</p>")
        self._answer.set_result(f"http://127.0.0.1:{self._port}{parts[1]}")
        return _reply("200 OK", _DONE_PAGE)
