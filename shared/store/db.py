"""The SQLite store shared by every service (DESIGN §6), through aiosqlite.

- `open_store`: WAL, ``busy_timeout`` 10 s, foreign keys on, ``isolation_level=None`` (we
  issue every ``BEGIN`` ourselves), rows as `sqlite3.Row`.
- `write_tx`: every read-then-write runs in ``BEGIN IMMEDIATE`` (a deferred transaction that
  reads then writes deadlocks across processes). A single statement needs no transaction.
- `db_now` / `NOW_SQL`: the clock that decides (expiry, caps) is SQLite's, UTC,
  ``YYYY-MM-DDTHH:MM:SS.SSSZ`` (fixed width, so text comparison is time order).
- `migrate`: versioned schema (`MIGRATIONS`, ``PRAGMA user_version``), run by one owner at start.
- The audit table is a SHA-256 hash chain: see `append_audit`, `verify_audit`, `audit_head`.

Errors: `StoreError` with ``store_schema_too_new``, ``store_busy`` (locked past the busy
timeout; the transaction was rolled back), ``store_full`` or ``store_read_only`` (the disk is
full or cannot be written; rolled back, see `cannot_write`) or ``audit_chain_broken``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import sqlite3
import unicodedata
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite

from shared.canonical import canonical_json
from shared.errors import MEANINGS, Code, FleetwatchError
from shared.store.migrations import MIGRATIONS

__all__ = [
    "GENESIS_HASH",
    "MIGRATIONS",
    "NOW_SQL",
    "AuditHead",
    "AuditVerification",
    "StoreError",
    "append_audit",
    "audit_head",
    "db_now",
    "migrate",
    "open_store",
    "schema_version",
    "verify_audit",
    "write_tx",
]

BUSY_TIMEOUT_MS = 10_000
NOW_SQL = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
"""SQL expression for the database clock, UTC with milliseconds; embed it in statements that
decide on time, e.g. ``UPDATE approvals SET used=1 WHERE id=? AND used=0 AND expires_at > {NOW_SQL}``."""
GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first audit row."""


class StoreError(FleetwatchError):
    """The store refused: ``store_schema_too_new``, ``store_busy`` or ``audit_chain_broken``."""


async def open_store(path: str | Path) -> aiosqlite.Connection:
    """Open (creating it and its folder if needed) the store at `path`.

    The connection is in autocommit mode: use `write_tx` for anything that reads then writes.
    Call `migrate` once at start in the process that owns the schema.

    Raises:
        StoreError: ``store_read_only`` / ``store_full`` when the file cannot be set up for
            writing (WAL needs to write), ``store_busy`` when it stays locked (`cannot_write`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        conn.row_factory = sqlite3.Row
        await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await conn.execute("PRAGMA journal_mode = WAL")
        await conn.execute("PRAGMA foreign_keys = ON")
    except BaseException as exc:
        await conn.close()
        if _read_only_folder(path):
            raise StoreError(
                Code.STORE_READ_ONLY, f"{MEANINGS[Code.STORE_READ_ONLY]} ({path.parent})"
            ) from exc
        raise cannot_write(exc) or exc from exc
    return conn


def _read_only_folder(path: Path) -> bool:
    """True when the store's folder or file cannot be written: a read-only mount, or modes
    (SQLite then says only "unable to open database file", for the -wal or -shm it must make)."""
    try:
        read_only_mount = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False
    unwritable = not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK))
    return read_only_mount or unwritable


def _is_busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) is not None and exc.sqlite_errorcode & 0xFF in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    )


_CANNOT_WRITE = {
    sqlite3.SQLITE_BUSY: Code.STORE_BUSY,
    sqlite3.SQLITE_LOCKED: Code.STORE_BUSY,
    sqlite3.SQLITE_FULL: Code.STORE_FULL,
    sqlite3.SQLITE_READONLY: Code.STORE_READ_ONLY,
}
"""SQLite's primary result codes that mean "the write could not be made", and ours."""


def cannot_write(exc: BaseException) -> StoreError | None:
    """The `StoreError` a failed write means (``store_busy``, ``store_full``,
    ``store_read_only``), or None when `exc` is not a store that cannot be written."""
    if not isinstance(exc, sqlite3.Error):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return None
    ours = _CANNOT_WRITE.get(code & 0xFF)
    return StoreError(ours, f"{MEANINGS[ours]} ({exc})") if ours is not None else None


@asynccontextmanager
async def write_tx(conn: aiosqlite.Connection) -> AsyncIterator[aiosqlite.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` if the body raises (the exception
    propagates). Not re-entrant: a connection already in a transaction is a bug.

    Raises:
        StoreError: nothing was written, because ``store_busy``: the write lock could not be
            had within the busy timeout (10 s) or the commit found the database locked;
            ``store_full``: the disk is full; ``store_read_only``: the file or its disk cannot
            be written (`cannot_write`).
    """
    if conn.in_transaction:
        raise StoreError(Code.INTERNAL_ERROR, "write_tx is not re-entrant: a transaction is already open")
    try:
        await conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise cannot_write(exc) or exc from exc
    try:
        yield conn
        await conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                await conn.execute("ROLLBACK")
        translated = cannot_write(exc)
        if translated is not None:
            raise translated from exc
        raise


async def db_now(conn: aiosqlite.Connection, *, plus_seconds: int = 0) -> str:
    """SQLite's clock, UTC, ``YYYY-MM-DDTHH:MM:SS.SSSZ``, optionally `plus_seconds` ahead
    (negative goes back). Use it for every time that decides something."""
    async with conn.execute(
        "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)", (f"{int(plus_seconds):+d} seconds",)
    ) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return str(row[0])


DB_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
"""The database clock's text form (``%f`` parses its milliseconds)."""


def parse_db_text(text: str) -> datetime:
    """A database-clock text (``YYYY-MM-DDTHH:MM:SS.SSSZ``) as an aware UTC datetime.

    Raises:
        ValueError: not in that form.
    """
    return datetime.strptime(text, DB_TIME_FORMAT).replace(tzinfo=UTC)


def db_text(moment: datetime) -> str:
    """`moment` (aware) in the database clock's text form, UTC, to the millisecond (rounded down)."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


# --- migrations ---------------------------------------------------------------------------


def _statements(sql: str) -> list[str]:
    """Split a script into complete statements (triggers' inner ``;`` included)."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


async def schema_version(conn: aiosqlite.Connection) -> int:
    """The store's ``PRAGMA user_version`` (0 for a new file)."""
    async with conn.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def migrate(conn: aiosqlite.Connection) -> int:
    """Bring the schema up to the newest of `MIGRATIONS`; return the version reached.

    Each version runs in its own ``BEGIN IMMEDIATE`` transaction and re-reads the version
    under the lock, so a second process migrating at the same moment does no harm.
    Idempotent.

    Raises:
        StoreError: ``store_schema_too_new`` when the file's version is newer than this code's;
            ``store_busy`` as in `write_tx`.
    """
    newest = MIGRATIONS[-1][0]
    current = await schema_version(conn)
    if current > newest:
        raise StoreError(
            Code.STORE_SCHEMA_TOO_NEW,
            f"the store is at schema version {current}; this Fleetwatch knows up to {newest}",
        )
    for version, sql, after in MIGRATIONS:
        if version <= current:
            continue
        async with write_tx(conn):
            if await schema_version(conn) >= version:
                continue
            for statement in _statements(sql):
                await conn.execute(statement)
            if after is not None:
                await after(conn)
            await conn.execute(f"PRAGMA user_version = {int(version)}")
        current = version
    return current


# --- audit hash chain -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class AuditHead:
    """The last audit row: record it outside the store (a log, a ticket) to anchor the chain."""

    seq: int
    hash: str


@dataclasses.dataclass(frozen=True, slots=True)
class AuditVerification:
    """Result of `verify_audit`.

    Attributes:
        ok: every row verified (and the anchor, if given, matched).
        rows: rows read.
        first_bad_seq: the first row that does not verify (for a deleted row: the row after the
            gap; for a missing anchor row: the anchor's seq), or None.
        reason: one line for a person, or None.
    """

    ok: bool
    rows: int
    first_bad_seq: int | None = None
    reason: str | None = None

    def raise_if_broken(self) -> None:
        """Raises `StoreError` (``audit_chain_broken``) naming the first bad row unless `ok`."""
        if not self.ok:
            raise StoreError(Code.AUDIT_CHAIN_BROKEN, f"audit row {self.first_bad_seq}: {self.reason}")


def _row_hash(
    prev_hash: str, seq: int, at: str, actor: str, kind: str, proposal_id: str | None, detail_json: str
) -> str:
    fields = {
        "seq": seq,
        "at": at,
        "actor": actor,
        "kind": kind,
        "proposal_id": proposal_id,
        "detail_json": detail_json,
    }
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(fields)).hexdigest()


async def audit_head(conn: aiosqlite.Connection) -> AuditHead | None:
    """The last audit row's seq and hash, or None when the table is empty."""
    async with conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1") as cursor:
        row = await cursor.fetchone()
    return AuditHead(int(row[0]), str(row[1])) if row else None


async def _append(
    conn: aiosqlite.Connection, actor: str, kind: str, proposal_id: str | None, detail_json: str
) -> AuditHead:
    head = await audit_head(conn)
    seq, prev_hash = (head.seq + 1, head.hash) if head else (1, GENESIS_HASH)
    at = await db_now(conn)
    digest = _row_hash(prev_hash, seq, at, actor, kind, proposal_id, detail_json)
    await conn.execute(
        "INSERT INTO audit (seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (seq, at, actor, kind, proposal_id, detail_json, prev_hash, digest),
    )
    return AuditHead(seq, digest)


async def append_audit(
    conn: aiosqlite.Connection,
    *,
    actor: str,
    kind: str,
    proposal_id: str | None = None,
    detail: Mapping[str, Any],
) -> AuditHead:
    """Append one audit row and return its seq and hash.

    ``hash = sha256(prev_hash + canonical_json({seq, at, actor, kind, proposal_id,
    detail_json}))`` with ``at`` from the database clock and ``detail_json =
    canonical_json(detail)`` (so `detail` holds no floats: use integer milliseconds).

    Call it inside the caller's `write_tx` so the row commits with the change it records; on a
    connection with no open transaction it opens its own. Either way the read of the last
    hash and the insert happen under one write lock, and ``prev_hash`` is UNIQUE, so two
    processes can never fork the chain.

    Raises:
        CanonicalError: `detail` has no canonical form.
        StoreError: ``store_busy`` as in `write_tx`.
    """
    actor, kind = unicodedata.normalize("NFC", actor), unicodedata.normalize("NFC", kind)
    if proposal_id is not None:
        proposal_id = unicodedata.normalize("NFC", proposal_id)
    detail_json = canonical_json(dict(detail)).decode("utf-8")
    if conn.in_transaction:
        return await _append(conn, actor, kind, proposal_id, detail_json)
    async with write_tx(conn):
        return await _append(conn, actor, kind, proposal_id, detail_json)


async def verify_audit(conn: aiosqlite.Connection, *, anchor: AuditHead | None = None) -> AuditVerification:
    """Walk the whole chain and name the first row that does not verify.

    Detected: an edited row (its hash no longer matches its fields), a deleted row other than
    the newest ones (the next row's seq jumps and its ``prev_hash`` no longer links), an
    inserted or re-numbered row (a seq or link out of place, or a hash that does not match).

    Not detectable from the store alone: deleting the newest rows (the shortened chain is
    still valid) and rewriting a row *and every row after it* with freshly computed hashes
    (the chain has no secret). Against both, keep an external anchor: record `audit_head`
    somewhere else and pass it here as `anchor`; the row at ``anchor.seq`` must then exist
    and carry ``anchor.hash``.
    """
    prev_hash, expected_seq, rows, anchor_seen = GENESIS_HASH, 1, 0, False
    async with conn.execute(
        "SELECT seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash FROM audit ORDER BY seq"
    ) as cursor:
        async for row in cursor:
            rows += 1
            seq = row["seq"]
            problem = None
            if seq != expected_seq:
                problem = f"expected seq {expected_seq}, found {seq}: rows missing or re-numbered"
            elif row["prev_hash"] != prev_hash:
                problem = "prev_hash does not link to the previous row (row inserted or removed)"
            elif not all(
                unicodedata.is_normalized("NFC", row[k] or "")
                for k in ("actor", "kind", "proposal_id", "detail_json")
            ):
                problem = "a text field is not in NFC form (row edited)"
            elif row["hash"] != _row_hash(
                row["prev_hash"],
                seq,
                row["at"],
                row["actor"],
                row["kind"],
                row["proposal_id"],
                row["detail_json"],
            ):
                problem = "hash does not match the row's fields (row edited)"
            elif anchor is not None and seq == anchor.seq:
                anchor_seen = True
                if row["hash"] != anchor.hash:
                    problem = "hash differs from the external anchor (chain rewritten)"
            if problem is not None:
                return AuditVerification(False, rows, seq, problem)
            prev_hash, expected_seq = row["hash"], seq + 1
    if anchor is not None and not anchor_seen:
        return AuditVerification(False, rows, anchor.seq, "the anchored row is missing (newest rows deleted)")
    return AuditVerification(True, rows)
