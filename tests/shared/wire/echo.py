"""A small service the wire tests serve and call: its messages, its manifest, its handler,
and helpers to write frames by hand."""

from __future__ import annotations

import asyncio
import struct

import msgspec

from shared.errors import Code, FleetwatchError
from shared.wire.protocol import Capabilities, GetCapabilities, Message, Operation
from shared.wire.server import PeerCred


class Echo(Message):
    text: str


class Add(Message):
    a: int
    b: int


class Refuse(Message):
    code: str


class Crash(Message):
    pass


class Stall(Message):
    pass


class Pad(Message):
    size: int


class Echoed(Message):
    text: str


class Sum(Message):
    total: int


REQUESTS = (Echo, Add, Refuse, Crash, Stall, Pad, GetCapabilities)
OPERATIONS = (
    Operation(name="echo", codes=frozenset()),
    Operation(name="add", codes=frozenset()),
    Operation(name="refuse", codes=frozenset({Code.KILL_SWITCH_ON, Code.SEAL_INVALID})),
    Operation(name="crash", codes=frozenset()),
    Operation(name="stall", codes=frozenset()),
    Operation(name="pad", codes=frozenset()),
    Operation(name="get_capabilities", codes=frozenset()),
)
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
                return Capabilities(service="test", operations=OPERATIONS)
        raise RuntimeError("the handler crashed")


def pack(value) -> bytes:
    return msgspec.msgpack.encode(value)


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body
