"""Peer checks by group: ``serve_unix`` admits a peer whose uid is not listed when its primary
or a supplementary group (``SO_PEERGROUPS``, from the kernel) is; others are refused and the
refusal hook runs. Real processes under another uid (CI runs as root)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from shared.wire.protocol import Capabilities, Codec, GetCapabilities, Message
from shared.wire.server import PeerCred, serve_unix

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user")
OPERATORS_GID = 4242  # any gid: setgroups() takes numbers
STRANGER_UID = 4244  # any uid but the overflow one (65534, never admitted): setuid() takes numbers
OVERFLOW_ID = 65534
CLIENT = """
import asyncio, sys
from shared.wire.protocol import GetCapabilities, Capabilities
from shared.wire.client import request
reply = asyncio.run(request(sys.argv[1], GetCapabilities(), Capabilities, timeout_seconds=10))
print(getattr(reply, "code", None) or reply.service)
"""


class Server:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.refused: list[PeerCred] = []

    async def handle(self, request: Message, peer: PeerCred) -> Message:
        return Capabilities(service=f"uid {peer.uid}", operations=())

    async def on_refused(self, peer: PeerCred) -> None:
        self.refused.append(peer)


@pytest_asyncio.fixture
async def server() -> AsyncIterator[Server]:
    folder = Path(tempfile.mkdtemp(prefix="fw-peers-"))
    os.chmod(folder, 0o701)  # others may traverse, not list
    served = Server(folder / "test.sock")
    listening = await serve_unix(
        served.path,
        served.handle,
        codec=Codec([GetCapabilities]),
        allowed_uids={0},
        allowed_gids={OPERATORS_GID},
        mode=0o666,
        on_refused_peer=served.on_refused,
    )
    try:
        yield served
    finally:
        listening.close()
        await listening.wait_closed()
        shutil.rmtree(folder)


async def as_peer(path: Path, groups: list[int], uid: int = STRANGER_UID) -> str:
    site = next(p for p in sys.path if p.endswith("site-packages"))
    repo = str(Path(__file__).resolve().parents[2])
    python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    done = await asyncio.to_thread(
        subprocess.run,
        [python if Path(python).exists() else sys.executable, "-c", CLIENT, str(path)],
        user=uid,
        group=uid,
        extra_groups=groups,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{repo}:{site}"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def test_a_member_of_an_allowed_group_is_admitted_by_its_supplementary_groups(server: Server):
    assert await as_peer(server.path, [OPERATORS_GID]) == f"uid {STRANGER_UID}"
    assert server.refused == []


async def test_the_overflow_uid_is_refused_even_in_an_allowed_group(server: Server):
    """Under user namespaces an unmapped uid arrives as 65534: it must never match anything."""
    assert await as_peer(server.path, [OPERATORS_GID], uid=OVERFLOW_ID) == "peer_not_allowed"
    assert [peer.uid for peer in server.refused] == [OVERFLOW_ID]


async def test_a_peer_in_no_allowed_group_is_refused_and_the_refusal_hook_runs(server: Server):
    assert await as_peer(server.path, [4243]) == "peer_not_allowed"
    assert len(server.refused) == 1 and server.refused[0].uid != 0
