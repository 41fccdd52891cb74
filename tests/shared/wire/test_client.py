"""The client side of a socket: one reply or one `CallError` carrying a `Code`.

A scripted server on a real unix socket answers with frames written by hand (what a newer or a
broken peer could send), so the client's one translation of a code from the wire, and its
distinction between "not reached: nothing ran" and "sent, no answer", are held here.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from shared.errors import Code
from shared.wire.client import CALL_CODES, CallError, SocketClient, request
from shared.wire.protocol import (
    MAX_FRAME_BYTES,
    TRANSPORT_CODES,
    ErrorReply,
    Message,
    OperationTable,
    Request,
    Row,
    read_frame,
    write_frame,
)

ROOT = Path(__file__).resolve().parents[3]


class Big(Message):
    text: str


class Pong(Message):
    text: str


class Ping(Request[Pong]):
    pass


class PingClient(SocketClient):
    table = OperationTable("ping", "the ping service", (Row(Ping, frozenset(), "ping"),))

    async def ping(self) -> Pong:
        return await self.call(Ping())


Answer = Callable[[bytes], Any]
"""What the scripted server does with one request frame: bytes to send back (a frame body),
or None to hang up without answering; or an awaitable of either."""


@contextlib.asynccontextmanager
async def scripted(path: Path, answer: Answer) -> AsyncIterator[list[bytes]]:
    """Serve one scripted answer per connection on `path`; yields the request frames read."""
    seen: list[bytes] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            data = await read_frame(reader)
            if data is not None:
                seen.append(data)
                body = answer(data)
                if inspect.isawaitable(body):
                    body = await body
                if body is not None:
                    await write_frame(writer, body)
        finally:
            writer.close()

    server = await asyncio.start_unix_server(connection, path=str(path))
    try:
        yield seen
    finally:
        server.close()
        await server.wait_closed()


def raw(**fields: Any) -> bytes:
    """A frame body written by hand (no Struct checks what it holds)."""
    return msgspec.msgpack.encode(fields)


async def test_a_reply_is_returned_as_its_type(tmp_path: Path) -> None:
    sock = tmp_path / "ping.sock"
    async with scripted(sock, lambda _: raw(op="pong", text="hello")) as seen:
        assert await PingClient(sock).ping() == Pong(text="hello")
    assert msgspec.msgpack.decode(seen[0]) == {"op": "ping"}


async def test_a_refusal_raises_one_call_error_carrying_its_code(tmp_path: Path) -> None:
    sock = tmp_path / "ping.sock"
    async with scripted(sock, lambda _: raw(op="error", code="kill_switch_on", message="paused")):
        with pytest.raises(CallError) as caught:
            await PingClient(sock).ping()
    assert caught.value.code is Code.KILL_SWITCH_ON
    assert (caught.value.message, caught.value.service, caught.value.operation) == (
        "paused",
        "the ping service",
        "ping",
    )


async def test_a_code_on_the_wire_decodes_to_a_code_member(tmp_path: Path) -> None:
    sock = tmp_path / "ping.sock"
    async with scripted(sock, lambda _: raw(op="error", code="seal_invalid", message="old seal")):
        reply = await request(sock, Ping(), Pong, timeout_seconds=10)
    assert isinstance(reply, ErrorReply) and reply.code is Code.SEAL_INVALID


async def test_an_undeclared_code_becomes_internal_error_and_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sock = tmp_path / "ping.sock"
    answer = raw(op="error", code="from_a_newer_build", message="something new")
    async with scripted(sock, lambda _: answer):
        with caplog.at_level(logging.ERROR, logger="shared.wire.client"), pytest.raises(CallError) as caught:
            await PingClient(sock).ping()
    assert caught.value.code is Code.INTERNAL_ERROR
    assert caught.value.message == "something new"
    assert any("from_a_newer_build" in r.getMessage() for r in caplog.records)


async def test_a_reply_that_cannot_be_read_after_sending_has_an_unknown_outcome(tmp_path: Path) -> None:
    sock = tmp_path / "ping.sock"
    async with scripted(sock, lambda _: raw(op="pong", text=5)) as seen:
        with pytest.raises(CallError) as caught:
            await PingClient(sock).ping()
    assert caught.value.code is Code.SERVICE_NO_ANSWER and "outcome is unknown" in caught.value.message
    assert len(seen) == 1


async def test_a_hang_up_after_the_request_arrived_has_an_unknown_outcome(tmp_path: Path) -> None:
    sock = tmp_path / "ping.sock"
    async with scripted(sock, lambda _: None) as seen:
        with pytest.raises(CallError) as caught:
            await PingClient(sock).ping()
    assert caught.value.code is Code.SERVICE_NO_ANSWER
    assert len(seen) == 1


async def test_a_request_without_an_answer_in_time_has_an_unknown_outcome(tmp_path: Path) -> None:
    sock, release = tmp_path / "ping.sock", asyncio.Event()

    async def never(_: bytes) -> None:
        await release.wait()

    async with scripted(sock, never) as seen:
        with pytest.raises(CallError) as caught:
            await request(sock, Ping(), Pong, timeout_seconds=0.3)
        release.set()
    assert caught.value.code is Code.SERVICE_NO_ANSWER
    assert len(seen) == 1


async def test_a_request_over_the_cap_is_never_sent(tmp_path: Path) -> None:
    sock = tmp_path / "ping.sock"
    async with scripted(sock, lambda _: raw(op="pong", text="unexpected")) as seen:
        with pytest.raises(CallError) as caught:
            await request(sock, Big(text="z" * MAX_FRAME_BYTES), Pong, timeout_seconds=10)
    assert caught.value.code is Code.FRAME_TOO_LARGE
    assert seen == []


async def test_nothing_listening_is_unavailable_and_nothing_was_sent(tmp_path: Path) -> None:
    with pytest.raises(CallError) as caught:
        await PingClient(tmp_path / "nobody.sock").ping()
    assert caught.value.code is Code.SERVICE_UNAVAILABLE
    assert caught.value.message.startswith("the ping service is not running")


def test_the_codes_any_call_may_raise_are_transport_codes_or_the_two_transport_failures() -> None:
    assert CALL_CODES - TRANSPORT_CODES == {Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER}


def test_no_module_turns_text_into_a_code_by_hand() -> None:
    """Codes arrive as `Code` members (msgspec checks them while decoding); the one place a
    code from the wire is translated is the client's undeclared-code fallback. So no module
    calls ``Code(...)`` on a value; only `FleetwatchError` normalises what it is given."""
    found = []
    for top in ("services", "shared"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Code":
                    found.append(path.relative_to(ROOT).as_posix())
    assert found == ["shared/errors.py"], found
