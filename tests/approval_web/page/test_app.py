"""`page_side`: the page listens on both loopbacks (127.0.0.1 and [::1]) and nowhere else,
publishes its secret at start, deletes the file at a clean stop, and refuses to start on a port
that is taken on either (naming who holds it: issue 24 #2, the [::1] squatter)."""

from __future__ import annotations

import io
import socket
import stat
from pathlib import Path

import pytest
from aiohttp import ClientSession

from services.approval_web.page import PageError, SecretSink, page_side
from shared.config import load_settings
from shared.errors import Code
from shared.web.page_secret import read_secret_file
from tests.approval_web.page.helpers import executor_down, policies
from tests.other_uid import needs_root, other_user, squatting


class Down:
    """An executor client for a page that is only started and stopped here."""

    async def call(self, request: object):
        raise executor_down()


def listeners(port: int) -> list[str]:
    """The local addresses listening on TCP `port` (IPv4 and IPv6), from /proc/net."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.append(
                    socket.inet_ntop(socket.AF_INET, bytes.fromhex(address)[::-1])
                    if len(address) == 8
                    else socket.inet_ntop(
                        socket.AF_INET6,
                        b"".join(bytes.fromhex(address)[i : i + 4][::-1] for i in range(0, 16, 4)),
                    )
                )
    return found


def settings_for(tmp_path: Path, port: int = 0):
    return load_settings(
        {
            "HOME": str(tmp_path),
            "FLEETWATCH_HOME": str(tmp_path / "home"),
            "FLEETWATCH_APPROVE_PORT": str(port),
        }
    )


async def test_the_page_listens_on_loopback_and_its_secret_file_lives_only_while_it_runs(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path)
    printed = io.StringIO()
    sink = SecretSink.for_stream(settings.approve_secret_file, printed)
    policy, tool_policy = policies()
    async with page_side(settings, policy, tool_policy, sink=sink, executor=Down()) as running:
        assert running.url == f"http://127.0.0.1:{running.port}/"
        path = settings.approve_secret_file
        assert running.secret_file == path and stat.S_IMODE(path.stat().st_mode) == 0o600
        assert printed.getvalue().strip() == f"Approval page: {running.url}  secret in: {path}"
        secret = read_secret_file(path)
        async with ClientSession() as client, client.get(running.url) as response:
            assert response.status == 200 and "Enter the page secret" in await response.text()
            assert secret not in await response.text()
        assert sorted(listeners(running.port)) == ["127.0.0.1", "::1"]  # not on any other address
    assert not path.exists()


async def refused_start(tmp_path: Path, port: int) -> PageError:
    """What `page_side` raises when started on `port`; no secret file is left."""
    settings = settings_for(tmp_path, port)
    sink = SecretSink.for_stream(settings.approve_secret_file, io.StringIO())
    policy, tool_policy = policies()
    with pytest.raises(PageError) as caught:
        async with page_side(settings, policy, tool_policy, sink=sink, executor=Down()):
            pass
    assert not settings.approve_secret_file.exists()
    return caught.value


async def test_a_taken_port_stops_the_start_with_a_clear_code(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        refused = await refused_start(tmp_path, taken.getsockname()[1])
    assert refused.code is Code.SOCKET_IN_USE


@needs_root
async def test_another_user_holding_the_ipv6_loopback_port_stops_the_start_and_is_named(
    tmp_path: Path,
) -> None:
    """The phishing page of issue 24 #2: a user in no group listens on [::1]:PORT first."""
    with squatting("::1") as port:
        refused = await refused_start(tmp_path, port)
    assert refused.code is Code.SOCKET_IN_USE
    assert f"[::1]:{port}" in refused.message
    assert f"uid {other_user().pw_uid} ({other_user().pw_name})" in refused.message


async def test_localhost_on_either_loopback_reaches_the_real_page_and_is_sent_to_127_0_0_1(
    tmp_path: Path,
) -> None:
    """What a browser opening ``http://localhost:PORT/`` meets, on ::1 (Chromium's first try) and
    on 127.0.0.1: the page itself, sending it to its own name, with no cookie set."""
    settings = settings_for(tmp_path)
    sink = SecretSink.for_stream(settings.approve_secret_file, io.StringIO())
    policy, tool_policy = policies()
    async with page_side(settings, policy, tool_policy, sink=sink, executor=Down()) as running:
        for address in ("[::1]", "127.0.0.1"):
            async with (
                ClientSession() as client,
                client.get(
                    f"http://{address}:{running.port}/",
                    headers={"Host": f"localhost:{running.port}"},
                    allow_redirects=False,
                ) as response,
            ):
                assert response.status == 307, address
                assert response.headers["Location"] == running.url
                assert "Set-Cookie" not in response.headers
        async with ClientSession() as client, client.get(f"http://[::1]:{running.port}/") as response:
            assert response.status == 200 and "Enter the page secret" in await response.text()
