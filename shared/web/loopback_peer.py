"""Who is on the other end of a loopback TCP connection: the uid the kernel records for it.

A local page (the ask page, the approval page) listens on the loopback (127.0.0.1 and [::1]),
so its client is a process on this machine; Linux lists every TCP socket of the network
namespace in ``/proc/net/tcp`` and ``tcp6`` with the uid that owns it (what ``ss -e`` and identd
read). The client's socket is the line whose local address is the connection's remote one and
whose remote address is the page's own. The uid is recorded in audit rows ("who knocked") and
binds a page session to the uid that signed in (`shared.web.page_session`: another uid is
refused); it never grants anything by itself: the page secret does that.

`decode_address` also serves `fleetwatch doctor`'s listening-port check; `listener_uid` names who
holds a port a page could not bind (another user squatting ``[::1]:PORT``: issue 24).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from pathlib import Path
from typing import Final

PROC_TCP: Final = (Path("/proc/self/net/tcp"), Path("/proc/self/net/tcp6"))
"""The kernel's TCP tables of this process's network namespace (``/proc/self`` stays visible
under systemd's ``ProcSubset=pid``)."""
OVERFLOW_ID: Final = 65534
"""The kernel's overflow uid and gid (``/proc/sys/kernel/overflowuid`` and ``overflowgid``, 65534
by default): what an id not mapped into the reader's user namespace reads as (rootless podman,
``userns-remap``), in ``SO_PEERCRED``, ``SO_PEERGROUPS`` and these tables alike. Any number of
unrelated processes share it, so it never identifies anyone: a peer check never admits it and a
page session bound to it never matches, even where a setting names it."""
LISTEN: Final = "0A"
"""The ``st`` column of a listening socket."""


def decode_address(text: str) -> tuple[str, int]:
    """``0100007F:1F90`` -> ``("127.0.0.1", 8080)`` as ``/proc/net/tcp{,6}`` prints it (each
    32-bit word in host byte order, little-endian here); an IPv4-mapped IPv6 address is given
    as its IPv4 form.

    Raises:
        ValueError: not of that form.
    """
    address_hex, port_hex = text.split(":")
    raw = bytes.fromhex(address_hex)
    if len(raw) not in (4, 16):
        raise ValueError(f"not an address: {text!r}")
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(words)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(port_hex, 16)


def table_rows(
    texts: Iterable[str], *, local_port: int | None = None
) -> Iterable[tuple[tuple[str, int], tuple[str, int], str, int | None]]:
    """(local, remote, state, uid) of each line of ``/proc/net/tcp{,6}`` texts (a remote that
    cannot be read is ``("", 0)``; a missing uid None). With `local_port`, only the lines whose
    local address has that port (the others are passed over unread: a busy machine lists
    thousands of sockets)."""
    for local, remote, state, uid, _inode in _rows(texts, local_port=local_port):
        yield local, remote, state, uid


def _rows(
    texts: Iterable[str], *, local_port: int | None = None
) -> Iterable[tuple[tuple[str, int], tuple[str, int], str, int | None, int | None]]:
    """`table_rows` with each line's socket inode (None when missing)."""
    port = None if local_port is None else f":{local_port:04X}"
    for text in texts:
        for line in text.splitlines()[1:]:
            if port is not None and port not in line:
                continue
            fields = line.split()
            if len(fields) < 4 or (port is not None and not fields[1].endswith(port)):
                continue
            try:
                local = decode_address(fields[1])
            except ValueError:
                continue
            try:
                remote = decode_address(fields[2])
            except ValueError:
                remote = ("", 0)
            uid = int(fields[7]) if len(fields) > 7 and fields[7].isdigit() else None
            inode = int(fields[9]) if len(fields) > 9 and fields[9].isdigit() else None
            yield local, remote, fields[3], uid, inode


def owner_in(texts: Iterable[str], client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid of the socket at `client` connected to `server` in these tables, or None."""
    want_client = (_plain(client[0]), client[1])
    want_server = (_plain(server[0]), server[1])
    for local, remote, _state, uid in table_rows(texts, local_port=want_client[1]):
        if local == want_client and remote == want_server:
            return uid
    return None


def _plain(address: str) -> str:
    parsed = ipaddress.ip_address(address)
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(parsed)


def read_tables() -> list[str]:
    """The texts of this namespace's TCP tables (those that can be read)."""
    texts = []
    for path in PROC_TCP:
        try:
            texts.append(path.read_text())
        except OSError:
            continue
    return texts


def peer_uid(client: tuple[str, int] | None, server: tuple[str, int] | None) -> int | None:
    """The uid owning the client end of the loopback connection `client` -> `server` (as
    ``peername`` and ``sockname`` give them), or None when the kernel's tables do not show it."""
    if not client or not server:
        return None
    try:
        return owner_in(read_tables(), (client[0], int(client[1])), (server[0], int(server[1])))
    except (ValueError, TypeError):
        return None


def listener_uid(address: str, port: int) -> int | None:
    """The uid of a socket listening on `address`:`port`, or on a wildcard that covers it (what
    keeps a page from binding it: ``0.0.0.0``, or ``::``, which may also take IPv4), as this
    namespace's TCP tables list it; None when none is listed."""
    found = listener(address, port)
    return found[0] if found is not None else None


def listener(address: str, port: int) -> tuple[int | None, int | None] | None:
    """(uid, socket inode) of the socket listening on `address`:`port` or on a wildcard that
    covers it (`listener_uid`), either None when the table line lacks it; None when no such
    socket is listed. The inode names the socket in ``/proc/PID/fd`` (``socket:[INODE]``)."""
    try:
        family = ipaddress.ip_address(address).version
    except ValueError:
        return None
    covering = {_plain(address), "::", *(("0.0.0.0",) if family == 4 else ())}
    for (local, local_port), _remote, state, uid, inode in _rows(read_tables()):
        if state == LISTEN and local_port == port and local in covering:
            return uid, inode
    return None
