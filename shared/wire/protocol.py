"""The socket protocol shared by every service (DESIGN §5).

A frame is a 4-byte big-endian length then that many bytes of MessagePack (msgspec). The length
is checked against `MAX_FRAME_BYTES` before the body is read. A message is a `Message`: a
frozen msgspec Struct tagged by its ``op`` field (snake_case of the class name unless given).
Each socket serves one union of request types through one `Codec`, built once.

Errors that cross a socket travel as `ErrorReply(code, message)` with a stable code from
`shared.errors.Code`; each socket's manifest (`Capabilities`) lists its operations and the
codes each may answer with, plus `TRANSPORT_CODES` which any operation may get.

Bad input changes nothing but the audit: a malformed body (``bad_frame``), an unknown ``op``
(``unknown_message``) or a wrong field (``invalid_message``: a missing or extra field, an ID not
of its format, a text over its cap; see `shared.wire.formats`) is answered and the connection keeps
serving; an oversize frame (``frame_too_large``) or a truncated one is answered and the
connection closed (the stream can no longer be followed); the handler is never called. Each
such refusal is reported to the server's `RefusedRequestHook` first (its audit row), as a
`RefusedRequest` that never holds a value the peer sent.

Errors: `ProtocolError` (a `FleetwatchError`) with one of the codes above, or
``service_unavailable`` / ``service_no_answer`` / ``socket_in_use`` from the helpers.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import operator
import os
import re
import socket
import stat
import struct
import typing
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from shared.errors import MEANINGS, Code, FleetwatchError
from shared.wire.formats import MAX_MESSAGE_CHARS, ErrorCode, ErrorText

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 1 << 20
"""Largest frame body accepted or sent: 1 MiB."""
_HEADER = struct.Struct(">I")

TRANSPORT_CODES: frozenset[Code] = frozenset(
    {
        Code.BAD_FRAME,
        Code.FRAME_TOO_LARGE,
        Code.UNKNOWN_MESSAGE,
        Code.INVALID_MESSAGE,
        Code.PEER_NOT_ALLOWED,
        Code.INTERNAL_ERROR,
    }
)
"""Codes any operation on any socket may answer with (from this module, not the handler)."""


class ProtocolError(FleetwatchError):
    """A frame or message is malformed, or a socket could not be used; see the module doc.

    Attributes:
        operation: the refused request's tag when this socket serves it, else None.
        field: the field the decoder named (``$.approval_id``), else None.
        frame_bytes: the frame's length in bytes, when one was read or announced.
    """

    def __init__(
        self,
        code: Code,
        message: str | None = None,
        *,
        operation: str | None = None,
        field: str | None = None,
        frame_bytes: int | None = None,
    ) -> None:
        super().__init__(code, message)
        self.operation = operation
        self.field = field
        self.frame_bytes = frame_bytes


MAX_DECODE_MESSAGE_CHARS = 300
"""Longest decoder message repeated to the peer (msgspec's may quote what it was sent)."""
_FIELD_PATH = re.compile(r"`(\$[A-Za-z0-9_.\[\]]{0,63})`\Z")


def cut(text: str, cap: int) -> str:
    """`text` cut to `cap` characters (the last one ``…`` when cut)."""
    return text if len(text) <= cap else text[: max(cap - 1, 0)] + "…"


def _field_of(error: msgspec.DecodeError) -> str | None:
    """The path msgspec names at the end of its message (``$.approval_id``), or None."""
    found = _FIELD_PATH.search(str(error))
    return found.group(1) if found else None


def snake_case(name: str) -> str:
    """``PrepareProposal`` -> ``prepare_proposal``: the default tag of a `Message` class."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Message(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="op", tag=snake_case):
    """Base of every request and reply. Subclasses are tagged ``op=<snake_case name>``;
    pass ``tag="..."`` in the class statement to choose another tag."""


class ErrorReply(Message, tag="error"):
    """The one error shape on the wire. `code` is a `Code` value; branch on it, not on `message`."""

    code: ErrorCode
    message: ErrorText


class Operation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One operation of a socket's manifest: the request tag and the codes it may answer with
    (besides `TRANSPORT_CODES`)."""

    name: str
    codes: frozenset[Code]
    summary: str = ""


class GetCapabilities(Message):
    """Request: the socket's manifest. Every socket serves it."""


class Capabilities(Message):
    """Reply to `GetCapabilities`: the socket's operations and their codes."""

    service: str
    operations: tuple[Operation, ...]
    transport_codes: frozenset[Code] = TRANSPORT_CODES


def message_tag(message_type: type[Message]) -> str:
    """The ``op`` value of a `Message` class."""
    tag = message_type.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{message_type.__name__} is not a tagged Message")
    return tag


def manifest_problems(operations: Iterable[Operation], requests: Iterable[type[Message]]) -> tuple[str, ...]:
    """What is wrong between a socket's manifest and its request union, both ways: an
    operation with no request type, a request type with no operation, a name listed twice, a
    code that is not in `Code`. Empty when they agree (assert that in each service's tests)."""
    problems: list[str] = []
    names = [op.name for op in operations]
    tags = {message_tag(t) for t in requests}
    problems += [f"operation {n!r} is listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
    problems += [f"operation {n!r} has no request type" for n in sorted(set(names) - tags)]
    problems += [f"request {t!r} is not in the manifest" for t in sorted(tags - set(names))]
    known = {c.value for c in Code}
    for op in operations:
        problems += [
            f"operation {op.name!r} declares unknown code {c!r}"
            for c in sorted(map(str, op.codes))
            if c not in known
        ]
    return tuple(problems)


class _Envelope(msgspec.Struct):
    op: str


class Codec:
    """Decodes one socket's messages; build it once per socket (decoders are reused).

    Args:
        types: the tagged `Message` classes this side accepts (tags must be distinct).
    """

    def __init__(self, types: Iterable[type[Message]]) -> None:
        self.types: tuple[type[Message], ...] = tuple(types)
        if not self.types:
            raise ValueError("a Codec needs at least one message type")
        tags = [message_tag(t) for t in self.types]
        if len(set(tags)) != len(tags):
            raise ValueError(f"duplicate tags in {tags}")
        self.tags: frozenset[str] = frozenset(tags)
        self._envelope = msgspec.msgpack.Decoder(_Envelope)
        union: Any = functools.reduce(operator.or_, self.types)
        self._decoder = msgspec.msgpack.Decoder(union)
        self._encoder = msgspec.msgpack.Encoder()

    def decode(self, data: bytes) -> Message:
        """One frame body -> a message of this codec's union.

        Raises:
            ProtocolError: ``bad_frame`` (not MessagePack, or not a map with a string ``op``),
                ``unknown_message`` (an ``op`` this socket does not serve), ``invalid_message``
                (right ``op``, wrong/missing/extra fields).
        """
        size, cap = len(data), MAX_DECODE_MESSAGE_CHARS
        try:
            op = self._envelope.decode(data).op
        except msgspec.ValidationError as exc:
            raise ProtocolError(
                Code.BAD_FRAME, cut(f"not a tagged message: {exc}", cap), frame_bytes=size
            ) from exc
        except msgspec.DecodeError as exc:
            raise ProtocolError(
                Code.BAD_FRAME, cut(f"not MessagePack: {exc}", cap), frame_bytes=size
            ) from exc
        if op not in self.tags:
            raise ProtocolError(Code.UNKNOWN_MESSAGE, f"unknown message {op[:64]!r}", frame_bytes=size)
        try:
            return self._decoder.decode(data)
        except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
            raise ProtocolError(
                Code.INVALID_MESSAGE,
                cut(f"invalid {op!r} message: {exc}", cap),
                operation=op,
                field=_field_of(exc),
                frame_bytes=size,
            ) from exc

    def encode(self, message: Message) -> bytes:
        """A message -> frame body (any `Message`, not only this codec's union)."""
        return self._encoder.encode(message)


# --- frames -------------------------------------------------------------------------------


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int = MAX_FRAME_BYTES) -> bytes | None:
    """The next frame's body, or None on a clean EOF (between frames).

    Raises:
        ProtocolError: ``frame_too_large`` (length over `max_bytes`; the body is not read) or
            ``bad_frame`` (EOF inside a header or body).
    """
    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError(Code.BAD_FRAME, "connection closed inside a frame header") from exc
    (length,) = _HEADER.unpack(header)
    if length > max_bytes:
        raise ProtocolError(
            Code.FRAME_TOO_LARGE, f"frame of {length} bytes; the cap is {max_bytes} bytes", frame_bytes=length
        )
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise ProtocolError(
            Code.BAD_FRAME,
            f"connection closed after {len(exc.partial)} of {length} bytes",
            frame_bytes=length,
        ) from exc


async def write_frame(
    writer: asyncio.StreamWriter, payload: bytes, *, max_bytes: int = MAX_FRAME_BYTES
) -> None:
    """Send one frame and wait for the buffer to drain.

    Raises:
        ProtocolError: ``frame_too_large`` when `payload` is over `max_bytes` (nothing sent).
    """
    if len(payload) > max_bytes:
        raise ProtocolError(
            Code.FRAME_TOO_LARGE, f"frame of {len(payload)} bytes; the cap is {max_bytes} bytes"
        )
    writer.write(_HEADER.pack(len(payload)) + payload)
    await writer.drain()


# --- peers and server ---------------------------------------------------------------------


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
    (`peer_groups`) is. All three facts come from the kernel."""
    if peer.uid in allowed_uids:
        return True
    if not allowed_gids:
        return False
    return peer.gid in allowed_gids or bool(peer_groups(sock) & allowed_gids)


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
RefusedPeerHook = Callable[[PeerCred], Awaitable[None]]
RefusedRequestHook = Callable[[PeerCred, RefusedRequest], Awaitable[None]]


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
        return ErrorReply(code=exc.code, message=cut(exc.message, MAX_MESSAGE_CHARS))
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
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), timeout=2)
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
                    await asyncio.wait_for(
                        read_frame(reader, max_bytes=max_frame_bytes), REFUSAL_DRAIN_SECONDS
                    )
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

    server = await asyncio.start_unix_server(connection, path=str(path))
    os.chmod(path, mode)
    return server


# --- client -------------------------------------------------------------------------------

R = TypeVar("R", bound=Message)


async def request(
    path: str | Path,
    message: Message,
    reply_type: type[R],
    *,
    timeout_seconds: float,
    max_frame_bytes: int = MAX_FRAME_BYTES,
) -> R | ErrorReply:
    """Send one request on a fresh connection and return the reply (`reply_type`, or a
    ``A | B`` union of reply types) or the server's `ErrorReply`. `timeout_seconds` covers
    connecting, sending and the answer.

    Raises:
        ProtocolError: ``service_unavailable`` (could not connect or send: nothing was
            received by the service), ``service_no_answer`` (sent, then timeout or connection
            lost: the outcome is unknown), or a decoding code for a malformed reply.
    """
    reply_types = typing.get_args(reply_type) or (reply_type,)
    codec = Codec((*reply_types, ErrorReply))
    sent = False
    try:
        async with asyncio.timeout(timeout_seconds):
            reader, writer = await asyncio.open_unix_connection(str(path))
            try:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    # A server that refuses this peer answers and closes without reading; its
                    # answer is still readable below.
                    await write_frame(writer, codec.encode(message), max_bytes=max_frame_bytes)
                    sent = True
                data = await read_frame(reader, max_bytes=max_frame_bytes)
            finally:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
    except (TimeoutError, OSError) as exc:
        code = Code.SERVICE_NO_ANSWER if sent else Code.SERVICE_UNAVAILABLE
        raise ProtocolError(code, f"{path}: {type(exc).__name__}: {exc}") from exc
    if data is None:
        code = Code.SERVICE_NO_ANSWER if sent else Code.SERVICE_UNAVAILABLE
        raise ProtocolError(code, f"{path} closed the connection without an answer")
    reply = codec.decode(data)
    return typing.cast("R | ErrorReply", reply)
