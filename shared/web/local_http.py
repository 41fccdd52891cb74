"""Serving a small aiohttp app on loopback for an ``async with`` block (the ask page, the model
stand-in): one way to bind, report the URL and clean up."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from shared.errors import Code, FleetwatchError


class LocalHttpError(FleetwatchError):
    """A local page could not listen (``socket_in_use``: the port is taken)."""


@contextlib.asynccontextmanager
async def serve_local(app: web.Application, port: int) -> AsyncIterator[str]:
    """Serve `app` on ``127.0.0.1:port`` (0: any free port) until the block ends; yields the
    base URL ``http://127.0.0.1:<bound port>``.

    Raises:
        FleetwatchError: ``socket_in_use`` when the port cannot be bound.
    """
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", port)
        try:
            await site.start()
        except OSError as exc:
            raise LocalHttpError(
                Code.SOCKET_IN_USE, f"cannot listen on 127.0.0.1:{port}: {exc.strerror}"
            ) from exc
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
