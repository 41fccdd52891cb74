"""A store SQLite creates is its user's alone (issue 24, item 10): ``0600`` with its -wal and
-shm, in a ``0700`` folder, whatever the umask; an existing store keeps its own mode (a
server's is ``0660`` for its group)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from shared.sqlite import open_store


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_new_store_and_its_wal_and_shm_are_0600_under_a_loose_umask(tmp_path: Path) -> None:
    db = tmp_path / "state" / "fleetwatch.db"
    before = os.umask(0o022)
    try:
        conn = await open_store(db)
        try:
            await conn.execute("CREATE TABLE t (x)")
            await conn.execute("INSERT INTO t VALUES (1)")
            assert {p.name: mode(p) for p in db.parent.iterdir()} == {
                "fleetwatch.db": 0o600,
                "fleetwatch.db-wal": 0o600,
                "fleetwatch.db-shm": 0o600,
            }
            assert mode(db.parent) == 0o700
        finally:
            await conn.close()
    finally:
        os.umask(before)


async def test_an_existing_store_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "fleetwatch.db"
    db.touch()
    os.chmod(db, 0o660)
    conn = await open_store(db)
    await conn.close()
    assert mode(db) == 0o660
