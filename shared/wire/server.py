"""The server side of a socket (DESIGN §5): who the peer is, and one loop that answers it.

`serve_unix` listens on a unix socket, admits a peer by the uid, gid or supplementary groups
the kernel gives (``SO_PEERCRED``, ``SO_PEERGROUPS``; never anything the peer sent, never its
pid, never the overflow id 65534), reads
frames (`shared.wire.protocol`), decodes them with the socket's `Codec` and answers each with
its handler's reply or an `ErrorReply` carrying a stable code; `dispatch` makes that handler from
the socket's `OperationTable` and one handler per operation. A request refused before its
handler is reported to a `RefusedRequestHook` as a `RefusedRequest` that never holds a value
the peer sent.

Errors: `ProtocolError` (``socket_in_use``) from `serve_unix`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import stat
import struct
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.errors import MEANINGS, Code, FleetwatchError
from shared.web.loopback_peer import OVERFLOW_ID
from shared.wire.protocol import (
    MAX_FRAME_BYTES,
    Capabilities,
    Codec,
    ErrorReply,
    GetCapabilities,
    Message,
    OperationTable,
    ProtocolError,
    read_frame,
    write_frame,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PeerCred:
    """The connecting process, from the kernel (``SO_PEERCRED``), not from anything it sent."""

    pid: int
    uid: int
    gid: int


def peer_credentials(sock: Any) -> PeerCred:
    """`PeerCred` of the other end of a connected unix socket (a `socket.socket` or asyncio's
    ``TransportSocket``), Linux ``SO_PEERCRED``."""
    size = struct.calcsize("3i")
    pid, uid, gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size))
    return PeerCred(pid=pid, uid=uid, gid=gid)


SO_PEERGROUPS = getattr(socket, "SO_PEERGROUPS", 59)
"""Linux ``SO_PEERGROUPS`` (since 4.13; Python does not name it): the peer's supplementary
groups as the kernel recorded them at ``connect``."""


def peer_groups(sock: Any) -> frozenset[int]:
    """The supplementary gids of the other end of a connected unix socket (``SO_PEERGROUPS``);
    empty when the kernel cannot say."""
    size = 4 * 64
    while size <= 4 * 65536:
        try:
            raw = sock.getsockopt(socket.SOL_SOCKET, SO_PEERGROUPS, size)
        except OSError as exc:
            if exc.errno == errno.ERANGE:
                size *= 4
                continue
            return frozenset()
        return frozenset(struct.unpack(f"{len(raw) // 4}I", raw[: len(raw) // 4 * 4]))
    return frozenset()


def peer_admitted(
    peer: PeerCred, sock: Any, allowed_uids: frozenset[int], allowed_gids: frozenset[int]
) -> bool:
    """True when the peer's uid is allowed, or its gid or one of its supplementary groups
    (`peer_groups`) is. All three facts come from the kernel; the pid never counts (a peer in
    another container's pid namespace reads as pid 0). The overflow id
    (`shared.web.loopback_peer.OVERFLOW_ID`: an id not mapped into this user namespace) is never
    admitted, as a uid or as a group, even when an allowlist names it."""
    if peer.uid == OVERFLOW_ID:
        return False
    if peer.uid in allowed_uids:
        return True
    if not allowed_gids:
        return False
    groups = {peer.gid} | peer_groups(sock)
    return bool((groups - {OVERFLOW_ID}) & allowed_gids)


REFUSAL_DRAIN_SECONDS = 1.0
"""How long a refused peer's connection stays open for its request to arrive (never handled)."""


@dataclass(frozen=True, slots=True)
class RefusedRequest:
    """A request refused before any handler ran, as its audit row may describe it: never a
    value the peer sent.

    Attributes:
        operation: the request's tag when this socket serves it, else ``unknown``.
        code: ``bad_frame``, ``unknown_message``, ``invalid_message`` or ``frame_too_large``.
        field: the field the decoder named (``$.approval_id``), or None.
        frame_bytes: the frame's length in bytes (announced, for one too large), or None.
    """

    operation: str
    code: Code
    field: str | None = None
    frame_bytes: int | None = None

    @classmethod
    def of(cls, exc: ProtocolError) -> RefusedRequest:
        return cls(exc.operation or "unknown", exc.code, exc.field, exc.frame_bytes)

    def detail(self) -> dict[str, Any]:
        """``field`` and ``frame_bytes`` for an audit row's detail (those that are known)."""
        return {k: v for k, v in (("field", self.field), ("frame_bytes", self.frame_bytes)) if v is not None}


Handler = Callable[[Message, PeerCred], Awaitable[Message]]
OperationHandler = Callable[[Any, PeerCred], Awaitable[Message]]
"""The handler of one operation: its request (of that operation's type) and the peer."""
RefusedPeerHook = Callable[[PeerCred], Awaitable[None]]
RefusedRequestHook = Callable[[PeerCred, RefusedRequest], Awaitable[None]]


def dispatch(table: OperationTable, handlers: Mapping[type[Message], OperationHandler]) -> Handler:
    """The `Handler` that answers each request of `table` with its own handler from `handlers`
    (`GetCapabilities` with the table's manifest, unless `handlers` answers it).

    Raises:
        ValueError: a request of the table has no handler, or a handler has no request in it.
    """

    async def manifest(request: GetCapabilities, peer: PeerCred) -> Capabilities:
        return table.manifest

    answers: dict[type[Message], OperationHandler] = {GetCapabilities: manifest, **handlers}
    unmatched = set(answers) ^ set(table.requests)
    if unmatched:
        names = ", ".join(sorted(t.__name__ for t in unmatched))
        raise ValueError(f"{table.service}: a handler without a row or a row without a handler: {names}")

    async def handle(request: Message, peer: PeerCred) -> Message:
        return await answers[type(request)](request, peer)

    return handle


async def _report_refused(hook: RefusedRequestHook | None, peer: PeerCred, exc: ProtocolError) -> None:
    """Tell `hook` about a refused request; a hook that cannot record is logged, never fatal
    to the connection (the peer still gets its answer)."""
    if hook is None:
        return
    try:
        await hook(peer, RefusedRequest.of(exc))
    except FleetwatchError as failure:
        logger.error("could not record a refused %s (%s): %s", exc.code, failure.code, failure.message)


async def _send(writer: asyncio.StreamWriter, codec: Codec, reply: Message, max_bytes: int) -> None:
    try:
        await write_frame(writer, codec.encode(reply), max_bytes=max_bytes)
    except ProtocolError as exc:
        logger.error("reply %s too large: %s", type(reply).__name__, exc.message)
        await write_frame(writer, codec.encode(ErrorReply(code=exc.code, message="the reply was too large")))


async def _answer(
    codec: Codec, handler: Handler, data: bytes, peer: PeerCred, on_refused: RefusedRequestHook | None
) -> Message:
    try:
        request = codec.decode(data)
    except ProtocolError as exc:
        await _report_refused(on_refused, peer, exc)
        return ErrorReply(code=exc.code, message=exc.message)
    try:
        reply = await handler(request, peer)
    except FleetwatchError as exc:
        return ErrorReply.of(exc)
    except Exception:  # top-level handler of one request: logged with its traceback
        logger.exception("handler failed on %s from pid %d", type(request).__name__, peer.pid)
        return ErrorReply(code=Code.INTERNAL_ERROR, message=MEANINGS[Code.INTERNAL_ERROR])
    if not isinstance(reply, Message):
        logger.error(
            "handler returned %r for %s, not a Message", type(reply).__name__, type(request).__name__
        )
        return ErrorReply(code=Code.INTERNAL_ERROR, message=MEANINGS[Code.INTERNAL_ERROR])
    return reply


async def _socket_is_live(path: Path) -> bool:
    try:
        async with asyncio.timeout(2):
            _, writer = await asyncio.open_unix_connection(str(path))
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def serve_unix(
    path: str | Path,
    handler: Handler,
    *,
    codec: Codec,
    allowed_uids: Collection[int],
    allowed_gids: Collection[int] = (),
    mode: int = 0o660,
    on_refused_peer: RefusedPeerHook | None = None,
    on_refused_request: RefusedRequestHook | None = None,
    max_frame_bytes: int = MAX_FRAME_BYTES,
) -> asyncio.Server:
    """Serve `handler` on a unix socket at `path` (folder made 0750 if missing; file `mode`).

    Per connection: a peer whose uid (``SO_PEERCRED``) is not in `allowed_uids`, and whose gid
    and supplementary groups (``SO_PEERGROUPS``) are not in `allowed_gids`, gets
    `on_refused_peer(peer)` awaited first (write the audit row there, so a peer that hangs up at
    once still leaves it), then ``ErrorReply(peer_not_allowed)``, and the connection closes.
    Otherwise frames are read in a loop, decoded by `codec`, and ``await handler(request,
    peer)`` answers each; a `FleetwatchError` it raises becomes an `ErrorReply` with its code
    (its message cut to `shared.wire.formats.MAX_MESSAGE_CHARS`), anything else ``internal_error``
    (logged with the traceback). A frame refused before the handler (see the module doc) is
    reported to `on_refused_request(peer, RefusedRequest)` before it is answered. EOF closes the
    writer. A stale socket file (nobody listening) is replaced.

    Raises:
        ProtocolError: ``socket_in_use`` when another process serves `path`, or `path` exists
            and is not a socket.
    """
    path = Path(path)
    allowed, allowed_groups = frozenset(allowed_uids), frozenset(allowed_gids)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
    if path.is_symlink() or path.exists():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ProtocolError(Code.SOCKET_IN_USE, f"{path} exists and is not a socket")
        if await _socket_is_live(path):
            raise ProtocolError(Code.SOCKET_IN_USE, f"another process is serving {path}")
        path.unlink()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            sock = writer.get_extra_info("socket")
            peer = peer_credentials(sock)
            if not peer_admitted(peer, sock, allowed, allowed_groups):
                refusal = ErrorReply(
                    code=Code.PEER_NOT_ALLOWED, message=f"uid {peer.uid} may not use this socket"
                )
                # The audit row first: a peer that hangs up at once must still leave one.
                if on_refused_peer is not None:
                    await on_refused_peer(peer)
                with contextlib.suppress(ConnectionError):
                    await _send(writer, codec, refusal, max_frame_bytes)
                # Take (and drop) the peer's request before closing: closing first can break its
                # write, and a broken pipe hides the refusal it was about to read.
                with contextlib.suppress(ProtocolError, TimeoutError):
                    async with asyncio.timeout(REFUSAL_DRAIN_SECONDS):
                        await read_frame(reader, max_bytes=max_frame_bytes)
                return
            while True:
                try:
                    data = await read_frame(reader, max_bytes=max_frame_bytes)
                except ProtocolError as exc:  # oversize or truncated: the stream is lost
                    await _report_refused(on_refused_request, peer, exc)
                    await _send(
                        writer, codec, ErrorReply(code=exc.code, message=exc.message), max_frame_bytes
                    )
                    return
                if data is None:
                    return
                reply = await _answer(codec, handler, data, peer, on_refused_request)
                await _send(writer, codec, reply, max_frame_bytes)
        except ConnectionError:
            logger.debug("peer went away")
        except Exception:  # top-level handler of one connection: logged with its traceback
            logger.exception("connection on %s failed", path)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    # Bound and given its mode before it listens: no connection is accepted while the socket
    # still has the umask's mode (starting to serve may yield to other tasks for a while).
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        os.chmod(path, mode)
    except BaseException:
        listener.close()
        raise
    return await asyncio.start_unix_server(connection, sock=listener)
