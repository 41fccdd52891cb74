"""Where the browser comes back to after sign-in: a one-shot HTTP listener on 127.0.0.1.

`LoopbackCallback` serves a one-route aiohttp app on ``127.0.0.1:<ephemeral port>`` (loopback
only: nothing off this host can reach it) that answers ``GET /callback?...`` requests (aiohttp
answers every other method or path 405 or 404, and a malformed request 400). Only a request whose ``state``
is this sign-in's counts; anything else gets 400/404 and the listener keeps waiting, so a stray
or hostile local request cannot end the sign-in. The first matching request's full URL is what
`wait` returns; the browser is told it may close the tab.

For a headless box (``--paste``), `paste_redirect_uri` gives a redirect URI on a free loopback
port without listening: the person's browser, on another machine, fails to load it, and the
person pastes the address it shows.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from types import TracebackType

from aiohttp import web

CALLBACK_PATH = "/callback"
_DONE_PAGE = (
    "<!doctype html><meta charset='utf-8'><title>Fleetwatch</title>"
    "<p>Fleetwatch got the answer. You may close this tab and go back to the terminal.</p>"
)


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
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._state: str | None = None
        self._answer: asyncio.Future[str] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackCallback:
        self._answer = asyncio.get_running_loop().create_future()
        app = web.Application()
        app.router.add_get(CALLBACK_PATH, self._callback, allow_head=False)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
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

    async def _callback(self, request: web.Request) -> web.Response:
        state = request.query.get("state", "")
        if (
            self._state is None
            or not secrets.compare_digest(state, self._state)
            or self._answer is None
            or self._answer.done()
        ):
            return _page(400, "<p>This is not the sign-in Fleetwatch is waiting for.</p>")
        self._answer.set_result(f"http://127.0.0.1:{self._port}{request.raw_path}")
        return _page(200, _DONE_PAGE)


def _page(status: int, body: str) -> web.Response:
    return web.Response(
        status=status, text=body, content_type="text/html", headers={"Cache-Control": "no-store"}
    )
