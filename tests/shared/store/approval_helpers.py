"""Helpers for tests of the approval state: a store, a stored proposal, row and audit dumps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from shared.binding import TargetState, fingerprint_hash, make_bound_record, record_bytes, seal
from shared.store.approvals import ConsumeResult, approve, get_proposal, insert_proposal, new_proposal_id
from shared.store.db import db_now, migrate, open_store
from tests.audit_keys import fresh_keyring

MASTER = "19012341234"
TABLE_DUMPS = {
    "proposals": "SELECT * FROM proposals ORDER BY id",
    "proposal_targets": "SELECT * FROM proposal_targets ORDER BY proposal_id",
    "approvals": "SELECT * FROM approvals ORDER BY id",
    "first_approvals": "SELECT * FROM first_approvals ORDER BY id",
    "executions": "SELECT * FROM executions ORDER BY id",
    "sessions": "SELECT * FROM sessions ORDER BY id",
    "kv": "SELECT * FROM kv ORDER BY key",
}
KEY = b"k" * 32
KEYRING = fresh_keyring()
"""The audit keys of both writers: these tests play approval_web and the executor on one store."""


@pytest.fixture
async def conn(tmp_path: Path) -> Any:
    connection = await open_store(tmp_path / "fw.db", keyring=KEYRING)
    await migrate(connection)
    yield connection
    await connection.close()


async def add_proposal(
    conn: aiosqlite.Connection, *, ttl_seconds: int = 600, turn_id: str | None = None, target: str = MASTER
) -> str:
    proposal_id = new_proposal_id()
    fingerprint = {target: TargetState(online=True, recording=False, next_event_start=None)}
    record = make_bound_record(
        proposal_id=proposal_id,
        tool="batch_reboot",
        arguments={"device_ids": [target]},
        targets=[target],
        fingerprint=fingerprint,
        schema_version=1,
        reason="it is stuck",
    )
    await insert_proposal(
        conn,
        record=record,
        record_bytes=record_bytes(record),
        seal=seal(record, KEY),
        fingerprint_hash=fingerprint_hash(fingerprint),
        proposed_by="assistant",
        turn_id=turn_id,
        ttl_seconds=ttl_seconds,
    )
    return proposal_id


async def snapshot(conn: aiosqlite.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the approval tables (not the audit)."""
    out = {}
    for table, sql in TABLE_DUMPS.items():
        async with conn.execute(sql) as cursor:
            out[table] = [tuple(row) for row in await cursor.fetchall()]
    return out


async def status_of(conn: aiosqlite.Connection, proposal_id: str) -> str:
    row = await get_proposal(conn, proposal_id)
    assert row is not None
    return row.status


async def audit_rows(conn: aiosqlite.Connection) -> list[tuple[str, str | None, str]]:
    async with conn.execute("SELECT kind, proposal_id, detail_json FROM audit ORDER BY seq") as cursor:
        return [(r[0], r[1], r[2]) for r in await cursor.fetchall()]


CARD_HASH, FACTS_HASH = "c", "f"
"""What `approved` binds its approval to (the claim must carry the same)."""


async def approve_as(
    conn: aiosqlite.Connection,
    proposal_id: str,
    uid: int | None,
    *,
    approvers: int = 1,
    card_hash: str = CARD_HASH,
    facts_hash: str = FACTS_HASH,
    session: str | None = None,
) -> ConsumeResult:
    """Approve pressed on the card of `proposal_id` just shown, from a page session (`session`,
    default ``s-<uid>``) of `uid`, as the page does for a tool whose rule asks `approvers`."""
    return await approve(
        conn,
        proposal_id=proposal_id,
        session_id=session or f"s-{uid}",
        card_hash=card_hash,
        facts_hash=facts_hash,
        facts=None,
        shown_at=await db_now(conn),
        ttl_seconds=300,
        uid=uid,
        approvers=approvers,
    )


async def approved(conn: aiosqlite.Connection, *, target: str = MASTER) -> tuple[str, str]:
    """A stored proposal with a consumed approval (card hash `CARD_HASH`, facts hash
    `FACTS_HASH`): (proposal ID, approval ID)."""
    proposal_id = await add_proposal(conn, target=target)
    result = await approve(
        conn,
        proposal_id=proposal_id,
        session_id="s",
        card_hash=CARD_HASH,
        facts_hash=FACTS_HASH,
        facts=None,
        shown_at=await db_now(conn),
        ttl_seconds=300,
    )
    assert result.ok
    return proposal_id, result.approval_id
