"""The store under several writers (`bench/compass.py`): processes appending audit rows at once,
each row in its own ``BEGIN IMMEDIATE`` (`shared.store.db.append_audit`, signed with an audit key
as approval_web signs its rows), against one writer
alone in the same run. Every "database is locked" (or ``store_busy``) is counted, never retried
silently.

Run as a writer: ``python bench/compass_store.py DB START SECONDS`` appends rows from the epoch
time START for SECONDS and prints ``{"rows": N, "locked": N}``.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from shared.errors import Code
from shared.store.audit_seal import APPROVAL_WEB, AuditKey, Keyring
from shared.store.db import StoreError, append_audit, migrate, open_store

WRITERS = 3
SETTLE_SECONDS = 1.5
"""How far ahead the writers' common start is set: every process is up and connected by then."""


async def write_rows(db: Path, start: float, seconds: float) -> dict[str, int]:
    # each row signed as approval_web signs its rows (a fresh key: nothing here verifies them)
    conn = await open_store(db, keyring=Keyring(AuditKey.new(APPROVAL_WEB)))
    rows = locked = 0
    try:
        await asyncio.sleep(max(0.0, start - time.time()))  # a benchmark's common start, not a test
        end = start + seconds
        while time.time() < end:
            try:
                await append_audit(conn, actor="bench", kind="bench_row", detail={"n": rows})
                rows += 1
            except StoreError as exc:
                if exc.code != Code.STORE_BUSY:
                    raise
                locked += 1
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc):
                    raise
                locked += 1
    finally:
        await conn.close()
    return {"rows": rows, "locked": locked}


@dataclass(frozen=True, slots=True)
class StoreResult:
    rows: list  # of compass_rows.Row
    rows_per_s: float
    lock_errors: int


def run_writers(db: Path, count: int, seconds: float) -> tuple[int, int]:
    """`count` writer processes over one window; (rows written, lock errors) in total."""
    start = time.time() + SETTLE_SECONDS
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, str(db), repr(start), repr(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    rows = locked = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=seconds + 60)
        if proc.returncode != 0:
            raise SystemExit(f"a writer failed ({proc.returncode})")
        result = json.loads(out.strip().splitlines()[-1])
        rows += result["rows"]
        locked += result["locked"]
    return rows, locked


async def measure(folder: Path, *, seconds: float) -> StoreResult:
    from bench.compass_common import Row

    db = folder / "fleetwatch.db"  # open_store makes the folder
    conn = await open_store(db)
    await migrate(conn)
    await conn.close()
    alone, alone_locked = await asyncio.to_thread(run_writers, db, 1, seconds)
    together, locked = await asyncio.to_thread(run_writers, db, WRITERS, seconds)
    row = Row(f"audit rows/s, {WRITERS} writers", together / seconds, alone / seconds, "rows/s", "0 locked")
    return StoreResult([row], together / seconds, locked + alone_locked)


if __name__ == "__main__":
    db_path, start_at, window = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    print(json.dumps(asyncio.run(write_rows(db_path, start_at, window))))
