"""The socket protocol shared by every service (DESIGN §5): frames, messages, manifests.

A frame is a 4-byte big-endian length then that many bytes of MessagePack (msgspec). The length
is checked against `MAX_FRAME_BYTES` before the body is read. A message is a `Message`: a
frozen msgspec Struct tagged by its ``op`` field (snake_case of the class name unless given).
Each socket serves one union of request types through one `Codec`, built once; the server
loop is `shared.wire.server`, the client `shared.wire.client`.

Errors that cross a socket travel as `ErrorReply(code, message)` with a stable code from
`shared.errors.Code`; each socket's manifest (`Capabilities`) lists its operations and the
codes each may answer with, plus `TRANSPORT_CODES` which any operation may get.

Bad input changes nothing but the audit: a malformed body (``bad_frame``), an unknown ``op``
(``unknown_message``) or a wrong field (``invalid_message``: a missing or extra field, an ID not
of its format, a text over its cap; see `shared.wire.formats`) is answered and the connection
keeps serving; an oversize frame (``frame_too_large``) or a truncated one is answered and the
connection closed (the stream can no longer be followed); the handler is never called.

Errors: `ProtocolError` (a `FleetwatchError`) with one of the codes above.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import operator
import re
import struct
from collections.abc import Iterable
from typing import Any

import msgspec

from shared.errors import Code, FleetwatchError
from shared.wire.formats import ErrorText

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
    """The one error shape on the wire. `code` is a `Code` (decoding refuses any other value;
    `shared.wire.client` reads an undeclared one as ``internal_error``); branch on it, not on
    `message`."""

    code: Code
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
