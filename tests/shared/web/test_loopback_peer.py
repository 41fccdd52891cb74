"""Who is on the other end of a loopback TCP connection: the uid the kernel's TCP tables list
for the client's socket, read from real connections (and, as root, one opened by another user)."""

from __future__ import annotations

import os
import pwd
import socket
from collections.abc import Iterator

import pytest
from aiohttp.test_utils import make_mocked_request

from shared.web.loopback_peer import (
    LISTEN,
    decode_address,
    owner_in,
    peer_uid,
    read_tables,
    table_rows,
)
from shared.web.page_session import request_uid
from tests.other_uid import python_as

CLIENT = """
import socket, sys
client = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
print("connected", client.getsockname()[1], flush=True)
sys.stdin.readline()
"""
"""Connect to the port in argv[1], say so with the local port, and hold on until stdin has a line."""


@pytest.fixture
def server() -> Iterator[socket.socket]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(30)
    try:
        yield listener
    finally:
        listener.close()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0100007F:1F90", ("127.0.0.1", 8080)),
        ("00000000000000000000000001000000:0050", ("::1", 80)),
        ("0000000000000000FFFF00000100007F:1F90", ("127.0.0.1", 8080)),  # IPv4-mapped
    ],
)
def test_an_address_is_read_in_the_kernels_word_order(text: str, expected: tuple[str, int]) -> None:
    assert decode_address(text) == expected


@pytest.mark.parametrize("text", ["0100007F", "01007F:1F90", "zz00007F:1F90"])
def test_text_that_is_not_an_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        decode_address(text)


def test_each_table_line_gives_local_remote_state_and_uid_and_a_bad_line_is_passed_over() -> None:
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1\n"
        "   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000    33        0 2\n"
        "   2: garbage\n"
    )
    rows = list(table_rows([table]))
    assert rows == [
        (("127.0.0.1", 8080), ("0.0.0.0", 0), LISTEN, 1000),
        (("127.0.0.1", 50000), ("127.0.0.1", 8080), "01", 33),
    ]
    assert owner_in([table], ("127.0.0.1", 50000), ("127.0.0.1", 8080)) == 33
    assert owner_in([table], ("::ffff:127.0.0.1", 50000), ("127.0.0.1", 8080)) == 33
    assert owner_in([table], ("127.0.0.1", 50001), ("127.0.0.1", 8080)) is None


def test_the_uid_of_a_loopback_connection_is_the_uid_that_opened_it(server: socket.socket) -> None:
    assert read_tables(), "this namespace's TCP tables"
    client = socket.create_connection(server.getsockname(), timeout=30)
    accepted, peername = server.accept()
    try:
        assert peer_uid(peername, accepted.getsockname()) == os.getuid()
        assert peer_uid(("127.0.0.1", 1), accepted.getsockname()) is None  # no such connection
        assert peer_uid(None, accepted.getsockname()) is None
        assert peer_uid(peername, ("not an address", 1)) is None
    finally:
        accepted.close()
        client.close()


class Connection:
    """A browser connection as aiohttp's request sees it: the client's and the page's addresses."""

    def __init__(self, peername: object, sockname: object) -> None:
        self.addresses = {"peername": peername, "sockname": sockname}

    def get_extra_info(self, name: str, default: object = None) -> object:
        return self.addresses.get(name, default)


def test_a_connections_uid_is_read_from_the_tables_once_and_kept_while_it_is_open(
    server: socket.socket,
) -> None:
    """The kernel's tables take milliseconds to read and scan on a busy machine (issue 34): a
    connection's later requests keep the uid its first one read, as its socket keeps its owner."""
    client = socket.create_connection(server.getsockname(), timeout=30)
    accepted, peername = server.accept()
    try:
        connection = Connection(peername, accepted.getsockname())
        first = make_mocked_request("GET", "/", transport=connection)
        assert request_uid(first) == os.getuid()
        # Were the tables read again, the same connection would now name nobody.
        connection.addresses["peername"] = ("127.0.0.1", 1)
        assert request_uid(make_mocked_request("POST", "/approve", transport=connection)) == os.getuid()
        other = Connection(("127.0.0.1", 1), accepted.getsockname())
        assert request_uid(make_mocked_request("GET", "/", transport=other)) is None  # read afresh
        assert request_uid(make_mocked_request("GET", "/", transport=other)) is None  # and not kept
    finally:
        accepted.close()
        client.close()


def test_a_table_is_scanned_for_the_clients_port_alone() -> None:
    other_ports = "".join(
        f"{n:4d}: 0100007F:{2000 + n:04X} 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000 0 {n}\n"
        for n in range(1, 50)
    )
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        + other_ports
        + "  99: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000    33        0 2\n"
    )
    assert [row[3] for row in table_rows([table], local_port=50000)] == [33]
    assert len(list(table_rows([table]))) == 50
    assert owner_in([table], ("127.0.0.1", 50000), ("127.0.0.1", 8080)) == 33


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user (CI runs as root)")
def test_a_client_run_by_another_user_is_named_by_that_users_uid(server: socket.socket) -> None:
    nobody = pwd.getpwnam("nobody")
    port = server.getsockname()[1]
    with python_as(nobody, CLIENT, str(port)) as client:
        assert client.stdout is not None and client.stdin is not None
        try:
            accepted, peername = server.accept()
            line = client.stdout.readline().split()  # the client has connected: an event, not a wait
            assert line[0] == "connected" and int(line[1]) == peername[1]
            try:
                assert peer_uid(peername, accepted.getsockname()) == nobody.pw_uid
            finally:
                accepted.close()
        finally:
            client.stdin.write("done\n")
            client.stdin.flush()
            assert client.wait(timeout=30) == 0
