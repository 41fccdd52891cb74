"""The client side of a socket: one request on a fresh connection, one reply.

`request` connects, sends one frame (`shared.wire.protocol`) and reads the answer: the reply
type asked for or the server's `ErrorReply`.

Errors: `ProtocolError`: ``service_unavailable`` (could not connect or send: nothing was
received by the service), ``service_no_answer`` (sent, then timeout or connection lost: the
outcome is unknown), or a decoding code for a malformed reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import typing
from pathlib import Path
from typing import TypeVar

from shared.errors import Code
from shared.wire.protocol import (
    MAX_FRAME_BYTES,
    Codec,
    ErrorReply,
    Message,
    ProtocolError,
    read_frame,
    write_frame,
)

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
