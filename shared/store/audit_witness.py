"""A service's watch over the audit log's head: the anchor it keeps outside the store.

Each writing service (approval_web, the executor) holds a `Witness`: the newest audit row it has
seen, kept in ``<FLEETWATCH_KEYS_DIR>/<writer>.anchor`` (``0600`` of its user, beside its key,
outside the store). Its own rows move it as part of the append: each connection the service
writes through is `Witness.attach`-ed, so the row is known (seq and hash, as written) the
moment its transaction commits, and the service calls `Witness.settle` (the anchor file
written and synced) before it answers the request that wrote it. A row deleted a millisecond
after its commit is still the row the anchor holds. Rows of the other service move it soon
after the log grows (`Witness.nudge`, and at least every `WITNESS_SECONDS`), from a look at the
head; it never moves over a head that no longer holds the row it saw last: a log cut short or
rewritten stays cut short against the anchor, and `shared.store.db.verify_audit` names the
first missing or changed row.

What an anchor cannot see: a row removed between its commit and the anchor's write (the same
request, before its answer) by a store writer who also rolls back the table's counter; rows
the other service wrote are held by that service's own anchor.

Errors: `shared.store.audit_seal.AuditKeyError` (an unsafe or malformed anchor file),
`shared.store.db.StoreError` (``store_busy``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Final

import aiosqlite

from shared.errors import FleetwatchError
from shared.store.audit_seal import Anchor, anchor_path, read_anchor, write_anchor
from shared.store.db import AuditHead, audit_head, db_now, watch_own_appends

log = logging.getLogger(__name__)

WITNESS_SECONDS: Final = 5.0
"""Longest time between two looks at the head while a service runs (seconds)."""


async def _hash_of(conn: aiosqlite.Connection, seq: int) -> str | None:
    async with conn.execute("SELECT hash FROM audit WHERE seq = ?", (seq,)) as cursor:
        row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def _first_signed(conn: aiosqlite.Connection) -> int | None:
    async with conn.execute("SELECT min(seq) FROM audit WHERE mac IS NOT NULL") as cursor:
        row = await cursor.fetchone()
    return None if row is None or row[0] is None else int(row[0])


class Witness:
    """The anchor of one writer (`writer`) in `folder`, read at construction.

    Args:
        folder: ``FLEETWATCH_KEYS_DIR``.
        writer: ``executor`` or ``approval_web``.

    Raises:
        AuditKeyError: the anchor file is unsafe or malformed.
    """

    def __init__(self, folder: Path, writer: str) -> None:
        self.path = anchor_path(folder, writer)
        self.writer = writer
        self.anchor: Anchor | None = read_anchor(self.path)
        self.problem: str | None = None
        """Set when the head no longer holds the row last seen (the log was cut or rewritten)."""
        self._nudged = asyncio.Event()
        self._writing = asyncio.Lock()
        self._own: Anchor | None = None
        """The newest row this service appended and committed (`attach`), maybe not yet kept."""

    @property
    def anchors(self) -> tuple[Anchor, ...]:
        """The anchor as `shared.store.db.verify_audit` takes it (empty before the first look)."""
        return () if self.anchor is None else (self.anchor,)

    async def observe(self, conn: aiosqlite.Connection) -> Anchor | None:
        """Look at the head now and move the anchor forward when the log grew and still holds
        the row last seen; the anchor after the look. Call it with no transaction open."""
        fresh = await self._next(conn)
        if fresh is not None:
            await self._move(fresh)
        return self.anchor

    async def _move(self, fresh: Anchor) -> None:
        """Write `fresh` to the anchor file (in a thread: the write is synced to disk) and keep
        it, unless an anchor at least as new was kept meanwhile: the anchor never moves back."""
        async with self._writing:
            if self.anchor is not None and fresh.seq <= self.anchor.seq:
                return
            await asyncio.to_thread(write_anchor, self.path, fresh)
            self.anchor = fresh

    async def _next(self, conn: aiosqlite.Connection) -> Anchor | None:
        """The anchor to move to after a look at the head (reads only), or None to keep it."""
        head = await audit_head(conn)
        current = self.anchor
        if head is None:
            if current is not None:
                self._broken(f"the audit log is empty, but row {current.seq} was seen")
            return None
        if current is not None:
            if head.seq < current.seq:
                self._broken(f"the newest row is {head.seq}, but row {current.seq} was seen")
                return None
            if await _hash_of(conn, current.seq) != current.hash:
                self._broken(f"row {current.seq} is not the row seen before")
                return None
            if head.seq == current.seq:
                return None
        signed_from = current.signed_from if current is not None and current.signed_from else 0
        if not signed_from:
            signed_from = await _first_signed(conn) or head.seq + 1
        return Anchor(seq=head.seq, hash=head.hash, seen_at=await db_now(conn), signed_from=signed_from)

    def attach(self, conn: aiosqlite.Connection) -> None:
        """Learn every audit row appended on `conn` once its transaction commits
        (`shared.store.db.watch_own_appends`); `settle` then keeps it. Call once per connection
        the service writes through, right after opening it."""
        watch_own_appends(conn, self._appended)

    def _appended(self, head: AuditHead, at: str) -> None:
        if self._own is not None and head.seq <= self._own.seq:
            return
        kept = self._own or self.anchor
        signed_from = kept.signed_from if kept is not None and kept.signed_from else head.seq
        self._own = Anchor(seq=head.seq, hash=head.hash, seen_at=at, signed_from=signed_from)
        self._nudged.set()

    async def settle(self) -> None:
        """Keep the newest row this service appended (`attach`) in the anchor file, written and
        synced off the event loop, unless an anchor at least as new is kept. Await it before
        answering a request that may have written a row: once answered, the row cannot be
        removed unseen. Never raises: the rows are already committed, so a file that cannot be
        written (an unsafe folder, a full disk) is logged and tried again at the next look,
        and the request is still answered."""
        own = self._own
        if own is None or (self.anchor is not None and own.seq <= self.anchor.seq):
            return
        try:
            await self._move(own)
        except (FleetwatchError, OSError) as exc:
            log.error("audit anchor of %s not written (row %d): %s", self.writer, own.seq, exc)

    def _broken(self, problem: str) -> None:
        if self.problem != problem:
            log.error(
                "audit anchor of %s: %s; the anchor is kept (audit verify names the row)",
                self.writer,
                problem,
            )
        self.problem = problem

    def nudge(self) -> None:
        """Ask `watch` to look soon (the log just grew)."""
        self._nudged.set()

    async def watch(self, conn: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        """Look after each `nudge` and at least every `WITNESS_SECONDS`, using `conn` under
        `lock` (the service's own), until cancelled; the anchor file is written (and synced)
        after `lock` is let go, off the event loop, so a request never waits on that disk write.
        A failed look is logged and tried again."""
        while True:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns a nudge that lands in
            # the same turn as a cancellation and loses the cancellation (the service never stops).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WITNESS_SECONDS):
                    await self._nudged.wait()
            self._nudged.clear()
            try:
                await self.settle()  # rows of its own written outside a request
                async with lock:
                    fresh = await self._next(conn)
                if fresh is not None:  # the file is written outside the store's lock
                    await self._move(fresh)
            except FleetwatchError as exc:
                log.warning("could not look at the audit head (%s): %s", exc.code, exc.message)
