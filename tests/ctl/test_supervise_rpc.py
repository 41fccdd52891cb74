"""`services.ctl.supervise.rpc`, supervisord's XML-RPC over its unix socket with the standard
library's client: nothing listening there, or a peer that closes without answering, is said
as ``service_unavailable``, and the request is sent once (never again on a new connection).
A running supervisord answering it: ``fleetwatch up`` and ``status`` in
`tests/e2e/test_watch_demo.py`."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from services.ctl import supervise
from shared.config import load_settings
from shared.errors import Code
from tests.procs import base_env


async def test_no_supervisord_on_the_socket_is_service_unavailable(tmp_path: Path) -> None:
    settings = load_settings(base_env(tmp_path / "home"))
    with pytest.raises(supervise.SuperviseError) as caught:
        await supervise.rpc(settings, "supervisor.getAllProcessInfo")
    assert caught.value.code == Code.SERVICE_UNAVAILABLE


async def test_a_socket_that_closes_without_answering_is_service_unavailable(tmp_path: Path) -> None:
    settings = load_settings(base_env(tmp_path / "home"))
    path = supervise.Layout.of(settings).socket
    path.parent.mkdir(parents=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        server.settimeout(30)
        call = asyncio.ensure_future(supervise.rpc(settings, "supervisor.getAllProcessInfo"))

        def accept_and_close() -> None:
            peer, _ = server.accept()
            peer.recv(65536)
            peer.close()

        await asyncio.to_thread(accept_and_close)
        with pytest.raises(supervise.SuperviseError) as caught:
            await call
        server.setblocking(False)
        with pytest.raises(BlockingIOError):  # no second connection: the request is not sent again
            server.accept()
    assert caught.value.code == Code.SERVICE_UNAVAILABLE
