"""The audit outside the store: exported rows verify against the store (chain and MACs), the
continuous sink writes each committed row once and counts what it could not send."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import aiosqlite

from shared.canonical import canonical_flat_json
from shared.store.approvals import deny
from shared.store.audit_export import AuditSink, export_rows, sink_counts
from shared.store.audit_seal import RowMac
from shared.store.db import GENESIS_HASH, append_audit, write_tx
from tests.shared.store.approval_helpers import KEYRING, add_proposal, approved, conn

__all__ = ["conn"]  # the fixture

CHAINED = ("seq", "at", "actor", "kind", "proposal_id", "detail_json")


def recomputed(prev_hash: str, row: dict[str, object]) -> str:
    """A row's hash as anyone holding the export recomputes it (DESIGN: sha256 of prev_hash
    and the canonical row)."""
    return hashlib.sha256(prev_hash.encode() + canonical_flat_json({k: row[k] for k in CHAINED})).hexdigest()


async def test_the_exported_rows_verify_against_the_store_chain_and_macs(conn: aiosqlite.Connection) -> None:
    await approved(conn)
    await deny(conn, await add_proposal(conn), actor="page s")
    rows = [row async for row in export_rows(conn)]
    assert len(rows) >= 4
    prev = GENESIS_HASH
    for row in rows:
        assert row["prev_hash"] == prev and recomputed(prev, row) == row["hash"]
        assert KEYRING.check(row["writer"], row["actor"], row["hash"], row["mac"]) is RowMac.OK
        prev = row["hash"]
    async with conn.execute("SELECT seq, hash, mac FROM audit ORDER BY seq") as cursor:
        stored = [tuple(r) for r in await cursor.fetchall()]
    assert stored == [(r["seq"], r["hash"], r["mac"]) for r in rows]


async def test_since_and_after_seq_page_through_the_rows(conn: aiosqlite.Connection) -> None:
    await approved(conn)
    every = [row async for row in export_rows(conn)]
    later = [row async for row in export_rows(conn, after_seq=every[0]["seq"])]
    assert later == every[1:]
    assert [row async for row in export_rows(conn, since="2999-01-01T00:00:00.000Z")] == []


async def test_the_sink_writes_each_committed_row_once_and_never_a_rolled_back_one(
    conn: aiosqlite.Connection, tmp_path: Path
) -> None:
    target = tmp_path / "audit.jsonl"
    sink = AuditSink(str(target), db=tmp_path / "fw.db", writer="approval_web")
    sink.attach(conn)
    await approved(conn)
    try:
        async with write_tx(conn):
            await append_audit(conn, actor="approval_web", kind="expiry", detail={"reason": "test"})
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    stored = [row async for row in export_rows(conn)]
    assert lines == stored
    counts = sink_counts(tmp_path / "fw.db", "approval_web")
    assert counts is not None and (counts.sent, counts.dropped) == (len(stored), 0)


async def test_a_row_the_sink_cannot_write_is_dropped_and_counted_and_the_write_goes_on(
    conn: aiosqlite.Connection, tmp_path: Path
) -> None:
    sink = AuditSink(
        str(tmp_path / "no-such-folder" / "audit.jsonl"), db=tmp_path / "fw.db", writer="approval_web"
    )
    sink.attach(conn)
    proposal_id, _ = await approved(conn)
    assert proposal_id
    counts = sink_counts(tmp_path / "fw.db", "approval_web")
    assert counts is not None and counts.sent == 0 and counts.dropped >= 2
