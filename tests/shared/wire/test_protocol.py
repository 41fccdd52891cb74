"""Frames, messages, the codec and manifests (`shared.wire.protocol`)."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from shared.errors import Code
from shared.wire.protocol import (
    Capabilities,
    Codec,
    ErrorReply,
    GetCapabilities,
    Message,
    OperationTable,
    ProtocolError,
    Row,
    message_tag,
    read_frame,
    reply_of,
    write_frame,
)
from tests.shared.wire.echo import OPERATIONS, REQUESTS, TABLE, Echo, Echoed, frame, pack


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


def test_a_table_derives_the_union_the_manifest_and_each_reply_from_its_rows():
    assert REQUESTS[-1] is GetCapabilities and Echo in REQUESTS
    assert [op.name for op in OPERATIONS] == [
        "echo",
        "add",
        "refuse",
        "crash",
        "stall",
        "pad",
        "get_capabilities",
    ]
    assert TABLE.codes_of("refuse") == {Code.KILL_SWITCH_ON, Code.SEAL_INVALID}
    assert reply_of(Echo) is Echoed and reply_of(GetCapabilities) is Capabilities
    assert TABLE.codec.decode(pack({"op": "echo", "text": "hi"})) == Echo(text="hi")


def test_a_table_refuses_a_request_listed_twice_and_a_request_without_its_reply():
    with pytest.raises(ValueError, match="twice"):
        OperationTable("t", "t", (Row(Echo, frozenset(), ""), Row(Echo, frozenset(), "")))

    class NoReply(Message):
        pass

    with pytest.raises(TypeError, match="does not declare its reply"):
        reply_of(NoReply)
    with pytest.raises(TypeError, match="does not declare its reply"):
        OperationTable("t", "t", (Row(NoReply, frozenset(), ""),))


def test_a_row_open_to_some_callers_declares_the_role_refusal_and_refuses_the_others():
    table = OperationTable("t", "t", (Row(Echo, frozenset(), "", frozenset({"operator"})),))
    assert table.codes_of("echo") == {Code.OPERATION_NOT_ALLOWED}
    assert table.allows(Echo, {"operator", "assistant"}) and not table.allows(Echo, {"assistant"})
    assert table.allows(GetCapabilities, set())
