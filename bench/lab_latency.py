"""Lab call latency: the median time of one read call over a kept-open MCP session.

Run: ``.venv/bin/python bench/lab_latency.py [--calls N] [--devices N]``. Prints, side by side
from one run: the median per call for a small read and for the whole-team device list, and a
full snapshot (device list + three parallel per-device reads), for the campus scenario and for
a generated fleet. Ratios are what to compare between machines; absolute numbers are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from services.lab.server import run_lab
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN, EpiphanReadClient


async def median_ms(coro_factory, calls: int) -> float:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await coro_factory()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def measure(scenario: str, devices: int | None, calls: int) -> dict[str, float]:
    async with run_lab(scenario, devices=devices) as lab:
        token = lab.teams["normal"].token
        one = lab.teams["normal"].device_ids[0]
        async with EpiphanReadClient(McpConnection(lab.mcp_url, token), READ_TOOLS_OF_EPIPHAN) as client:
            await client.call("get_devices_in_my_team")  # open the session outside the timing
            return {
                "device_info_ms": await median_ms(
                    lambda: client.call("get_device_info", {"device_id": one}), calls
                ),
                "device_list_ms": await median_ms(lambda: client.call("get_devices_in_my_team"), calls),
                "snapshot_ms": await median_ms(client.snapshot, max(calls // 5, 3)),
                "devices": len(lab.teams["normal"].device_ids),
            }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--devices", type=int, default=2000)
    args = parser.parse_args()
    small = await measure("campus", None, args.calls)
    large = await measure("campus", args.devices, args.calls)
    print(f"{'':24}{'campus':>12}{'generated':>12}{'ratio':>8}")
    for key in ("devices", "device_info_ms", "device_list_ms", "snapshot_ms"):
        a, b = small[key], large[key]
        print(f"{key:24}{a:12.1f}{b:12.1f}{b / a:8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
