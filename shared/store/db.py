"""The approval store (DESIGN §6) that approval_web and the executor share, through aiosqlite.

- `open_store`, `write_tx`, `db_now` / `NOW_SQL`, `StoreError`: the SQLite helpers every
  Fleetwatch store uses (`shared.sqlite`, re-exported here): WAL, ``BEGIN IMMEDIATE`` for every
  read-then-write, the database clock that decides (expiry, caps).
- `migrate`: versioned schema (`MIGRATIONS`, ``PRAGMA user_version``), run by one owner at start.
- The audit table is a SHA-256 hash chain: see `append_audit`, `verify_audit`, `audit_head`.

Errors: `StoreError` with ``store_schema_too_new``, ``store_busy`` (locked past the busy
timeout; the transaction was rolled back) or ``audit_chain_broken``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import unicodedata
from collections.abc import Mapping
from typing import Any

import aiosqlite

from shared.canonical import canonical_json
from shared.errors import Code
from shared.sqlite import (
    DB_TIME_FORMAT,
    NOW_SQL,
    StoreError,
    apply_migrations,
    db_now,
    db_text,
    open_store,
    parse_db_text,
    schema_version,
    write_tx,
)
from shared.store.migrations import MIGRATIONS

__all__ = [
    "DB_TIME_FORMAT",
    "GENESIS_HASH",
    "MIGRATIONS",
    "NOW_SQL",
    "AuditHead",
    "AuditVerification",
    "StoreError",
    "append_audit",
    "audit_head",
    "db_now",
    "db_text",
    "migrate",
    "open_store",
    "parse_db_text",
    "schema_version",
    "verify_audit",
    "write_tx",
]

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first audit row."""


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
