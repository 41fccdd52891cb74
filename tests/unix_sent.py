"""How many bytes a process has written to Unix stream sockets that their peers have not read
yet: what tells a test that a request sits unread in a frozen service's socket.

`unread_bytes(pid)` takes a copy of each of the process's Unix socket descriptors
(``pidfd_getfd``, Linux 5.6+; the caller must be allowed to trace the process: its parent, or
root) and asks the kernel for its send queue (``SIOCOUTQ``: the bytes the socket has sent that
are still charged to it, i.e. queued at a peer that has not read them). Bytes, summed over the
process's Unix sockets; 0 when everything it sent was read.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import struct
import termios
from errno import EBADF
from typing import Final

SYS_PIDFD_GETFD: Final = 438
"""The ``pidfd_getfd`` system call's number (the same on x86_64 and aarch64)."""
SIOCOUTQ: Final = termios.TIOCOUTQ
"""``SIOCOUTQ`` has TIOCOUTQ's value."""

_libc = ctypes.CDLL(None, use_errno=True)


def _unix_inodes() -> set[int]:
    with open("/proc/net/unix", encoding="ascii") as table:
        next(table)
        return {int(line.split()[6]) for line in table}


def unread_bytes(pid: int) -> int:
    """The bytes process `pid` sent on its Unix stream sockets that no peer has read yet.

    Raises:
        OSError: the process is gone, or this process may not copy its descriptors.
    """
    inodes = _unix_inodes()
    pidfd = os.pidfd_open(pid)
    total = 0
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{name}")
            except FileNotFoundError:  # closed since the listing
                continue
            if not link.startswith("socket:[") or int(link[8:-1]) not in inodes:
                continue
            fd = _libc.syscall(SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                errno = ctypes.get_errno()
                if errno == EBADF:  # closed since the listing
                    continue
                raise OSError(errno, f"pidfd_getfd of fd {name} of process {pid}: {os.strerror(errno)}")
            try:
                total += struct.unpack("i", fcntl.ioctl(fd, SIOCOUTQ, b"\0" * 4))[0]
            finally:
                os.close(fd)
    finally:
        os.close(pidfd)
    return total
