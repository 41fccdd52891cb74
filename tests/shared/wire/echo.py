"""A small service the wire tests serve and call: its messages, its manifest, its handler,
and helpers to write frames by hand."""

from __future__ import annotations

import asyncio
import struct

import msgspec

from shared.errors import Code, FleetwatchError
from shared.wire.protocol import GetCapabilities, Message, OperationTable, Request, Row
from shared.wire.server import PeerCred


class Echoed(Message):
    text: str


class Sum(Message):
    total: int


class Echo(Request[Echoed]):
    text: str


class Add(Request[Sum]):
    a: int
    b: int


class Refuse(Request[Echoed]):
    code: str


class Crash(Request[Echoed]):
    pass


class Stall(Request[Echoed]):
    pass


class Pad(Request[Echoed]):
    size: int


TABLE = OperationTable(
    "test",
    "the test service",
    (
        Row(Echo, frozenset(), ""),
        Row(Add, frozenset(), ""),
        Row(Refuse, frozenset({Code.KILL_SWITCH_ON, Code.SEAL_INVALID}), ""),
        Row(Crash, frozenset(), ""),
        Row(Stall, frozenset(), ""),
        Row(Pad, frozenset(), ""),
    ),
)
REQUESTS = TABLE.requests
OPERATIONS = TABLE.manifest.operations
SERVER_FRAME_CAP = 4096


class Service:
    """A small service: what it was asked, in order, and an event that `Stall` waits on."""

    def __init__(self) -> None:
        self.seen: list[tuple[Message, PeerCred]] = []
        self.release = asyncio.Event()

    async def handle(self, message: Message, peer: PeerCred) -> Message:
        self.seen.append((message, peer))
        match message:
            case Echo(text=text):
                return Echoed(text=text)
            case Add(a=a, b=b):
                return Sum(total=a + b)
            case Refuse(code=code):
                raise FleetwatchError(Code(code), "refused on purpose")
            case Stall():
                await self.release.wait()
                return Echoed(text="late")
            case Pad(size=size):
                return Echoed(text="y" * size)
            case GetCapabilities():
                return TABLE.manifest
        raise RuntimeError("the handler crashed")


def pack(value) -> bytes:
    return msgspec.msgpack.encode(value)


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body
