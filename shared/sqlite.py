"""SQLite through aiosqlite, the way every Fleetwatch store uses it: the approval store
(`shared.store`, approval_web's and the executor's) and the watch store (the assistant's own,
`services.assistant.watch.store`). Nothing here knows either schema.

- `open_store`: WAL, ``busy_timeout`` 10 s, foreign keys on, ``isolation_level=None`` (we
  issue every ``BEGIN`` ourselves), rows as `sqlite3.Row`.
- `write_tx`: every read-then-write runs in ``BEGIN IMMEDIATE`` (a deferred transaction that
  reads then writes deadlocks across processes). A single statement needs no transaction.
  `after_commit` runs a callback once the open `write_tx` has committed (never after a rollback).
- `db_now` / `NOW_SQL`: the database clock, UTC, ``YYYY-MM-DDTHH:MM:SS.SSSZ`` (fixed width,
  so text comparison is time order).
- `apply_migrations`: a versioned schema (`Migration`, ``PRAGMA user_version``), run by the
  store's one owner at start; with ``application_id`` a file made for another store is refused.

Errors: `StoreError` with ``store_schema_too_new`` (a newer schema, or another store's file),
``store_busy`` (locked past the busy timeout; the transaction was rolled back), ``store_full``
or ``store_read_only`` (the disk is full or cannot be written; rolled back, see `cannot_write`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import aiosqlite

from shared.errors import MEANINGS, Code, FleetwatchError

BUSY_TIMEOUT_MS = 10_000
NOW_SQL = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
"""SQL expression for the database clock, UTC with milliseconds; embed it in statements that
decide on time, e.g. ``UPDATE approvals SET used=1 WHERE id=? AND used=0 AND expires_at > {NOW_SQL}``."""


class StoreError(FleetwatchError):
    """The store refused: ``store_schema_too_new``, ``store_busy``, ``store_full`` or
    ``store_read_only``."""


class Migration(NamedTuple):
    """One schema version: its SQL script and an optional step run after it, in the same
    transaction."""

    version: int
    sql: str
    after: Callable[[aiosqlite.Connection], Awaitable[None]] | None = None


async def open_store(path: str | Path) -> aiosqlite.Connection:
    """Open (creating it ``0600`` and its folder ``0700`` if needed) the SQLite file at `path`;
    its -wal and -shm take the file's mode (an existing file keeps its own: a server's store is
    ``0660`` for its group).

    The connection is in autocommit mode: use `write_tx` for anything that reads then writes.
    Call the store's migration once at start in the process that owns its schema.

    Raises:
        StoreError: ``store_read_only`` / ``store_full`` when the file cannot be set up for
            writing (WAL needs to write), ``store_busy`` when it stays locked (`cannot_write`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):  # this user's only, whatever the umask (else SQLite says why)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        conn.row_factory = sqlite3.Row
        await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await conn.execute("PRAGMA journal_mode = WAL")
        await conn.execute("PRAGMA foreign_keys = ON")
    except BaseException as exc:
        await conn.close()
        if not isinstance(exc, Exception):
            raise  # a cancellation or an interrupt stays what it is, whatever the folder
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
    _COMMITTED.pop(conn, None)  # left by a transaction not opened here: never run
    try:
        await conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise cannot_write(exc) or exc from exc
    try:
        yield conn
        await conn.execute("COMMIT")
    except BaseException as exc:
        _COMMITTED.pop(conn, None)
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                await conn.execute("ROLLBACK")
        translated = cannot_write(exc)
        if translated is not None:
            raise translated from exc
        raise
    for callback in _COMMITTED.pop(conn, ()):
        callback()


_COMMITTED: weakref.WeakKeyDictionary[aiosqlite.Connection, list[Callable[[], None]]] = (
    weakref.WeakKeyDictionary()
)
"""The callbacks of each connection's open `write_tx`, run after its ``COMMIT``."""


def after_commit(conn: aiosqlite.Connection, callback: Callable[[], None]) -> None:
    """Run `callback` (plain, quick, no store access) once the `write_tx` open on `conn` has
    committed, in the order given; never when it rolls back. `conn` must be inside `write_tx`.

    Raises:
        StoreError: ``internal_error`` when `conn` has no transaction open.
    """
    if not conn.in_transaction:
        raise StoreError(Code.INTERNAL_ERROR, "after_commit needs an open write_tx")
    _COMMITTED.setdefault(conn, []).append(callback)


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


async def _pragma(conn: aiosqlite.Connection, name: str) -> int:
    async with conn.execute(f"PRAGMA {name}") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def schema_version(conn: aiosqlite.Connection) -> int:
    """The store's ``PRAGMA user_version`` (0 for a new file)."""
    return await _pragma(conn, "user_version")


async def apply_migrations(
    conn: aiosqlite.Connection,
    migrations: Sequence[Migration],
    *,
    application_id: int | None = None,
    name: str = "the store",
) -> int:
    """Bring the schema up to the newest of `migrations`; return the version reached.

    Each version runs in its own ``BEGIN IMMEDIATE`` transaction and re-reads the version
    under the lock, so a second process migrating at the same moment does no harm.
    Idempotent. With `application_id`, a new file is stamped with it (``PRAGMA
    application_id``) and a file carrying another one, or an older schema without one, is
    refused: it is some other store, and must not get this schema. Without it, a file stamped
    with any application ID is refused for the same reason.

    Raises:
        StoreError: ``store_schema_too_new`` when the file's version is newer than this code's
            or the file belongs to another store (`name` says which store was expected);
            ``store_busy`` as in `write_tx`.
    """
    found = await _pragma(conn, "application_id")
    if application_id is None and found != 0:
        raise StoreError(
            Code.STORE_SCHEMA_TOO_NEW, f"this file is another store (application_id {found}), not {name}"
        )
    if application_id is not None:
        if found not in (0, application_id):
            raise StoreError(
                Code.STORE_SCHEMA_TOO_NEW,
                f"this file is not {name} (application_id {found}, expected {application_id})",
            )
        if found == 0 and await schema_version(conn) != 0:
            raise StoreError(Code.STORE_SCHEMA_TOO_NEW, f"this file already holds another schema, not {name}")
    newest = migrations[-1][0]
    current = await schema_version(conn)
    if current > newest:
        raise StoreError(
            Code.STORE_SCHEMA_TOO_NEW,
            f"{name} is at schema version {current}; this Fleetwatch knows up to {newest}",
        )
    for version, sql, after in migrations:
        if version <= current:
            continue
        async with write_tx(conn):
            if await schema_version(conn) >= version:
                continue
            for statement in _statements(sql):
                await conn.execute(statement)
            if after is not None:
                await after(conn)
            if application_id is not None:
                await conn.execute(f"PRAGMA application_id = {int(application_id)}")
            await conn.execute(f"PRAGMA user_version = {int(version)}")
        current = version
    return current
