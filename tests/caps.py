"""Helpers for the tests of what reaches the audit from outside: huge values, raw frames."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path
from typing import Any

import msgspec

HUGE = 512 * 1024
"""The size of the forged approval ID that once made a 1 MB audit row, in characters."""
MAX_ROW_BYTES = 2048
"""A refusal's audit row (its detail JSON) stays under this many bytes."""


def big(text: str) -> str:
    """`text` repeated to `HUGE` characters (a frame that still fits the 1 MiB cap)."""
    return (text * (HUGE // len(text) + 1))[:HUGE]


async def raw_exchange(path: Path, body: bytes) -> dict[str, Any]:
    """Send one frame holding `body` exactly as given on a fresh connection; the decoded answer."""
    reader, writer = await asyncio.open_unix_connection(str(path))
    try:
        writer.write(struct.pack(">I", len(body)) + body)
        await writer.drain()
        (length,) = struct.unpack(">I", await reader.readexactly(4))
        return msgspec.msgpack.decode(await reader.readexactly(length))
    finally:
        writer.close()
