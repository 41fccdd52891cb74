"""Frames, messages, the codec and manifests (`shared.wire.protocol`)."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from shared.errors import Code
from shared.wire.protocol import (
    Codec,
    ErrorReply,
    GetCapabilities,
    Message,
    Operation,
    ProtocolError,
    manifest_problems,
    message_tag,
    read_frame,
    write_frame,
)
from tests.shared.wire.echo import OPERATIONS, REQUESTS, Echo, Echoed, frame, pack


def reader_with(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def test_read_frame_returns_none_on_clean_eof_and_refuses_a_partial_header():
    assert await read_frame(reader_with(b"")) is None
    assert await read_frame(reader_with(frame(b"abc"))) == b"abc"
    with pytest.raises(ProtocolError) as caught:
        await read_frame(reader_with(b"\x00\x00"))
    assert caught.value.code is Code.BAD_FRAME


async def test_read_frame_refuses_an_oversize_length_before_reading_the_body():
    reader = reader_with(struct.pack(">I", 11) + b"0123456789A")
    with pytest.raises(ProtocolError) as caught:
        await read_frame(reader, max_bytes=10)
    assert caught.value.code is Code.FRAME_TOO_LARGE
    assert await reader.read() == b"0123456789A"


async def test_write_frame_refuses_an_oversize_payload_and_sends_nothing():
    left, right = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=left)
    try:
        with pytest.raises(ProtocolError) as caught:
            await write_frame(writer, b"x" * 11, max_bytes=10)
        assert caught.value.code is Code.FRAME_TOO_LARGE
        await write_frame(writer, b"ok", max_bytes=10)
        right.setblocking(False)
        assert right.recv(100) == frame(b"ok")
    finally:
        writer.close()
        await writer.wait_closed()
        right.close()


def test_message_tags_are_snake_case_and_the_error_reply_is_error():
    assert message_tag(GetCapabilities) == "get_capabilities"
    assert message_tag(Echoed) == "echoed"
    assert message_tag(ErrorReply) == "error"
    assert pack(ErrorReply(code="bad_frame", message="m")) == pack(
        {"op": "error", "code": "bad_frame", "message": "m"}
    )


def test_a_codec_refuses_two_types_with_one_tag():
    class Echo2(Message, tag="echo"):
        pass

    with pytest.raises(ValueError, match="duplicate"):
        Codec([Echo, Echo2])


def test_a_manifest_that_agrees_with_its_requests_has_no_problems():
    assert manifest_problems(OPERATIONS, REQUESTS) == ()


def test_a_manifest_that_disagrees_is_reported_both_ways():
    operations = (
        *(op for op in OPERATIONS if op.name not in ("echo", "refuse")),
        Operation(name="add", codes=frozenset()),
        Operation(name="teleport", codes=frozenset()),
        Operation(name="refuse", codes=frozenset({"not_a_code"})),  # a peer or a typo, not a Code
    )
    assert set(manifest_problems(operations, REQUESTS)) == {
        "operation 'add' is listed twice",
        "operation 'teleport' has no request type",
        "request 'echo' is not in the manifest",
        "operation 'refuse' declares unknown code 'not_a_code'",
    }
