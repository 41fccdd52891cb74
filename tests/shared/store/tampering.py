"""What a person who can write the store file does to the audit log: drop the append-only
triggers, change rows with plain SQL and, knowing the chain's recipe (it has no secret),
recompute every row's SHA-256 hash and link so the chain alone verifies again."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from shared.canonical import canonical_json
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
