"""Schema version 4: what a person approved travels with the approval, and ``not_run``.

- ``approvals.shown_at``: when the card was shown (database clock, carried in the page's signed
  form token; nothing is written when a card is shown). The approval's ``expires_at`` is
  ``shown_at`` plus the policy's ``approval_ttl_seconds``.
- ``approvals.facts_hash`` and ``approvals.facts_json``: the executor's hash of every fact the
  card showed that decides what the write does (`services.executor.facts`), and those facts
  (display text only: a stream key or full URL enters the hash, never the store).
- ``approvals.ended_code``: set when an approval ends before the executor claimed it (refused
  before its claim, the executor not reached, no answer before the claim); such an approval
  can never be claimed.
- ``proposals.status`` may be ``not_run``: approved, then nothing ran (the executor refused
  before or after its claim, could not be reached, or did not answer before it took the
  approval); ``status_code`` says why. Final.

SQLite cannot alter a CHECK constraint, and the table cannot be rebuilt without losing the
foreign keys' cascade, so `after` rewrites the constraint's text in the schema (the documented
``writable_schema`` route for a change that does not touch the file format) and bumps
``schema_version`` so every open connection reloads it.
"""

from __future__ import annotations

import aiosqlite

SQL = """
ALTER TABLE approvals ADD COLUMN shown_at TEXT;
ALTER TABLE approvals ADD COLUMN facts_hash TEXT;
ALTER TABLE approvals ADD COLUMN facts_json TEXT;
ALTER TABLE approvals ADD COLUMN ended_code TEXT;
"""

OLD_CHECK = "CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'executed'))"
NEW_CHECK = "CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'executed', 'not_run'))"


async def after(conn: aiosqlite.Connection) -> None:
    """Add ``not_run`` to ``proposals.status``'s CHECK (inside the migration's transaction)."""
    async with conn.execute("PRAGMA schema_version") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    await conn.execute("PRAGMA writable_schema = ON")
    try:
        cursor = await conn.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'proposals'",
            (OLD_CHECK, NEW_CHECK),
        )
        if cursor.rowcount != 1:
            raise RuntimeError("proposals table not found")
        await conn.execute(f"PRAGMA schema_version = {int(row[0]) + 1}")
    finally:
        await conn.execute("PRAGMA writable_schema = OFF")
