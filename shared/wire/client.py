"""The client side of a socket: one request on a fresh connection, then its reply or one
exception.

`SocketClient.call` connects, sends one frame (`shared.wire.protocol`) and returns the reply
type asked for, or raises `CallError` carrying a `Code`:

- the service's own refusal: the code of its `ErrorReply`;
- ``service_unavailable``: it could not be reached (no socket, refused, the request could not
  be sent): the service received nothing, so nothing ran;
- ``service_no_answer``: the request was sent, then a timeout, a lost connection or a reply
  that cannot be read: the outcome is unknown.

Codes on the wire are `Code` values and msgspec refuses any other while decoding. An
`ErrorReply` whose code this build does not declare (a newer peer) is the one case where a
code from the wire is translated: `request` turns it into ``internal_error`` and logs the code
it carried. Nowhere else does text become a `Code`.

Each socket's contract module has its client, `SocketClient` bound to its operation table:
`shared.wire.executor.ExecutorClient`, `shared.wire.approval.ApprovalClient`,
`shared.wire.assistant.AssistantClient`, each with one generic ``call(request) -> reply``.
`request` is the exchange under them (tests use it to send what no client sends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final, TypeVar

import msgspec

from shared.errors import Code, FleetwatchError
from shared.wire.formats import MAX_MESSAGE_CHARS
from shared.wire.protocol import (
    MAX_FRAME_BYTES,
    Codec,
    ErrorReply,
    Message,
    OperationTable,
    ProtocolError,
    Request,
    cut,
    message_tag,
    read_frame,
    reply_of,
    write_frame,
)

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=Message)

ERROR_TAG = message_tag(ErrorReply)

CALL_CODES: frozenset[Code] = frozenset(
    {Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER, Code.INTERNAL_ERROR, Code.PEER_NOT_ALLOWED}
)
"""What any call may raise besides its operation's own codes: the service not reached, no
answer, a crash or an undeclared code (``internal_error``), this peer refused. (A well-formed
request never draws the other `TRANSPORT_CODES`.)"""


class CallError(FleetwatchError):
    """A call across a socket gave no reply: the service refused (its code), or the transport
    failed (``service_unavailable``: nothing was received; ``service_no_answer``: sent, the
    outcome is unknown).

    Attributes:
        code: a `Code`; ``internal_error`` for a code this build does not declare.
        message: for people (the service's own words, cut to `MAX_MESSAGE_CHARS`).
        service: the service called (``executor``, ``approval_web``, ``assistant``).
        operation: the request's tag (``execute``).
    """

    def __init__(self, code: Code, message: str | None = None, *, service: str, operation: str) -> None:
        super().__init__(code, message)
        self.service = service
        self.operation = operation

    @classmethod
    def of(cls, reply: ErrorReply, *, service: str, operation: str) -> CallError:
        """The refusal `reply` from `service`, with its catalogue words (``template``,
        ``params``) when it carried them: a command says them in the reader's language."""
        error = cls(reply.code, reply.message, service=service, operation=operation)
        if reply.template is not None:
            error.template, error.params = reply.template, dict(reply.params)
        return error


class _UndeclaredError(Message, tag=ERROR_TAG):
    """An error reply read without checking its code: only to log what a newer peer sent."""

    code: str
    message: str


_UNDECLARED = msgspec.msgpack.Decoder(_UndeclaredError)


def _undeclared(data: bytes, where: str) -> ErrorReply | None:
    """The `ErrorReply` an error frame with an undeclared code stands for (``internal_error``,
    logged with the code it carried), or None when the frame is not an error reply at all."""
    try:
        raw = _UNDECLARED.decode(data)
    except msgspec.DecodeError:
        return None
    logger.error("%s answered with an undeclared code %r", where, raw.code[:64])
    return ErrorReply(code=Code.INTERNAL_ERROR, message=cut(raw.message, MAX_MESSAGE_CHARS))


async def request(
    path: str | Path,
    message: Message,
    reply_type: Any,
    *,
    timeout_seconds: float,
    max_frame_bytes: int = MAX_FRAME_BYTES,
    service: str = "the service",
) -> R | ErrorReply:
    """Send one request on a fresh connection and return the reply (`reply_type`, or a
    ``A | B`` union of reply types) or the service's `ErrorReply`. `timeout_seconds` covers
    connecting, sending and the answer.

    Raises:
        CallError: ``service_unavailable`` (could not connect or send: nothing was received by
            the service) or ``service_no_answer`` (sent, then a timeout, a lost connection or
            a reply that cannot be read: the outcome is unknown).
    """
    operation = message_tag(type(message))
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
    except ProtocolError as exc:
        if not sent:  # the request itself is over the cap: nothing was sent
            raise CallError(exc.code, exc.message, service=service, operation=operation) from exc
        raise _no_answer(service, operation, f"{exc.code}: {exc.message}") from exc
    except (TimeoutError, OSError) as exc:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if sent:
            raise _no_answer(service, operation, detail) from exc
        raise _unavailable(service, operation, path, detail) from exc
    if data is None:
        detail = "it closed the connection without an answer"
        if sent:
            raise _no_answer(service, operation, detail)
        raise _unavailable(service, operation, path, detail)
    try:
        return typing.cast("R | ErrorReply", codec.decode(data))
    except ProtocolError as exc:
        if exc.operation == ERROR_TAG:
            reply = _undeclared(data, f"{service} ({path})")
            if reply is not None:
                return reply
        raise _no_answer(service, operation, f"its reply cannot be read ({exc.code})") from exc


def _unavailable(service: str, operation: str, path: str | Path, detail: str) -> CallError:
    return CallError(
        Code.SERVICE_UNAVAILABLE,
        f"{service} is not running (nothing answers on {path}: {detail}); nothing was sent",
        service=service,
        operation=operation,
    )


def _no_answer(service: str, operation: str, detail: str) -> CallError:
    return CallError(
        Code.SERVICE_NO_ANSWER,
        f"{service} did not answer {operation} ({detail}); the outcome is unknown",
        service=service,
        operation=operation,
    )


READOUT_TIMEOUT_SECONDS = 60.0
"""Bound on one answer of a readout process (`call_readout`)."""


async def call_readout(
    module: str,
    request: Request[R],
    *,
    timeout_seconds: float = READOUT_TIMEOUT_SECONDS,
    service: str = "the store",
    env: Mapping[str, str] | None = None,
) -> R:
    """The reply to a read-only `request` from a service's readout (``python -m <module>``:
    one request frame body on its stdin, its reply or `ErrorReply` on its stdout), run as this
    user with `env` (default: this process's environment): what answers while the service
    itself is stopped.

    Raises:
        CallError: the readout's refusal (its code); ``internal_error`` when its answer cannot
            be read (the last line it wrote on stderr says why); ``service_no_answer`` after
            `timeout_seconds`.
    """
    operation = message_tag(type(request))
    codec = Codec((reply_of(type(request)), ErrorReply))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=None if env is None else dict(env),
    )
    try:
        async with asyncio.timeout(timeout_seconds):
            out, err = await process.communicate(codec.encode(request))
    except TimeoutError as exc:
        process.kill()
        await process.wait()
        raise _no_answer(service, operation, f"no answer within {timeout_seconds:g} s") from exc
    try:
        reply = codec.decode(out)
    except ProtocolError as exc:
        last = (err.decode(errors="replace").strip().splitlines() or [exc.message])[-1]
        raise CallError(Code.INTERNAL_ERROR, cut(last, 300), service=service, operation=operation) from exc
    if isinstance(reply, ErrorReply):
        raise CallError.of(reply, service=service, operation=operation)
    return typing.cast("R", reply)


DEFAULT_TIMEOUT_SECONDS = 10.0
"""Bound on one call unless its row, a client or a call says otherwise."""

ANY_SOCKET: Final = OperationTable("any", "the service", ())
"""The operations every socket serves (`GetCapabilities`): `SocketClient`'s own table."""


class SocketClient:
    """One socket's client: ``await client.call(Request(...))`` returns the request's reply
    (typed by its ``Request[Reply]`` parameter) or raises `CallError`. Each socket's contract
    module subclasses it with its `OperationTable` (`table`); this class itself only asks for
    the manifest.

    Args:
        path: the socket file.
        timeout_seconds: the bound on one call (connecting, sending, the answer) for an
            operation whose row names none; default `DEFAULT_TIMEOUT_SECONDS`.
        max_frame_bytes: the frame cap, both ways (default: the table's).
    """

    table: ClassVar[OperationTable] = ANY_SOCKET

    def __init__(
        self,
        path: str | Path,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_frame_bytes: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.timeout_seconds = timeout_seconds
        self.max_frame_bytes = self.table.frame_bytes if max_frame_bytes is None else max_frame_bytes

    async def call(self, message: Request[R], *, timeout_seconds: float | None = None) -> R:
        """Send `message`; its reply. `timeout_seconds` defaults to its row's ``seconds``, then
        the client's.

        Raises:
            CallError: the service's code, or ``service_unavailable`` / ``service_no_answer``.
            KeyError: this socket does not serve the request (a mistake in the caller).
        """
        row = self.table.row(type(message))
        bound = timeout_seconds if timeout_seconds is not None else row.seconds or self.timeout_seconds
        who = self.table.who
        reply = await request(
            self.path,
            message,
            reply_of(row.request),
            timeout_seconds=bound,
            max_frame_bytes=self.max_frame_bytes,
            service=who,
        )
        if isinstance(reply, ErrorReply):
            raise CallError.of(reply, service=who, operation=row.name)
        return typing.cast("R", reply)
