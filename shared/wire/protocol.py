"""The socket protocol shared by every service (DESIGN §5): frames, messages, manifests.

A frame is a 4-byte big-endian length then that many bytes of MessagePack (msgspec). The length
is checked against `MAX_FRAME_BYTES` before the body is read. A message is a `Message`: a
frozen msgspec Struct tagged by its ``op`` field (snake_case of the class name unless given).
Each socket serves one union of request types through one `Codec`, built once; the server
loop is `shared.wire.server`, the client `shared.wire.client`.

Errors that cross a socket travel as `ErrorReply(code, message)` with a stable code from
`shared.errors.Code`. Each socket declares its operations once, in an `OperationTable`: one
`Row` per `Request` (whose ``Request[Reply]`` parameter is its reply), with the codes it may
answer, who may call it and a line for its manifest (`Capabilities`, which adds
`TRANSPORT_CODES`: any operation may get them). The union, the codec, the manifest, the
client's typing, the dispatch and the role check are derived from the table.

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
import typing
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Final, Generic, TypeVar

import msgspec
from msgspec import Meta

from shared.errors import Code, FleetwatchError
from shared.wire.formats import MAX_MESSAGE_CHARS, ErrorText

logger = logging.getLogger(__name__)

MAX_ERROR_PARAMS: Final = 16
"""Most parameters an `ErrorReply`'s catalogue words carry."""
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


class ErrorReply(Message, tag="error", omit_defaults=True):
    """The one error shape on the wire. `code` is a `Code` (decoding refuses any other value;
    `shared.wire.client` reads an undeclared one as ``internal_error``); branch on it, not on
    `message`. A refusal made of catalogue words (`shared.errors.FleetwatchError.said`) also
    carries its `template` (the English message ID) and `params` (text), so a command says it
    in the reader's language; both are left out of the frame when absent."""

    code: Code
    message: ErrorText
    template: ErrorText | None = None
    params: Annotated[dict[str, ErrorText], Meta(max_length=MAX_ERROR_PARAMS)] = msgspec.field(
        default_factory=dict
    )

    @classmethod
    def of(cls, exc: FleetwatchError) -> ErrorReply:
        """The reply that refuses with `exc`: its code, its message cut to `MAX_MESSAGE_CHARS`,
        and its catalogue words when it has them (each parameter cut too)."""
        params = {k: cut(v, MAX_MESSAGE_CHARS) for k, v in list(exc.params.items())[:MAX_ERROR_PARAMS]}
        return cls(
            code=exc.code, message=cut(exc.message, MAX_MESSAGE_CHARS), template=exc.template, params=params
        )


class Operation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One operation of a socket's manifest: the request tag and the codes it may answer with
    (besides `TRANSPORT_CODES`)."""

    name: str
    codes: frozenset[Code]
    summary: str = ""


class Capabilities(Message):
    """Reply to `GetCapabilities`: the socket's operations and their codes."""

    service: str
    operations: tuple[Operation, ...]
    transport_codes: frozenset[Code] = TRANSPORT_CODES


ReplyT = TypeVar("ReplyT", bound=Message)


class Request(Message, Generic[ReplyT]):
    """Base of every request; its parameter is its reply: ``class Deny(Request[ProposalState])``
    (``Request[A | B]`` when it may be either). The client's ``call`` is typed by it, and
    `reply_of` reads it back."""


class GetCapabilities(Request[Capabilities]):
    """Request: the socket's manifest. Every socket serves it."""


def message_tag(message_type: type[Message]) -> str:
    """The ``op`` value of a `Message` class."""
    tag = message_type.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{message_type.__name__} is not a tagged Message")
    return tag


def reply_of(request_type: type[Request[Any]]) -> Any:
    """The reply type a request class declares (its ``Request[...]`` parameter; a union when it
    may be either).

    Raises:
        TypeError: the class does not subclass ``Request[Reply]``.
    """
    for base in getattr(request_type, "__orig_bases__", ()):
        if typing.get_origin(base) is Request:
            return typing.get_args(base)[0]
    raise TypeError(f"{request_type.__name__} does not declare its reply (Request[Reply])")


ROLE_REFUSAL: Final = Code.OPERATION_NOT_ALLOWED
"""What an operation open only to some callers answers the others (declared for it by its row)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One operation of a socket, declared once.

    Attributes:
        request: the request class (its tag names the operation; its ``Request[...]``
            parameter is its reply).
        codes: the codes its handler may answer with, besides `TRANSPORT_CODES`.
        summary: one line for the manifest.
        callers: the roles that may call it (the socket's own words for its peers); None:
            every admitted peer. A row with callers declares `ROLE_REFUSAL` too.
        seconds: the client's default bound on one call of it; None: the client's own.
    """

    request: type[Request[Any]]
    codes: frozenset[Code]
    summary: str
    callers: frozenset[str] | None = None
    seconds: float | None = None

    @property
    def name(self) -> str:
        return message_tag(self.request)

    @property
    def declared(self) -> frozenset[Code]:
        """`codes`, with `ROLE_REFUSAL` when only some callers may call it."""
        return self.codes if self.callers is None else self.codes | {ROLE_REFUSAL}


class OperationTable:
    """One socket's operations, one `Row` each, and what is derived from them: the request
    union (`requests`, decoded by `codec`), the manifest (`manifest`), each request's reply
    (`reply_of`) and the role check (`allows`); `shared.wire.server.dispatch` builds the
    handler from it and `shared.wire.client.SocketClient.call` the typed client.

    Args:
        service: the service as its manifest names it (``executor``).
        who: the service as a sentence names it (``the executor``), in a `CallError`.
        rows: the operations, in manifest order; `GetCapabilities` is added last.
        frame_bytes: the socket's frame cap, both ways.

    Raises:
        ValueError: a request listed twice.
        TypeError: a request that does not declare its reply (`reply_of`).
    """

    def __init__(
        self, service: str, who: str, rows: Iterable[Row], *, frame_bytes: int = MAX_FRAME_BYTES
    ) -> None:
        self.service = service
        self.who = who
        self.frame_bytes = frame_bytes
        self.rows: tuple[Row, ...] = (*rows, Row(GetCapabilities, frozenset(), "this manifest"))
        self._rows: dict[type[Message], Row] = {row.request: row for row in self.rows}
        if len(self._rows) != len(self.rows):
            raise ValueError(f"{service}: a request is listed twice")
        for row in self.rows:
            reply_of(row.request)
        self.requests: tuple[type[Request[Any]], ...] = tuple(self._rows)
        self.codec = Codec(self.requests)
        operations = tuple(Operation(row.name, row.declared, row.summary) for row in self.rows)
        self.manifest = Capabilities(service=service, operations=operations)

    def row(self, request_type: type[Message]) -> Row:
        """The row of a request class.

        Raises:
            KeyError: this socket does not serve it.
        """
        return self._rows[request_type]

    def codes_of(self, operation: str) -> frozenset[Code]:
        """The codes `operation` (a tag) declares, without the transport codes.

        Raises:
            KeyError: no such operation.
        """
        for row in self.rows:
            if row.name == operation:
                return row.declared
        raise KeyError(operation)

    def allows(self, request_type: type[Message], roles: Collection[str]) -> bool:
        """True when a peer holding `roles` may make this request (its row's ``callers``)."""
        callers = self.row(request_type).callers
        return callers is None or not callers.isdisjoint(roles)


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
