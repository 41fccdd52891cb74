"""The approval store (DESIGN §6) that approval_web and the executor share, through aiosqlite.

- `write_tx`, `db_now` / `NOW_SQL`, `StoreError`: the SQLite helpers every Fleetwatch store
  uses (`shared.sqlite`, re-exported here): WAL, ``BEGIN IMMEDIATE`` for every read-then-write,
  the database clock that decides (expiry, caps); `open_store` opens through them and installs
  the connection's audit key.
- `migrate`: versioned schema (`MIGRATIONS`, ``PRAGMA user_version``), run by one owner at start.
- The audit table is a SHA-256 hash chain whose rows also carry a MAC under the key of the
  service that wrote them, with anchors kept outside the store (`shared.store.audit_seal`): see
  `append_audit`, `verify_audit`, `audit_head`. Rows are numbered from a counter a deletion
  cannot roll back (`audit_counter`), and a service learns of each row it appended once it
  commits (`watch_own_appends`), so its anchor holds that row whatever happens to it after.

Errors: `StoreError` with ``store_schema_too_new``, ``store_busy`` (locked past the busy
timeout; the transaction was rolled back), ``store_full`` or ``store_read_only`` (the disk is
full or cannot be written; rolled back, see `cannot_write`). A broken audit chain is not an
error here: `verify_audit` names the first bad row in its result.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import json
import sqlite3
import unicodedata
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from shared.canonical import canonical_flat_json, canonical_json
from shared.errors import Code
from shared.sqlite import (
    DB_TIME_FORMAT,
    NOW_SQL,
    StoreError,
    after_commit,
    apply_migrations,
    cannot_write,
    db_now,
    db_text,
    parse_db_text,
    schema_version,
    write_tx,
)
from shared.sqlite import open_store as open_sqlite
from shared.store.audit_seal import Anchor, Keyring, RowMac, install, writer_of
from shared.store.migrations import MIGRATIONS

__all__ = [
    "DB_TIME_FORMAT",
    "EXPORT_COLUMNS",
    "GENESIS_HASH",
    "MIGRATIONS",
    "NOW_SQL",
    "AuditHead",
    "AuditVerification",
    "StoreError",
    "append_audit",
    "audit_counter",
    "audit_head",
    "cannot_write",
    "export_own_appends",
    "db_now",
    "db_text",
    "migrate",
    "open_store",
    "parse_db_text",
    "schema_version",
    "verify_audit",
    "watch_own_appends",
    "write_tx",
]

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first audit row."""


async def open_store(path: str | Path, *, keyring: Keyring | None = None) -> aiosqlite.Connection:
    """Open the approval store at `path` (`shared.sqlite.open_store`: creating it and its folder
    if needed, WAL, autocommit: use `write_tx` for anything that reads then writes), with the
    audit functions of `keyring` installed: the audit key this connection signs its audit rows
    with (`shared.store.audit_seal`); without one it may read and verify, but `append_audit`
    fails. Call `migrate` once at start in the process that owns the schema.
    """
    conn = await open_sqlite(path)
    try:
        await install(conn, keyring or Keyring())
    except BaseException:
        await conn.close()
        raise
    return conn


async def migrate(conn: aiosqlite.Connection) -> int:
    """Bring the approval store's schema up to the newest of `MIGRATIONS` (`shared.sqlite.apply_migrations`);
    return the version reached. Idempotent.

    Raises:
        StoreError: ``store_schema_too_new`` when the file's version is newer than this code's;
            ``store_busy`` as in `write_tx`.
    """
    return await apply_migrations(conn, MIGRATIONS)


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
        ok: every row verified (and the anchors, if given, matched).
        rows: rows read.
        first_bad_seq: the first row that does not verify (for a deleted row: the first missing
            seq; for rows removed from the end: the first of them), or None.
        reason: one line for a person, or None.
        signed: (writer, rows) for each writer whose rows had their MAC checked here.
        unchecked: signed rows of a writer whose key this connection does not hold.
    """

    ok: bool
    rows: int
    first_bad_seq: int | None = None
    reason: str | None = None
    signed: tuple[tuple[str, int], ...] = ()
    unchecked: int = 0

    def signed_by(self, writer: str) -> int:
        """Rows of `writer` whose MAC verified."""
        return dict(self.signed).get(writer, 0)


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
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_flat_json(fields)).hexdigest()


async def audit_head(conn: aiosqlite.Connection) -> AuditHead | None:
    """The last audit row's seq and hash, or None when the table is empty."""
    async with conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1") as cursor:
        row = await cursor.fetchone()
    return AuditHead(int(row[0]), str(row[1])) if row else None


async def audit_counter(conn: aiosqlite.Connection) -> int:
    """The highest audit seq ever committed (SQLite's ``AUTOINCREMENT`` counter of the table,
    ``sqlite_sequence``): deleting rows never lowers it, so a row removed from the end leaves
    a number no later row takes. 0 before the first row."""
    async with conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'") as cursor:
        row = await cursor.fetchone()
    return 0 if row is None else int(row[0])


OwnAppend = Callable[[AuditHead, str], None]
"""Told of one committed row this connection appended: its seq and hash, and its ``at``."""

_OWN_APPENDS: weakref.WeakKeyDictionary[aiosqlite.Connection, OwnAppend] = weakref.WeakKeyDictionary()


def watch_own_appends(conn: aiosqlite.Connection, callback: OwnAppend) -> None:
    """Call `callback` with each audit row `append_audit` writes on `conn`, right after the
    transaction that holds it commits (never for a rolled-back one), before `append_audit`'s
    caller goes on: a service's anchor (`shared.store.audit_witness.Witness.attach`) learns its
    own rows from here, not from a later look at the head, which a row deleted meanwhile would
    no longer show. One callback per connection (a second replaces the first)."""
    _OWN_APPENDS[conn] = callback


Exported = Callable[[Mapping[str, Any]], None]
"""Told of one committed row this connection appended, the whole row as the table holds it."""

_EXPORTS: weakref.WeakKeyDictionary[aiosqlite.Connection, Exported] = weakref.WeakKeyDictionary()

EXPORT_COLUMNS = (
    "seq",
    "at",
    "actor",
    "kind",
    "proposal_id",
    "detail_json",
    "prev_hash",
    "hash",
    "writer",
    "mac",
)
"""The columns of an exported row: its content, its chain position and its MAC."""


def export_own_appends(conn: aiosqlite.Connection, callback: Exported) -> None:
    """Call `callback` with each audit row `append_audit` writes on `conn` (`EXPORT_COLUMNS`),
    right after its transaction commits, never for a rolled-back one (the continuous export,
    `shared.store.audit_export.AuditSink`). One callback per connection."""
    _EXPORTS[conn] = callback


async def _append(
    conn: aiosqlite.Connection, actor: str, kind: str, proposal_id: str | None, detail_json: str
) -> AuditHead:
    head = await audit_head(conn)
    # The number comes from the counter, not from head + 1: a newest row deleted leaves a gap
    # that the next row cannot fill, and `verify_audit` names it.
    seq = max(await audit_counter(conn), head.seq if head else 0) + 1
    prev_hash = head.hash if head else GENESIS_HASH
    at = await db_now(conn)
    digest = _row_hash(prev_hash, seq, at, actor, kind, proposal_id, detail_json)
    try:
        await conn.execute(
            "INSERT INTO audit (seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash, writer, mac)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, fleetwatch_audit_writer(?), fleetwatch_audit_mac(?, ?))",
            (seq, at, actor, kind, proposal_id, detail_json, prev_hash, digest, actor, actor, digest),
        )
    except sqlite3.OperationalError as exc:
        if "user-defined function" not in str(exc):
            raise
        raise StoreError(
            Code.INTERNAL_ERROR,
            f"an audit row of {actor!r} needs the {writer_of(actor)}'s audit key; this connection does not hold it",
        ) from exc
    appended = AuditHead(seq, digest)
    export = _EXPORTS.get(conn)
    if export is not None:
        sql = "SELECT seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash, writer, mac FROM audit WHERE seq = ?"
        async with conn.execute(sql, (seq,)) as cursor:
            row = await cursor.fetchone()
        if row is not None:
            after_commit(conn, functools.partial(export, dict(zip(EXPORT_COLUMNS, tuple(row), strict=True))))
    own = _OWN_APPENDS.get(conn)
    if own is not None:
        after_commit(conn, functools.partial(own, appended, at))
    return appended


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
    canonical_json(detail)`` (so `detail` holds no floats: use integer milliseconds). The row's
    ``writer`` and ``mac`` come from the connection's `Keyring` (`shared.store.audit_seal`): the
    writing service's name and its HMAC over ``hash``.

    Call it inside the caller's `write_tx` so the row commits with the change it records; on a
    connection with no open transaction it opens its own. Either way the read of the last
    hash and the insert happen under one write lock, and ``prev_hash`` is UNIQUE, so two
    processes can never fork the chain. ``seq`` is one more than the highest ever committed
    (`audit_counter`), so a deleted newest row leaves a gap. Once the transaction commits, the
    connection's `watch_own_appends` callback (if any) is told of the row.

    Raises:
        CanonicalError: `detail` has no canonical form.
        StoreError: ``store_busy`` as in `write_tx`; ``internal_error`` when the connection
            holds no audit key, or the key of the other writer than `actor`'s.
    """
    actor, kind = unicodedata.normalize("NFC", actor), unicodedata.normalize("NFC", kind)
    if proposal_id is not None:
        proposal_id = unicodedata.normalize("NFC", proposal_id)
    detail_json = canonical_json(dict(detail)).decode("utf-8")
    if conn.in_transaction:
        return await _append(conn, actor, kind, proposal_id, detail_json)
    async with write_tx(conn):
        return await _append(conn, actor, kind, proposal_id, detail_json)


_VERIFY_SELECT = (
    "SELECT seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash, writer,"
    " fleetwatch_audit_check(writer, actor, hash, mac) AS mac_check FROM audit"
)

VERIFY_CHUNK_ROWS = 1000
"""Rows `verify_audit` reads per query; the connection's lock is held only while one chunk is
read, never while rows are checked, so a walk over a long chain does not stall the service."""


async def verify_audit(
    conn: aiosqlite.Connection,
    *,
    anchor: AuditHead | None = None,
    anchors: Sequence[Anchor] = (),
    lock: asyncio.Lock | None = None,
    chunk_rows: int = VERIFY_CHUNK_ROWS,
) -> AuditVerification:
    """Walk the whole chain and name the first row that does not verify.

    Detected from the store and the connection's keys (`open_store`'s keyring): an edited row
    (its hash no longer matches its fields), a deleted row other than the newest ones (the
    next row's seq jumps and its ``prev_hash`` no longer links), an inserted or re-numbered row
    (a seq or link out of place, or a hash that does not match), and, for the writers whose key
    this connection holds, a row whose MAC does not match (changed, or re-hashed without the
    key), a row of one writer claiming to be the other's, and a row without a MAC after the
    first signed one (a MAC stripped; rows before MACs existed are unsigned by nature). Rows of
    a writer whose key is not held are counted as ``unchecked``: that writer checks them.

    Also from the store: a newest row deleted while the table's counter (`audit_counter`) still
    says it was written, and an execution that follows no approval: every ``execution_start``
    row must come after an ``approval`` row with the same approval ID and card hash, and every
    ``outcome`` row after the ``execution_start`` of its execution (an approval_web that sends
    Execute with no person leaves exactly this; SECURITY.md, "What cannot be closed").

    Not detectable from the store alone: deleting the newest rows and rolling the counter back,
    and rewriting the rows after the last one the other writer signed. Against both, the anchors
    kept outside the store
    (`anchors`, `shared.store.audit_seal.Anchor`; `anchor`, an `AuditHead` recorded elsewhere, is the
    same check): the row at each anchor's seq must exist and carry its hash, and every row from
    the anchor's ``signed_from`` on must carry a MAC. A missing anchored row names the first
    missing seq (the newest rows were removed).

    The walk reads `chunk_rows` rows per query (in ``seq`` order, each query starting after the
    last row read) and, when `lock` is given (the service's lock on `conn`), holds it only while
    a chunk is read: the service keeps serving between chunks, and rows appended meanwhile are
    walked too. Cost: about 45 µs per row on this project's 2-core reference machine
    (``python -m bench.audit_walk``: 120,000 rows in 5.3 s).
    """
    pins = [(a.seq, a.hash, a.signed_from) for a in anchors]
    if anchor is not None:
        pins.append((anchor.seq, anchor.hash, 0))
    signed_from = min((s for _, _, s in pins if s > 0), default=None)
    pinned: dict[int, str] = {}
    for seq, digest, _ in pins:
        pinned.setdefault(seq, digest)
    prev_hash, expected_seq, rows = GENESIS_HASH, 1, 0
    checked: dict[str, int] = {}
    unchecked = 0
    signed_seen = False

    def broken(seq: int, problem: str) -> AuditVerification:
        return AuditVerification(False, rows, seq, problem, tuple(sorted(checked.items())), unchecked)

    counter = 0  # read with the first chunk: every row up to it must be walked
    links = _Links()

    async def chunk(after: int | None) -> list[sqlite3.Row]:
        # The first chunk has no lower bound: a row slipped in below seq 1 must be seen.
        sql, params = (
            (f"{_VERIFY_SELECT} ORDER BY seq LIMIT ?", (chunk_rows,))
            if after is None
            else (f"{_VERIFY_SELECT} WHERE seq > ? ORDER BY seq LIMIT ?", (after, chunk_rows))
        )
        async with lock if lock is not None else contextlib.nullcontext():
            if after is None:
                nonlocal counter
                counter = await audit_counter(conn)
            async with conn.execute(sql, params) as cursor:
                return list(await cursor.fetchall())

    last_read: int | None = None
    while batch := await chunk(last_read):
        last_read = batch[-1]["seq"]
        for row in batch:
            rows += 1
            seq = row["seq"]
            if seq < expected_seq:
                return broken(seq, f"row {seq} is out of order (inserted or re-numbered)")
            if seq != expected_seq:
                gap = (
                    f"row {expected_seq}" if seq == expected_seq + 1 else f"rows {expected_seq} to {seq - 1}"
                )
                return broken(expected_seq, f"{gap} missing (removed or re-numbered); the next row is {seq}")
            if row["prev_hash"] != prev_hash:
                return broken(seq, "prev_hash does not link to the previous row (row inserted or removed)")
            if not all(
                unicodedata.is_normalized("NFC", row[k] or "")
                for k in ("actor", "kind", "proposal_id", "detail_json")
            ):
                return broken(seq, "a text field is not in NFC form (row edited)")
            if row["hash"] != _row_hash(
                row["prev_hash"],
                seq,
                row["at"],
                row["actor"],
                row["kind"],
                row["proposal_id"],
                row["detail_json"],
            ):
                return broken(seq, "hash does not match the row's fields (row edited)")
            mac = RowMac(row["mac_check"])
            if mac is RowMac.UNSIGNED:
                if signed_seen or (signed_from is not None and seq >= signed_from):
                    return broken(
                        seq, "the row carries no MAC where every row is signed (MAC stripped, row forged)"
                    )
            elif mac is RowMac.WRONG_WRITER:
                return broken(seq, f"the row's writer {row['writer']!r} is not its actor's (row forged)")
            elif mac is RowMac.BAD:
                return broken(
                    seq, f"the MAC does not match under the {row['writer']}'s key (row changed or forged)"
                )
            else:
                signed_seen = True
                if mac is RowMac.OK:
                    checked[row["writer"]] = checked.get(row["writer"], 0) + 1
                else:
                    unchecked += 1
            if seq in pinned and row["hash"] != pinned[seq]:
                return broken(seq, "hash differs from the anchor kept outside the store (chain rewritten)")
            unlinked = links.problem(row["kind"], row["detail_json"])
            if unlinked is not None:
                return broken(seq, unlinked)
            prev_hash, expected_seq = row["hash"], seq + 1
        if len(batch) < chunk_rows:
            break
    last = expected_seq - 1
    beyond = sorted(seq for seq in pinned if seq > last)
    if beyond:
        missing = f"row {last + 1}" if beyond[-1] == last + 1 else f"rows {last + 1} to {beyond[-1]}"
        return broken(
            last + 1, f"{missing} missing: the anchor kept outside the store saw them (newest rows deleted)"
        )
    if counter > last:
        missing = f"row {last + 1}" if counter == last + 1 else f"rows {last + 1} to {counter}"
        return broken(
            last + 1, f"{missing} missing: the store's counter says they were written (newest rows deleted)"
        )
    return AuditVerification(True, rows, signed=tuple(sorted(checked.items())), unchecked=unchecked)


class _Links:
    """What `verify_audit` checks across rows: each execution follows its approval (same
    approval ID and card hash), each outcome its execution's start."""

    def __init__(self) -> None:
        self.approvals: dict[str, str | None] = {}
        self.executions: set[str] = set()

    def problem(self, kind: str, detail_json: str) -> str | None:
        """Why a row of `kind` does not follow what it must (one line), or None."""
        if kind not in ("approval", "execution_start", "outcome"):
            return None
        detail = json.loads(detail_json)
        detail = detail if isinstance(detail, dict) else {}
        if kind == "approval":
            self.approvals[str(detail.get("approval_id"))] = detail.get("card_hash")
            return None
        execution = str(detail.get("execution_id"))
        if kind == "outcome":
            if execution in self.executions:
                return None
            return f"the outcome of execution {execution} follows no execution_start row of it"
        self.executions.add(execution)
        approval = str(detail.get("approval_id"))
        if approval not in self.approvals:
            return (
                f"execution {execution} follows no approval row of approval {approval}"
                " (Execute sent with no Approve recorded, or the approval row removed)"
            )
        card = detail.get("card_hash")
        if card is not None and card != self.approvals[approval]:
            return f"execution {execution} ran a card hash other than the one approval {approval} recorded"
        return None
