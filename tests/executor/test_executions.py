"""Executions: the executor claims a consumed approval once, records one outcome, keeps the
verification apart, and turns a crash's `running` into `unknown`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiosqlite
import pytest

from services.executor.executions import (
    claim_approval,
    finish_execution,
    mark_executed,
    record_verification,
    recover_running,
)
from shared.errors import Code
from shared.store.approvals import ClaimResult, execution_for_approval, get_execution, proposal_state
from shared.store.db import StoreError, db_now, migrate, open_store, write_tx
from tests.shared.store.approval_helpers import (
    CARD_HASH,
    FACTS_HASH,
    KEYRING,
    add_proposal,
    approved,
    audit_rows,
    conn,
    snapshot,
    status_of,
)

__all__ = ["conn"]  # the fixture


async def claim(conn: aiosqlite.Connection, proposal_id: str, approval_id: str) -> ClaimResult:
    """The claim as Execute makes it: with the proposal, card hash and facts hash approved."""
    return await claim_approval(
        conn, approval_id, proposal_id=proposal_id, card_hash=CARD_HASH, facts_hash=FACTS_HASH
    )


async def test_a_claim_creates_one_running_execution_and_a_second_claim_is_refused(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, approval_id = await approved(conn)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.ok and taken.execution_id is not None and taken.proposal_id == proposal_id
    execution = await get_execution(conn, taken.execution_id)
    assert execution is not None and execution.outcome == "running"
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    again = await claim(conn, proposal_id, approval_id)
    assert not again.ok and again.code == Code.APPROVAL_ALREADY_USED
    assert await snapshot(conn) == before
    assert len(await audit_rows(conn)) == len(audit_before) + 1


async def test_concurrent_claims_from_separate_connections_let_exactly_one_win(tmp_path: Path) -> None:
    path = tmp_path / "fw.db"
    setup = await open_store(path, keyring=KEYRING)
    await migrate(setup)
    proposal_id, approval_id = await approved(setup)
    connections = [await open_store(path, keyring=KEYRING) for _ in range(10)]
    try:
        results = await asyncio.gather(*(claim(c, proposal_id, approval_id) for c in connections))
    finally:
        for c in connections:
            await c.close()
    assert sum(r.ok for r in results) == 1
    async with setup.execute("SELECT COUNT(*) FROM executions") as cursor:
        assert [tuple(r) for r in await cursor.fetchall()] == [(1,)]
    await setup.close()


@pytest.mark.parametrize(
    ("setup_sql", "code"),
    [
        ("", Code.APPROVAL_NOT_CONSUMED),
        ("UPDATE approvals SET expires_at = '2000-01-01T00:00:00.000Z'", Code.APPROVAL_EXPIRED),
    ],
)
async def test_an_approval_nobody_consumed_cannot_be_claimed(
    conn: aiosqlite.Connection, setup_sql: str, code: Code
) -> None:
    proposal_id = await add_proposal(conn)
    await conn.execute(  # an unused approval can only have been written into the store by hand
        "INSERT INTO approvals (id, proposal_id, session_id, card_hash, facts_hash, expires_at)"
        " VALUES ('a-000000000001', ?, 's', ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+300 seconds'))",
        (proposal_id, CARD_HASH, FACTS_HASH),
    )
    if setup_sql:
        await conn.execute(setup_sql)
    refused = await claim(conn, proposal_id, "a-000000000001")
    assert not refused.ok and refused.code == code
    assert await status_of(conn, proposal_id) == "pending"
    assert (await audit_rows(conn))[-1][0] == "refusal"


async def test_an_approval_consumed_after_its_expiry_in_the_store_is_refused(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, approval_id = await approved(conn)
    await conn.execute("UPDATE approvals SET used_at = '2999-01-01T00:00:00.000Z'")
    refused = await claim(conn, proposal_id, approval_id)
    assert not refused.ok and refused.code == Code.APPROVAL_EXPIRED
    assert not (await claim(conn, proposal_id, "a-none")).ok
    assert await status_of(conn, proposal_id) == "not_run"


async def test_a_claim_of_an_approval_re_pointed_in_the_store_is_refused_and_ends_it(
    conn: aiosqlite.Connection,
) -> None:
    shown, approval_id = await approved(conn)
    other = await add_proposal(conn, target="19012349999")
    await conn.execute("UPDATE approvals SET proposal_id = ? WHERE id = ?", (other, approval_id))
    refused = await claim(conn, shown, approval_id)
    assert not refused.ok and refused.code == Code.APPROVAL_MISMATCH
    assert [await status_of(conn, p) for p in (shown, other)] == ["not_run", "pending"]
    async with conn.execute("SELECT count(*) FROM executions") as cursor:
        assert (await cursor.fetchone())[0] == 0
    assert not (await claim(conn, other, approval_id)).ok  # ended: it can never be claimed


@pytest.mark.parametrize(
    "change", ["UPDATE approvals SET card_hash = 'changed'", "UPDATE approvals SET facts_hash = 'changed'"]
)
async def test_a_claim_whose_card_or_facts_hash_differs_from_the_store_is_refused(
    conn: aiosqlite.Connection, change: str
) -> None:
    proposal_id, approval_id = await approved(conn)
    await conn.execute(change)
    refused = await claim(conn, proposal_id, approval_id)
    assert not refused.ok and refused.code == Code.APPROVAL_MISMATCH
    assert await status_of(conn, proposal_id) == "not_run"


async def test_an_outcome_is_recorded_once_and_the_proposal_is_executed(conn: aiosqlite.Connection) -> None:
    proposal_id, approval_id = await approved(conn)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.execution_id is not None
    assert await finish_execution(conn, taken.execution_id, outcome="error", detail={"19012341234": "busy"})
    assert not await finish_execution(conn, taken.execution_id, outcome="ok")
    state = await proposal_state(conn, proposal_id)
    assert state is not None
    assert (state.status, state.outcome, state.detail) == ("executed", "error", {"19012341234": "busy"})


async def test_a_refusal_after_the_claim_ends_not_run_keeps_the_approval_claimed_and_never_runs(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, approval_id = await approved(conn)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.execution_id is not None
    assert await finish_execution(
        conn, taken.execution_id, outcome="refused", refusal_code=Code.KILL_SWITCH_ON
    )
    state = await proposal_state(conn, proposal_id)
    assert state is not None
    assert (state.status, state.status_code, state.outcome, state.refusal_code) == (
        "not_run",
        "kill_switch_on",
        "refused",
        "kill_switch_on",
    )
    assert not (await claim(conn, proposal_id, approval_id)).ok
    with pytest.raises(ValueError):
        await finish_execution(conn, taken.execution_id, outcome="refused")


async def test_the_verification_is_kept_apart_from_the_outcome(conn: aiosqlite.Connection) -> None:
    proposal_id, approval_id = await approved(conn)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.execution_id is not None
    await finish_execution(conn, taken.execution_id, outcome="unknown")
    await record_verification(conn, taken.execution_id, verification="verified", detail="channel 1 records")
    execution = await execution_for_approval(conn, approval_id)
    assert execution is not None
    assert (execution.outcome, execution.verification) == ("unknown", "verified")
    assert execution.verified_at is not None
    assert [k for k, _, _ in await audit_rows(conn)][-2:] == ["outcome", "verification"]
    with pytest.raises(ValueError):
        await record_verification(conn, taken.execution_id, verification="probably", detail="")


async def test_a_crash_between_claim_and_outcome_recovers_as_unknown_never_retried(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, approval_id = await approved(conn)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.ok
    assert await recover_running(conn) == 1
    assert await recover_running(conn) == 0
    state = await proposal_state(conn, proposal_id)
    assert state is not None and (state.status, state.outcome) == ("executed", "unknown")
    assert await status_of(conn, proposal_id) == "executed"
    assert not (await claim(conn, proposal_id, approval_id)).ok


async def test_marking_executed_runs_only_inside_the_callers_transaction_and_only_for_a_write(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, approval_id = await approved(conn)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.execution_id is not None
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    mark = (taken.execution_id, proposal_id, "ok", {}, await db_now(conn), {})
    with pytest.raises(StoreError):
        await mark_executed(conn, *mark)
    with pytest.raises(ValueError):
        async with write_tx(conn):
            await mark_executed(conn, taken.execution_id, proposal_id, "refused", {}, await db_now(conn), {})
    assert (await snapshot(conn), await audit_rows(conn)) == (before, audit_before)
    async with write_tx(conn):
        await mark_executed(conn, *mark)
    assert await status_of(conn, proposal_id) == "executed"
    assert [k for k, _, _ in await audit_rows(conn)] == [k for k, _, _ in audit_before] + ["outcome"]


async def test_an_outcome_and_a_recovery_write_the_same_outcome_row(conn: aiosqlite.Connection) -> None:
    rows = []
    for target, end in (("19012341234", "finish"), ("19012341235", "recover")):
        proposal_id, approval_id = await approved(conn, target=target)
        taken = await claim(conn, proposal_id, approval_id)
        assert taken.execution_id is not None
        if end == "finish":
            assert await finish_execution(conn, taken.execution_id, outcome="unknown", message="m")
        else:
            assert await recover_running(conn) == 1
        kind, pid, detail = (await audit_rows(conn))[-1]
        execution = await get_execution(conn, taken.execution_id)
        assert (kind, pid, await status_of(conn, proposal_id)) == ("outcome", proposal_id, "executed")
        assert execution is not None and execution.outcome == "unknown" and execution.finished_at
        rows.append(json.loads(detail))
    assert rows[0]["outcome"] == rows[1]["outcome"] == "unknown"
    assert set(rows[0]) == {"execution_id", "outcome", "message", "detail"}
    assert rows[1]["recovered"] is True and rows[1]["execution_id"] != rows[0]["execution_id"]
