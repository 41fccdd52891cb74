"""The audit walk over a long chain: what `audit verify` costs, and how long it holds a service.

Run: ``.venv/bin/python -m bench.audit_walk [--rows N]`` (default 120,000: the chain the
fuzzing in ``bench/reliability.py`` grows with its own refusal rows). Builds a chain of `N` rows
signed by both writers in a temporary store, then measures side by side in one run:

- the walk (`shared.store.db.verify_audit`, both keys, with a store lock as the services use it);
- the reference: reading the same rows and columns raw, with no check (``SELECT`` only);
- the longest time the walk held the lock in one go, and how often it took it: what any other
  request of the service (an approval, a refusal's audit row) waits at most meanwhile.

Prints a table and, as its last line, one JSON object
``{"rows": N, "walk_s": …, "raw_read_s": …, "ratio": …, "rows_per_s": …, "lock_max_hold_ms": …,
"lock_takes": …}``. Absolute numbers are noisy on a shared machine; compare the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from shared.store.audit_seal import APPROVAL_WEB, EXECUTOR, AuditKey, Keyring
from shared.store.db import append_audit, migrate, open_store, verify_audit, write_tx

FILL_BATCH_ROWS = 5000


class TimedLock(asyncio.Lock):
    """A lock that records how long each hold lasts (seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.holds: list[float] = []
        self._since = 0.0

    async def acquire(self) -> bool:
        got = await super().acquire()
        self._since = time.perf_counter()
        return got

    def release(self) -> None:
        self.holds.append(time.perf_counter() - self._since)
        super().release()


async def fill(conn, rows: int) -> None:
    """`rows` audit rows, the two writers taking turns, in transactions of `FILL_BATCH_ROWS`."""
    done = 0
    while done < rows:
        async with write_tx(conn):
            for n in range(done, min(done + FILL_BATCH_ROWS, rows)):
                actor = APPROVAL_WEB if n % 2 else EXECUTOR
                await append_audit(
                    conn, actor=actor, kind="refusal", detail={"code": "invalid_message", "n": n}
                )
        done = min(done + FILL_BATCH_ROWS, rows)


async def raw_read_seconds(conn) -> float:
    start = time.perf_counter()
    async with conn.execute(
        "SELECT seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash, writer, mac FROM audit"
        " ORDER BY seq"
    ) as cursor:
        await cursor.fetchall()
    return time.perf_counter() - start


async def measure(rows: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory(prefix="fw-audit-walk-") as folder:
        conn = await open_store(
            Path(folder) / "fleetwatch.db",
            keyring=Keyring(AuditKey.new(APPROVAL_WEB), AuditKey.new(EXECUTOR)),
        )
        try:
            await migrate(conn)
            started = time.perf_counter()
            await fill(conn, rows)
            print(f"filled {rows:,} rows in {time.perf_counter() - started:.1f} s", flush=True)
            raw = await raw_read_seconds(conn)
            lock = TimedLock()
            started = time.perf_counter()
            result = await verify_audit(conn, lock=lock)
            walk = time.perf_counter() - started
        finally:
            await conn.close()
    if not (result.ok and result.rows == rows):
        raise SystemExit(f"the walk did not verify {rows} rows: {result}")
    return {
        "rows": rows,
        "walk_s": round(walk, 3),
        "raw_read_s": round(raw, 3),
        "ratio": round(walk / raw, 2),
        "rows_per_s": round(rows / walk),
        "lock_max_hold_ms": round(max(lock.holds) * 1000, 1),
        "lock_takes": len(lock.holds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=120_000, help="rows in the chain (default 120,000)")
    args = parser.parse_args()
    out = asyncio.run(measure(args.rows))
    print(f"{'measure':<34}{'value':>12}")
    print(f"{'walk (verify_audit), s':<34}{out['walk_s']:>12}")
    print(f"{'raw read of the same rows, s':<34}{out['raw_read_s']:>12}")
    print(f"{'ratio walk / raw read':<34}{out['ratio']:>12}")
    print(f"{'rows per second':<34}{out['rows_per_s']:>12,}")
    print(f"{'longest lock hold, ms':<34}{out['lock_max_hold_ms']:>12}")
    print(f"{'lock taken, times':<34}{out['lock_takes']:>12}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
