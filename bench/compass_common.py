"""What the compass's sections share (`bench/compass.py`): the table's rows (a measure, ours,
its reference from the same run, the ratio), samples taken side by side, and the lab's own time
for Execute's critical path (the reference of the Execute and click measures)."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from services.lab.server import LabHandle
from shared.epiphan.mcp_session import McpConnection

IDLE = "29088800001"
"""The campus sandbox team's idle Pearl-2, on the fence's allowlist (`tests.executor.harness`)."""
LATENCY_S = 0.05
"""Latency put on every lab call for the ``_50ms`` measures."""


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: a measure, ours, its reference, the unit and the target."""

    measure: str
    ours: float
    reference: float
    unit: str
    target: str

    @property
    def ratio(self) -> float:
        return self.ours / self.reference if self.reference else float("nan")


def median(samples: list[float]) -> float:
    return statistics.median(samples)


async def interleaved(
    runs: int, ours: Callable[[], Awaitable[float]], ref: Callable[[], Awaitable[float]]
) -> tuple[list[float], list[float]]:
    """`runs` samples of each, alternating, so a noisy moment hits both alike."""
    a, b = [], []
    for _ in range(runs):
        a.append(await ours())
        b.append(await ref())
    return a, b


def table(rows: list[Row]) -> str:
    """The rows as a fixed-width table."""
    lines = [f"{'measure':40}{'ours':>11}{'reference':>11}{'ratio':>8}  {'unit':6}target"]
    for row in rows:
        lines.append(
            f"{row.measure:40}{row.ours:11.2f}{row.reference:11.2f}{row.ratio:8.2f}  {row.unit:6}{row.target}"
        )
    return "\n".join(lines)


def written_at(lab: LabHandle) -> float:
    """Epoch seconds of the only write in the lab's log."""
    (write,) = lab.writes()
    return datetime.fromisoformat(write["at"].replace("Z", "+00:00")).timestamp()


async def _reads_before_the_write(connection: McpConnection) -> None:
    """The device list, then the tool list, recorder status and events together: what a card
    (Inspect) and Execute must read, in their order (both list the server's tools afresh beside
    the last reads to hold the tool to its reviewed definition: `services.executor.world.Beside`;
    the lab answers a tool list without the injected latency, but its own time to build and
    send it is on the path)."""
    ids = {"device_ids": [IDLE]}
    await connection.call("get_devices_in_my_team")
    await asyncio.gather(
        connection.list_tools(),
        connection.call("get_recorder_status_for_devices", ids),
        connection.call(
            "get_current_or_next_cms_events_for_devices", {**ids, "until": "2099-01-01T00:00:00Z"}
        ),
    )


async def card_reads(lab: LabHandle, connection: McpConnection, latency_s: float) -> float:
    """The lab's own time for the reads behind a card (Inspect): the device list, then the tool
    list, recorder status and events together; over an open session, from the first call to the last answer
    (seconds)."""
    if latency_s:
        lab.set_fault("*", "latency", seconds=latency_s)
    started = time.perf_counter()
    await _reads_before_the_write(connection)
    seconds = time.perf_counter() - started
    lab.clear_faults()
    return seconds


async def direct_path(lab: LabHandle, connection: McpConnection, latency_s: float) -> float:
    """The lab's own time for Execute's critical path: the device list, then the tool list,
    recorder status and events together, then the write; over an open session, from the first call to the write in
    the lab's log (seconds)."""
    lab.reset()
    if latency_s:
        lab.set_fault("*", "latency", seconds=latency_s)
    started = time.time()
    await _reads_before_the_write(connection)
    await connection.call("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
    seconds = written_at(lab) - started
    lab.clear_faults()
    return seconds
