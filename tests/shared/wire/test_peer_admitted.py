"""Who a socket admits, decided from the kernel's uid, gid and groups only: the pid never counts
(across containers ``SO_PEERCRED``'s pid reads 0), and the overflow id 65534 (a uid or gid not
mapped into this user namespace: rootless podman, ``userns-remap``) never matches, even when an
allowlist names it. Unit tier: the socket is a fake that answers ``SO_PEERGROUPS``."""

from __future__ import annotations

import socket
import struct

from hypothesis import given
from hypothesis import strategies as st

from shared.web.loopback_peer import OVERFLOW_ID
from shared.wire.server import SO_PEERGROUPS, PeerCred, peer_admitted

SERVICE, OTHER, GROUP = 10002, 10666, 10020


class Groups:
    """A connected socket's stand-in: ``getsockopt(SOL_SOCKET, SO_PEERGROUPS)`` gives `groups`."""

    def __init__(self, *groups: int) -> None:
        self.groups = groups

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        assert (level, option) == (socket.SOL_SOCKET, SO_PEERGROUPS)
        return struct.pack(f"{len(self.groups)}I", *self.groups)


def test_the_overflow_id_is_65534() -> None:
    assert OVERFLOW_ID == 65534


def test_a_peer_from_another_container_is_admitted_by_its_uid_whatever_its_pid_reads() -> None:
    for pid in (0, -1, 1, 4242):
        assert peer_admitted(
            PeerCred(pid=pid, uid=SERVICE, gid=SERVICE), Groups(), frozenset({SERVICE}), frozenset()
        )


@given(st.integers(min_value=-1, max_value=2**31 - 1))
def test_no_pid_admits_a_uid_that_is_not_allowed(pid: int) -> None:
    peer = PeerCred(pid=pid, uid=OTHER, gid=OTHER)
    assert not peer_admitted(peer, Groups(OTHER), frozenset({SERVICE, pid}), frozenset({GROUP}))


def test_the_overflow_uid_is_refused_even_when_configured() -> None:
    peer = PeerCred(pid=0, uid=OVERFLOW_ID, gid=OVERFLOW_ID)
    assert not peer_admitted(peer, Groups(), frozenset({OVERFLOW_ID, SERVICE}), frozenset())
    # nor through a group it is in
    peer = PeerCred(pid=0, uid=OVERFLOW_ID, gid=GROUP)
    assert not peer_admitted(peer, Groups(GROUP), frozenset({OVERFLOW_ID}), frozenset({GROUP}))


def test_the_overflow_gid_never_admits_a_peer_even_when_configured() -> None:
    as_primary = PeerCred(pid=0, uid=OTHER, gid=OVERFLOW_ID)
    assert not peer_admitted(as_primary, Groups(), frozenset({SERVICE}), frozenset({OVERFLOW_ID}))
    as_supplementary = PeerCred(pid=0, uid=OTHER, gid=OTHER)
    assert not peer_admitted(
        as_supplementary, Groups(OVERFLOW_ID), frozenset({SERVICE}), frozenset({OVERFLOW_ID})
    )


def test_a_mapped_group_still_admits_beside_an_unmapped_one() -> None:
    peer = PeerCred(pid=0, uid=OTHER, gid=OVERFLOW_ID)
    assert peer_admitted(peer, Groups(OVERFLOW_ID, GROUP), frozenset({SERVICE}), frozenset({GROUP}))
