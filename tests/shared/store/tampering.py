"""What a person who can write the store file does to the audit log: drop the append-only
triggers, change rows with plain SQL and, knowing the chain's recipe (it has no secret),
recompute every row's SHA-256 hash and link so the chain alone verifies again."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from shared.canonical import canonical_json
from shared.sqlite import parse_db_text
from shared.store.db import GENESIS_HASH

Statement = str | tuple[str, tuple]


def tamper(db: Path, *statements: Statement, rehash: bool = False) -> None:
    """Run `statements` (SQL, or (SQL, parameters)) on `db` with the audit guards dropped;
    with `rehash`, then recompute every audit row's hash and ``prev_hash`` in seq order."""
    raw = sqlite3.connect(db)
    try:
        raw.execute("DROP TRIGGER IF EXISTS audit_no_update")
        raw.execute("DROP TRIGGER IF EXISTS audit_no_delete")
        for statement in statements:
            sql, params = (statement, ()) if isinstance(statement, str) else statement
            raw.execute(sql, params)
        if rehash:
            _rehash(raw)
        raw.commit()
    finally:
        raw.close()


def _rehash(raw: sqlite3.Connection) -> None:
    prev, links = GENESIS_HASH, []
    rows = raw.execute("SELECT seq, at, actor, kind, proposal_id, detail_json FROM audit ORDER BY seq")
    for seq, at, actor, kind, proposal_id, detail_json in rows.fetchall():
        fields = {
            "seq": seq,
            "at": at,
            "actor": actor,
            "kind": kind,
            "proposal_id": proposal_id,
            "detail_json": detail_json,
        }
        digest = hashlib.sha256(prev.encode("ascii") + canonical_json(fields)).hexdigest()
        links.append((prev, digest, seq))
        prev = digest
    raw.execute("UPDATE audit SET prev_hash = 'tmp-p' || seq, hash = 'tmp-h' || seq")
    raw.executemany("UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?", links)


GUARD = (
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
    " BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END"
)
DELETER_POLL_SECONDS = 0.0005
"""How often `Deleter` looks at the file: it races the writing service's next step."""
DELETER_SECONDS = 30.0
"""Hard bound on how long a `Deleter` watches."""


@dataclass
class Deleter:
    """A store writer on its own thread, racing a running service: the first audit row of
    `kind` written after seq `after` is deleted as soon as it is seen (the guard trigger dropped
    and put back in the same transaction). See `deleting`."""

    db: Path
    kind: str
    after: int
    deleted: int | None = None
    """The seq deleted, once it is."""
    late_ms: float | None = None
    """How long after the row's own ``at`` (database clock, taken before its commit) it was gone."""
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        raw = sqlite3.connect(self.db, isolation_level=None)
        try:
            deadline = time.monotonic() + DELETER_SECONDS
            while not self.stop.is_set() and time.monotonic() < deadline:
                row = raw.execute(
                    "SELECT seq, at FROM audit WHERE seq > ? AND kind = ? ORDER BY seq LIMIT 1",
                    (self.after, self.kind),
                ).fetchone()
                if row is not None:
                    raw.execute("BEGIN IMMEDIATE")
                    raw.execute("DROP TRIGGER audit_no_delete")
                    raw.execute("DELETE FROM audit WHERE seq = ?", (row[0],))
                    raw.execute(GUARD)
                    raw.execute("COMMIT")
                    gone = raw.execute("SELECT strftime('%Y-%m-%dT%H:%M:%fZ','now')").fetchone()[0]
                    self.deleted = row[0]
                    self.late_ms = (parse_db_text(gone) - parse_db_text(row[1])).total_seconds() * 1000
                    return
                self.stop.wait(DELETER_POLL_SECONDS)
        finally:
            raw.close()


@contextlib.asynccontextmanager
async def deleting(db: Path, kind: str, *, after: int) -> AsyncIterator[Deleter]:
    """A `Deleter` watching `db` for the block; at its end, waits (bounded) for the deletion and
    stops the thread."""
    deleter = Deleter(db, kind, after)
    thread = threading.Thread(target=deleter.run)
    thread.start()
    try:
        yield deleter
        await asyncio.to_thread(thread.join, DELETER_SECONDS)
    finally:
        deleter.stop.set()
        await asyncio.to_thread(thread.join, DELETER_SECONDS)
