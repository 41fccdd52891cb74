"""The unix-socket server (`shared.wire.server`): round trips, bad input, peers, the socket file;
over real sockets in tmp_path, with the small service of `tests.shared.wire.echo`."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import stat
import struct
from typing import Annotated

import msgspec
import pytest

from shared.errors import Code, FleetwatchError
from shared.wire.client import request
from shared.wire.formats import MAX_MESSAGE_CHARS
from shared.wire.protocol import (
    TRANSPORT_CODES,
    Capabilities,
    Codec,
    ErrorReply,
    GetCapabilities,
    Message,
    ProtocolError,
    cut,
    read_frame,
)
from shared.wire.server import PeerCred, RefusedRequest, dispatch, peer_credentials, serve_unix
from tests.shared.wire.echo import (
    OPERATIONS,
    REQUESTS,
    SERVER_FRAME_CAP,
    TABLE,
    Add,
    Crash,
    Echo,
    Echoed,
    Pad,
    Refuse,
    Service,
    Sum,
    frame,
    pack,
)


@pytest.fixture
def socket_path(tmp_path):
    return tmp_path / "run" / "test.sock"


@pytest.fixture
async def service(socket_path):
    svc = Service()
    server = await serve_unix(
        socket_path,
        svc.handle,
        codec=Codec(REQUESTS),
        allowed_uids={os.getuid()},
        max_frame_bytes=SERVER_FRAME_CAP,
    )
    yield svc
    svc.release.set()
    server.close()
    await server.wait_closed()


def decode_reply(body: bytes | None) -> Message:
    assert body is not None, "the server closed without answering"
    return Codec([Echoed, Sum, ErrorReply, Capabilities]).decode(body)


class Raw:
    """A raw client connection: send any bytes, read framed replies."""

    async def open(self, path):
        self.reader, self.writer = await asyncio.open_unix_connection(str(path))
        return self

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def reply(self) -> Message:
        return decode_reply(await asyncio.wait_for(read_frame(self.reader), 10))

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def raw(path) -> Raw:
    return await Raw().open(path)


# --- round trips ---------------------------------------------------------------------------


async def test_a_request_gets_its_reply_and_the_handler_sees_the_peer(service, socket_path):
    assert await request(socket_path, Echo(text="héllo"), Echoed, timeout_seconds=10) == Echoed(text="héllo")
    assert await request(socket_path, Add(a=2, b=40), Sum, timeout_seconds=10) == Sum(total=42)
    assert [m for m, _ in service.seen] == [Echo(text="héllo"), Add(a=2, b=40)]
    assert service.seen[0][1] == PeerCred(pid=os.getpid(), uid=os.getuid(), gid=os.getgid())


async def test_one_connection_serves_many_frames_in_order(service, socket_path):
    conn = await raw(socket_path)
    await conn.send(b"".join(frame(pack({"op": "add", "a": i, "b": i})) for i in range(5)))
    assert [await conn.reply() for _ in range(5)] == [Sum(total=2 * i) for i in range(5)]
    await conn.close()


async def test_a_reply_union_is_accepted_by_the_client(service, socket_path):
    reply = await request(socket_path, Add(a=1, b=1), Echoed | Sum, timeout_seconds=10)
    assert reply == Sum(total=2)


async def test_the_manifest_crosses_the_socket_with_its_codes(service, socket_path):
    reply = await request(socket_path, GetCapabilities(), Capabilities, timeout_seconds=10)
    assert isinstance(reply, Capabilities)
    assert reply.operations == OPERATIONS
    assert reply.transport_codes == TRANSPORT_CODES
    assert all(isinstance(code, Code) for op in reply.operations for code in op.codes)


async def test_a_fleetwatch_error_in_the_handler_is_answered_with_its_code(service, socket_path):
    reply = await request(socket_path, Refuse(code="kill_switch_on"), Echoed, timeout_seconds=10)
    assert reply == ErrorReply(code="kill_switch_on", message="refused on purpose")


async def test_a_crashing_handler_answers_internal_error_logs_it_and_keeps_serving(
    service, socket_path, caplog
):
    with caplog.at_level(logging.ERROR, logger="shared.wire.server"):
        reply = await request(socket_path, Crash(), Echoed, timeout_seconds=10)
    assert isinstance(reply, ErrorReply) and reply.code == Code.INTERNAL_ERROR
    assert "the handler crashed" not in reply.message
    assert any(r.exc_info and "the handler crashed" in str(r.exc_info[1]) for r in caplog.records)
    assert await request(socket_path, Echo(text="still here"), Echoed, timeout_seconds=10) == Echoed(
        text="still here"
    )


# --- bad input changes nothing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"\xc1 not msgpack", Code.BAD_FRAME),
        (b"", Code.BAD_FRAME),
        (pack(5), Code.BAD_FRAME),
        (pack({"text": "no op"}), Code.BAD_FRAME),
        (pack({"op": 7}), Code.BAD_FRAME),
        (pack({"op": "echo", "text": "x"}) + b"\x00", Code.BAD_FRAME),
        (pack({"op": "reboot_everything", "device_ids": ["19012341234"]}), Code.UNKNOWN_MESSAGE),
        (pack({"op": "echoed", "text": "a reply is not a request"}), Code.UNKNOWN_MESSAGE),
        (pack({"op": "add", "a": "1", "b": 2}), Code.INVALID_MESSAGE),
        (pack({"op": "add", "a": 1}), Code.INVALID_MESSAGE),
        (pack({"op": "add", "a": 1, "b": 2, "force": True}), Code.INVALID_MESSAGE),
    ],
)
async def test_a_bad_message_gets_a_stable_code_the_handler_never_runs_and_the_connection_goes_on(
    service, socket_path, body, code
):
    conn = await raw(socket_path)
    await conn.send(frame(body))
    reply = await conn.reply()
    assert isinstance(reply, ErrorReply) and reply.code == code
    await conn.send(frame(pack({"op": "echo", "text": "next"})))
    assert await conn.reply() == Echoed(text="next")
    await conn.close()
    assert [m for m, _ in service.seen] == [Echo(text="next")]


async def test_an_unknown_tag_is_named_but_cut_short(service, socket_path):
    conn = await raw(socket_path)
    await conn.send(frame(pack({"op": "x" * 500})))
    reply = await conn.reply()
    assert isinstance(reply, ErrorReply) and reply.code == Code.UNKNOWN_MESSAGE
    assert "x" * 64 in reply.message and "x" * 65 not in reply.message
    await conn.close()


async def test_an_oversize_frame_is_refused_unread_and_closed_while_others_are_served(service, socket_path):
    bystander = await raw(socket_path)
    offender = await raw(socket_path)
    await offender.send(struct.pack(">I", SERVER_FRAME_CAP + 1) + b"\x00" * 64)
    reply = await offender.reply()
    assert isinstance(reply, ErrorReply) and reply.code == Code.FRAME_TOO_LARGE
    assert await asyncio.wait_for(offender.reader.read(), 10) == b""
    await offender.close()
    await bystander.send(frame(pack({"op": "echo", "text": "unaffected"})))
    assert await bystander.reply() == Echoed(text="unaffected")
    await bystander.close()
    assert await request(socket_path, Add(a=1, b=2), Sum, timeout_seconds=10) == Sum(total=3)
    assert [m for m, _ in service.seen] == [Echo(text="unaffected"), Add(a=1, b=2)]


async def test_a_reply_over_the_cap_is_replaced_by_frame_too_large(service, socket_path):
    reply = await request(socket_path, Pad(size=SERVER_FRAME_CAP), Echoed, timeout_seconds=10)
    assert isinstance(reply, ErrorReply) and reply.code == Code.FRAME_TOO_LARGE
    assert await request(socket_path, Pad(size=10), Echoed, timeout_seconds=10) == Echoed(text="y" * 10)


async def test_a_frame_cut_short_by_eof_is_answered_bad_frame_and_closed(service, socket_path):
    conn = await raw(socket_path)
    await conn.send(struct.pack(">I", 10) + b"abc")
    conn.writer.write_eof()
    reply = await conn.reply()
    assert isinstance(reply, ErrorReply) and reply.code == Code.BAD_FRAME
    assert await asyncio.wait_for(conn.reader.read(), 10) == b""
    await conn.close()
    assert service.seen == []


async def test_eof_between_frames_closes_the_server_side(service, socket_path):
    conn = await raw(socket_path)
    await conn.send(frame(pack({"op": "echo", "text": "bye"})))
    assert await conn.reply() == Echoed(text="bye")
    conn.writer.write_eof()
    assert await asyncio.wait_for(conn.reader.read(), 10) == b""
    await conn.close()


async def test_a_peer_whose_uid_is_not_allowed_is_refused_reported_and_disconnected(socket_path):
    svc, refused = Service(), []

    async def on_refused(peer: PeerCred) -> None:
        refused.append(peer)

    server = await serve_unix(
        socket_path,
        svc.handle,
        codec=Codec(REQUESTS),
        allowed_uids={os.getuid() + 1},
        on_refused_peer=on_refused,
    )
    try:
        reply = await request(socket_path, Echo(text="let me in"), Echoed, timeout_seconds=10)
        assert isinstance(reply, ErrorReply) and reply.code == Code.PEER_NOT_ALLOWED
        assert refused == [PeerCred(pid=os.getpid(), uid=os.getuid(), gid=os.getgid())]
        assert svc.seen == []
    finally:
        server.close()
        await server.wait_closed()


# --- socket file ---------------------------------------------------------------------------


async def test_the_socket_file_gets_the_requested_mode(service, socket_path):
    assert stat.S_ISSOCK(socket_path.stat().st_mode)
    assert stat.S_IMODE(socket_path.stat().st_mode) == 0o660


async def test_a_second_server_on_a_live_socket_is_refused(service, socket_path):
    with pytest.raises(ProtocolError) as caught:
        await serve_unix(socket_path, Service().handle, codec=Codec(REQUESTS), allowed_uids={os.getuid()})
    assert caught.value.code is Code.SOCKET_IN_USE
    assert await request(socket_path, Echo(text="first"), Echoed, timeout_seconds=10) == Echoed(text="first")


async def test_a_stale_socket_file_is_replaced(socket_path):
    socket_path.parent.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(socket_path))
    stale.close()
    server = await serve_unix(
        socket_path, Service().handle, codec=Codec(REQUESTS), allowed_uids={os.getuid()}
    )
    try:
        assert await request(socket_path, Echo(text="fresh"), Echoed, timeout_seconds=10) == Echoed(
            text="fresh"
        )
    finally:
        server.close()
        await server.wait_closed()


async def test_a_path_that_is_not_a_socket_is_never_removed(socket_path):
    socket_path.parent.mkdir(parents=True)
    socket_path.write_text("precious")
    with pytest.raises(ProtocolError) as caught:
        await serve_unix(socket_path, Service().handle, codec=Codec(REQUESTS), allowed_uids={os.getuid()})
    assert caught.value.code is Code.SOCKET_IN_USE
    assert socket_path.read_text() == "precious"


# --- peer credentials -------------------------------------------------------------------------


def test_peer_credentials_come_from_the_kernel():
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert peer_credentials(left) == PeerCred(pid=os.getpid(), uid=os.getuid(), gid=os.getgid())
    finally:
        left.close()
        right.close()


class Named(Message):
    proposal_id: Annotated[str, msgspec.Meta(pattern=r"^p-[0-9a-f]{12}\Z")]


async def test_a_request_refused_before_the_handler_is_reported_first_and_never_with_its_value(socket_path):
    reported: list[tuple[PeerCred, RefusedRequest]] = []
    seen: list[Message] = []

    async def handle(message: Message, peer: PeerCred) -> Message:
        seen.append(message)
        return Echoed(text="handled")

    async def on_refused_request(peer: PeerCred, refused: RefusedRequest) -> None:
        reported.append((peer, refused))

    server = await serve_unix(
        socket_path,
        handle,
        codec=Codec([Named]),
        allowed_uids={os.getuid()},
        on_refused_request=on_refused_request,
        max_frame_bytes=SERVER_FRAME_CAP,
    )
    try:
        client = await raw(socket_path)
        forged = "p-" + "f" * 3000
        for body in (pack({"op": "named", "proposal_id": forged}), pack({"op": "x" * 3000}), b"\xc1"):
            await client.send(frame(body))
            reply = await client.reply()
            assert isinstance(reply, ErrorReply) and len(reply.message) <= 300 and "fff" not in reply.message
        await client.send(frame(pack({"op": "named", "proposal_id": "p-0123456789ab"})))
        assert await client.reply() == Echoed(text="handled")
        await client.send(struct.pack(">I", SERVER_FRAME_CAP + 1))
        assert (await client.reply()).code == Code.FRAME_TOO_LARGE
        await client.close()
    finally:
        server.close()
        await server.wait_closed()
    assert [r for _, r in reported] == [
        RefusedRequest(
            "named", Code.INVALID_MESSAGE, "$.proposal_id", len(pack({"op": "named", "proposal_id": forged}))
        ),
        RefusedRequest("unknown", Code.UNKNOWN_MESSAGE, None, len(pack({"op": "x" * 3000}))),
        RefusedRequest("unknown", Code.BAD_FRAME, None, 1),
        RefusedRequest("unknown", Code.FRAME_TOO_LARGE, None, SERVER_FRAME_CAP + 1),
    ]
    assert all(peer.uid == os.getuid() for peer, _ in reported) and seen == [
        Named(proposal_id="p-0123456789ab")
    ]


async def test_a_handlers_long_refusal_message_is_cut_to_the_wire_cap_and_its_code_kept(socket_path):
    async def handle(message: Message, peer: PeerCred) -> Message:
        raise FleetwatchError(Code.KILL_SWITCH_ON, "z" * 10_000)

    server = await serve_unix(socket_path, handle, codec=Codec([Echo]), allowed_uids={os.getuid()})
    try:
        reply = await request(socket_path, Echo(text="hi"), Echoed, timeout_seconds=10)
    finally:
        server.close()
        await server.wait_closed()
    assert isinstance(reply, ErrorReply) and reply.code == Code.KILL_SWITCH_ON
    assert reply.message == "z" * (MAX_MESSAGE_CHARS - 1) + "…" == cut("z" * 10_000, MAX_MESSAGE_CHARS)


async def test_dispatch_needs_one_handler_per_row_and_answers_the_manifest_itself():
    async def echo(request: Echo, peer: PeerCred) -> Echoed:
        return Echoed(text=request.text)

    with pytest.raises(ValueError, match="Add"):
        dispatch(TABLE, {Echo: echo})
    handlers = {t: echo for t in TABLE.requests if t is not GetCapabilities}
    handle = dispatch(TABLE, handlers)
    peer = PeerCred(pid=1, uid=2, gid=3)
    assert await handle(GetCapabilities(), peer) == TABLE.manifest
    assert await handle(Echo(text="hi"), peer) == Echoed(text="hi")
