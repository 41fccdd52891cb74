"""Serving a small aiohttp app on loopback for an ``async with`` block: one way to bind, report
the URL and clean up.

`serve_loopback` serves a page (the approval page, the ask page) on **both** loopbacks,
127.0.0.1 and [::1], at one port (`bind_loopback`): a browser opening ``http://localhost:PORT/``
tries ::1 first (Chromium), so a page holding only 127.0.0.1 left [::1]:PORT to any local user
to serve a fake page that collects the secret (issue 24). Either address taken refuses the start,
naming the port and, when the kernel's tables show it, the uid holding it. A machine with no
IPv6 loopback at all (nobody can bind [::1] there either: `may_skip_ipv6`) skips that family
and says so in the log; a process only kept from IPv6 by its own sandbox does not start. `serve_local` (the model stand-in, a test double's server) binds
127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import pwd
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from aiohttp import web  # loaded where a page is served: the CLI's port checks need none of it

from shared.errors import Code, FleetwatchError
from shared.web.loopback_peer import listener_uid

logger = logging.getLogger(__name__)

LOOPBACKS: Final = ((socket.AF_INET, "127.0.0.1", "127.0.0.1"), (socket.AF_INET6, "::1", "[::1]"))
"""(family, address, as a URL names it) of each loopback a page holds."""
KERNEL_IPV6: Final = Path("/proc/self/net/if_inet6")
"""Present when the kernel has IPv6 (visible under systemd's ``ProcSubset=pid`` too)."""
PORT_TRIES: Final = 20
"""Free ports tried (port 0) before giving up when [::1] is taken at the one 127.0.0.1 got."""


class LocalHttpError(FleetwatchError):
    """A local page could not listen (``socket_in_use``: the port is taken; ``internal_error``:
    the address cannot be bound for another reason)."""


def holder(address: str, port: int) -> str:
    """Who holds `address`:`port`, in words: ``uid 65534 (nobody)``, or ``an unknown process``."""
    uid = listener_uid(address, port)
    if uid is None:
        return "an unknown process"
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _bind(family: int, address: str, port: int) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def taken_at(port: int, *, both: bool) -> tuple[str, str] | None:
    """Where `port` is in use by another socket: ``(address, as a URL names it)`` of the first
    loopback it cannot be bound on for ``EADDRINUSE`` (127.0.0.1, then [::1] when `both`: a
    page's pair, `bind_loopback`), or None. Binds and closes at once; any other failure to bind
    is the starting program's to say, not a port in use."""
    for family, address, named in LOOPBACKS if both else LOOPBACKS[:1]:
        try:
            _bind(family, address, port).close()
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return address, named
    return None


def may_skip_ipv6(error: int | None, kernel_has_ipv6: bool) -> bool:
    """True when a page may run without [::1], because nobody on this machine can listen there:
    no IPv6 loopback address (``EADDRNOTAVAIL``), or no IPv6 in the kernel at all
    (``EAFNOSUPPORT`` and no `KERNEL_IPV6`). ``EAFNOSUPPORT`` while the kernel has IPv6 means
    only this process may not use it (a sandbox such as systemd's ``RestrictAddressFamilies``):
    others still could, so the page must not start."""
    return error == errno.EADDRNOTAVAIL or (error == errno.EAFNOSUPPORT and not kernel_has_ipv6)


def _refusal(named: str, address: str, port: int, exc: OSError) -> LocalHttpError:
    if exc.errno == errno.EAFNOSUPPORT:
        return LocalHttpError(
            Code.INTERNAL_ERROR,
            f"cannot listen on {named}:{port}: this process may not use IPv6 (a sandbox's "
            "RestrictAddressFamilies?) while other users can; the page does not start",
        )
    if exc.errno == errno.EADDRINUSE:
        return LocalHttpError(
            Code.SOCKET_IN_USE,
            f"cannot listen on {named}:{port}: it is taken by {holder(address, port)}; "
            "the page does not start while anyone else holds either loopback at its port",
        )
    return LocalHttpError(Code.INTERNAL_ERROR, f"cannot listen on {named}:{port}: {exc.strerror}")


def bind_loopback(port: int) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1:`port` and [::1]:`port` (0: one free port for both);
    [::1] left out only when the machine has no IPv6 loopback (logged).

    Raises:
        LocalHttpError: ``socket_in_use`` naming the address, the port and its holder;
            ``internal_error`` for any other failure to bind.
    """
    for _ in range(PORT_TRIES if port == 0 else 1):
        bound = _bind_both(port)
        if bound is not None:
            return bound
    raise LocalHttpError(Code.SOCKET_IN_USE, "cannot find a port free on both 127.0.0.1 and [::1]")


def _bind_both(port: int) -> list[socket.socket] | None:
    """Both loopbacks at `port`; None when `port` is 0 and [::1] was taken at the free port
    127.0.0.1 got (the caller tries another)."""
    bound: list[socket.socket] = []
    try:
        for family, address, named in LOOPBACKS:
            at = bound[0].getsockname()[1] if bound else port
            try:
                bound.append(_bind(family, address, at))
            except OSError as exc:
                if family == socket.AF_INET6 and may_skip_ipv6(exc.errno, KERNEL_IPV6.exists()):
                    logger.warning("no IPv6 loopback on this machine: listening on 127.0.0.1:%d only", at)
                    continue
                if port == 0 and bound and exc.errno == errno.EADDRINUSE:
                    for sock in bound:
                        sock.close()
                    return None
                raise _refusal(named, address, at, exc) from exc
    except BaseException:
        for sock in bound:
            sock.close()
        raise
    return bound


@contextlib.asynccontextmanager
async def serve_loopback(app: web.Application, port: int, name: str) -> AsyncIterator[str]:
    """Serve `app` on both loopbacks at `port` (`bind_loopback`; 0: any free port) until the
    block ends; yields the base URL under the one host name the page answers to, `name`
    (``127.0.0.1``: ``http://127.0.0.1:<port>``).

    Raises:
        LocalHttpError: see `bind_loopback`.
    """
    from aiohttp import web

    sockets = bind_loopback(port)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        yield f"http://{name}:{sockets[0].getsockname()[1]}"
    finally:
        await runner.cleanup()
        for sock in sockets:
            sock.close()


@contextlib.asynccontextmanager
async def serve_local(app: web.Application, port: int) -> AsyncIterator[str]:
    """Serve `app` on ``127.0.0.1:port`` (0: any free port) until the block ends; yields the
    base URL ``http://127.0.0.1:<bound port>``.

    Raises:
        FleetwatchError: ``socket_in_use`` when the port cannot be bound.
    """
    from aiohttp import web

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
