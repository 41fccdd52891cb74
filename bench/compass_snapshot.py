"""The fleet snapshot at 2,000 devices (`bench/compass.py`): `EpiphanReadClient.snapshot` of a
generated fleet, beside the raw MCP reads it makes (the same calls, chunks and parallelism, as
they come: no parsing, no redaction)."""

from __future__ import annotations

import asyncio
import json
import time

from bench.compass_common import Row, interleaved, median
from services.lab.server import run_lab
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import (
    DEVICE_IDS_PER_CALL,
    PARALLEL_READS,
    READ_TOOLS_OF_EPIPHAN,
    EpiphanReadClient,
)

DEVICES = 2000
PER_DEVICE_READS = (
    ("get_recorder_status_for_devices", {}),
    ("get_system_status_for_devices", {}),
    ("get_current_or_next_cms_events_for_devices", {"until": "2099-01-01T00:00:00Z"}),
)


async def raw_reads(connection: McpConnection) -> None:
    """The MCP reads `snapshot` makes, as they come."""
    listed = await connection.call("get_devices_in_my_team")
    data = listed.structured if listed.structured is not None else json.loads(listed.text)
    ids = [device["Id"] for device in data["devices"]]
    gate = asyncio.Semaphore(PARALLEL_READS)

    async def one(tool: str, arguments: dict) -> None:
        async with gate:
            await connection.call(tool, arguments)

    await asyncio.gather(
        *(
            one(tool, {"device_ids": ids[i : i + DEVICE_IDS_PER_CALL], **extra})
            for tool, extra in PER_DEVICE_READS
            for i in range(0, len(ids), DEVICE_IDS_PER_CALL)
        )
    )


async def measure(*, runs: int) -> list[Row]:
    async with run_lab("campus", devices=DEVICES) as lab:
        connection = McpConnection(lab.mcp_url, lab.teams["normal"].token)
        async with EpiphanReadClient(connection, READ_TOOLS_OF_EPIPHAN) as client:
            snapshot = await client.snapshot()
            if len(snapshot.devices) < DEVICES:
                raise SystemExit(f"the generated fleet has {len(snapshot.devices)} devices, not {DEVICES}")
            await raw_reads(connection)

            async def ours() -> float:
                started = time.perf_counter()
                await client.snapshot()
                return time.perf_counter() - started

            async def ref() -> float:
                started = time.perf_counter()
                await raw_reads(connection)
                return time.perf_counter() - started

            a, b = await interleaved(runs, ours, ref)
    return [Row(f"snapshot, {DEVICES:,} devices", median(a) * 1e3, median(b) * 1e3, "ms", "<= 1.2x")]
