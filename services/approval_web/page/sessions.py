"""Browser sessions of the page in the store's ``sessions`` table.

A session starts when a person enters the page secret; its ID is `guards.session_id` of the
cookie's token (never the token, never the secret). It lasts `MAX_AGE_SECONDS` from its start
on the database clock, or until the page restarts (the key changes, so old IDs never match).
``approvals_count`` is raised by `shared.store.approvals.approve` in the same transaction
as the approval, so the page can show how many changes this session approved.
"""

from __future__ import annotations

import dataclasses

import aiosqlite

from shared.store.db import append_audit, write_tx

MAX_AGE_SECONDS = 12 * 3600
"""A session ends 12 hours after the secret was entered, browser open or not."""


@dataclasses.dataclass(frozen=True, slots=True)
class Session:
    """A live session: its store ID and how many approvals it has made."""

    id: str
    approvals_count: int


async def start_session(conn: aiosqlite.Connection, session_id: str, *, client: str, uid: int = -1) -> None:
    """Record a new session and a ``session_start`` audit row (with the client address and the
    uid the kernel names for the browser's connection, -1 when unknown), in one transaction.
    Raises `StoreError` (``store_busy``)."""
    async with write_tx(conn):
        await conn.execute(
            "INSERT INTO sessions (id) VALUES (?)",
            (session_id,),
        )
        await append_audit(
            conn,
            actor="approval_web",
            kind="session_start",
            detail={"session_id": session_id, "client": client, "uid": uid},
        )


async def find_session(conn: aiosqlite.Connection, session_id: str) -> Session | None:
    """The session with that ID if it started less than `MAX_AGE_SECONDS` ago; else None.
    Reads only."""
    sql = (
        "SELECT id, approvals_count FROM sessions WHERE id = ?"
        " AND created_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)"
    )
    async with conn.execute(sql, (session_id, f"-{MAX_AGE_SECONDS} seconds")) as cursor:
        row = await cursor.fetchone()
    return Session(id=row["id"], approvals_count=int(row["approvals_count"])) if row else None
