"""The heartbeat at 2,000 devices (`bench/compass.py`), by `bench/watch_beat.py`'s machinery
(the lab as its own process, each measure in a fresh process): one beat
(`services.assistant.watch.heartbeat.Watch.beat`) beside the raw MCP reads it makes, in time
(medians, alternated round by round) and in memory growth (peak resident set over the set
once everything is imported, each in a process of its own)."""

from __future__ import annotations

from bench.compass_common import Row
from bench.watch_beat import one_size

DEVICES = 2000


async def measure(*, rounds: int) -> list[Row]:
    found = await one_size(DEVICES, rounds)
    return [
        Row(f"heartbeat, {DEVICES:,} devices", found["beat_ms"], found["raw_ms"], "ms", "<= 1.2x"),
        Row(
            f"heartbeat growth, {DEVICES:,} devices",
            found["beat_growth_mb"],
            found["raw_growth_mb"],
            "MB",
            "<= 1.2x",
        ),
    ]
