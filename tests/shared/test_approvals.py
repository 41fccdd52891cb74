"""The approval state: proposals, approvals consumed once on the DB clock, denials, expiry,
the kill switch. Every refusal leaves the rows as they were and adds one audit row."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from shared.approvals import (
    ApprovalError,
    consume_approval,
    create_approval,
    deny,
    deny_all,
    expire_all_pending,
    expire_due,
    expire_turn,
    get_approval,
    get_proposal,
    insert_proposal,
    kill_switch,
    list_pending,
    proposal_state,
    set_kill_switch,
)
from shared.binding import TargetState, fingerprint_hash, make_bound_record, record_bytes
from shared.errors import Code
from shared.store import migrate, open_store, verify_audit
from tests.shared.approval_helpers import MASTER, add_proposal, audit_rows, conn, snapshot, status_of

__all__ = ["conn"]  # the fixture


async def test_a_proposal_is_stored_pending_with_its_targets_and_an_audit_row(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn, turn_id="t1")
    row = await get_proposal(conn, proposal_id)
    assert row is not None
    assert (row.status, row.tool, row.targets, row.turn_id) == ("pending", "batch_reboot", (MASTER,), "t1")
    assert row.arguments == {"device_ids": [MASTER]}
    assert row.fingerprint == {MASTER: {"online": True, "recording": False, "next_event_start": None}}
    assert row.expires_at is not None and row.expires_at > row.created_at
    assert [p.id for p in await list_pending(conn)] == [proposal_id]
    assert (await audit_rows(conn))[-1][:2] == ("proposal", proposal_id)


async def test_insert_refuses_record_bytes_that_are_not_the_record(conn: aiosqlite.Connection) -> None:
    fingerprint = {MASTER: TargetState(online=True, recording=False, next_event_start=None)}
    record = make_bound_record(
        proposal_id="p-1",
        tool="batch_reboot",
        arguments={"device_ids": [MASTER]},
        targets=[MASTER],
        fingerprint=fingerprint,
        schema_version=1,
        reason="r",
    )
    with pytest.raises(ValueError, match="canonical"):
        await insert_proposal(
            conn,
            record=record,
            record_bytes=record_bytes(record).replace(b"r", b"x"),
            seal="0" * 64,
            fingerprint_hash=fingerprint_hash(fingerprint),
            proposed_by="assistant",
            turn_id=None,
            ttl_seconds=60,
        )
    assert await list_pending(conn) == []


async def test_a_consumed_approval_approves_its_proposal_once(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    await conn.execute("INSERT INTO sessions (id) VALUES ('s1')")
    approval = await create_approval(conn, proposal_id=proposal_id, session_id="s1", card_hash="c")
    result = await consume_approval(conn, approval.id, session_id="s1")
    assert result.ok and result.proposal_id == proposal_id
    stored = await get_approval(conn, approval.id)
    assert stored is not None and stored.used and stored.used_at is not None and not stored.claimed
    assert await status_of(conn, proposal_id) == "approved"
    async with conn.execute("SELECT approvals_count FROM sessions WHERE id = 's1'") as cursor:
        assert [tuple(r) for r in await cursor.fetchall()] == [(1,)]
    assert (await audit_rows(conn))[-1][0] == "approval"


async def assert_refused_without_change(conn: aiosqlite.Connection, call: Any, code: Code) -> None:
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    result = await call()
    assert not result.ok and result.code == code
    assert await snapshot(conn) == before
    after = await audit_rows(conn)
    assert len(after) == len(audit_before) + 1
    assert after[-1][0] == "refusal" and f'"code":"{code}"' in after[-1][2]


async def test_a_second_consume_of_the_same_approval_is_refused(conn: aiosqlite.Connection) -> None:
    approval = await create_approval(
        conn, proposal_id=await add_proposal(conn), session_id="s", card_hash="c"
    )
    assert (await consume_approval(conn, approval.id)).ok
    await assert_refused_without_change(
        conn, lambda: consume_approval(conn, approval.id), Code.APPROVAL_ALREADY_USED
    )


async def test_an_approval_past_its_expiry_on_the_db_clock_is_refused(conn: aiosqlite.Connection) -> None:
    approval = await create_approval(
        conn, proposal_id=await add_proposal(conn), session_id="s", card_hash="c", ttl_seconds=-1
    )
    await assert_refused_without_change(
        conn, lambda: consume_approval(conn, approval.id), Code.APPROVAL_EXPIRED
    )


async def test_an_unknown_approval_or_one_from_another_session_is_not_found(
    conn: aiosqlite.Connection,
) -> None:
    approval = await create_approval(
        conn, proposal_id=await add_proposal(conn), session_id="s", card_hash="c"
    )
    await assert_refused_without_change(
        conn, lambda: consume_approval(conn, "a-nope"), Code.APPROVAL_NOT_FOUND
    )
    await assert_refused_without_change(
        conn, lambda: consume_approval(conn, approval.id, session_id="other"), Code.APPROVAL_NOT_FOUND
    )


async def test_an_approval_of_a_denied_or_expired_proposal_is_refused(conn: aiosqlite.Connection) -> None:
    denied = await add_proposal(conn)
    approval = await create_approval(conn, proposal_id=denied, session_id="s", card_hash="c")
    assert await deny(conn, denied, actor="operator")
    await assert_refused_without_change(
        conn, lambda: consume_approval(conn, approval.id), Code.PROPOSAL_NOT_PENDING
    )
    late = await add_proposal(conn)
    approval = await create_approval(conn, proposal_id=late, session_id="s", card_hash="c")
    await conn.execute("UPDATE proposals SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", (late,))
    await assert_refused_without_change(
        conn, lambda: consume_approval(conn, approval.id), Code.PROPOSAL_NOT_PENDING
    )


async def test_twenty_concurrent_consumes_from_separate_connections_let_exactly_one_win(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fw.db"
    setup = await open_store(path)
    await migrate(setup)
    approval = await create_approval(
        conn=setup, proposal_id=await add_proposal(setup), session_id="s", card_hash="c"
    )
    connections = [await open_store(path) for _ in range(20)]
    try:
        results = await asyncio.gather(*(consume_approval(c, approval.id) for c in connections))
    finally:
        for c in connections:
            await c.close()
    assert sum(r.ok for r in results) == 1
    assert {r.code for r in results if not r.ok} == {Code.APPROVAL_ALREADY_USED}
    kinds = [k for k, _, _ in await audit_rows(setup)]
    assert kinds.count("approval") == 1 and kinds.count("refusal") == 19
    assert (await verify_audit(setup)).ok
    await setup.close()


async def test_a_card_can_only_be_shown_for_a_pending_unexpired_proposal(conn: aiosqlite.Connection) -> None:
    with pytest.raises(ApprovalError) as missing:
        await create_approval(conn, proposal_id="p-none", session_id="s", card_hash="c")
    assert missing.value.code == Code.PROPOSAL_NOT_FOUND
    stale = await add_proposal(conn, ttl_seconds=-1)
    before = await snapshot(conn)
    with pytest.raises(ApprovalError) as expired:
        await create_approval(conn, proposal_id=stale, session_id="s", card_hash="c")
    assert expired.value.code == Code.PROPOSAL_NOT_PENDING
    assert await snapshot(conn) == before
    assert [k for k, _, _ in await audit_rows(conn)][-2:] == ["proposal", "refusal"]


async def test_deny_works_once_and_a_second_deny_is_a_refusal(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    assert await deny(conn, proposal_id, actor="operator")
    before = await snapshot(conn)
    assert not await deny(conn, proposal_id, actor="operator")
    assert not await deny(conn, "p-none", actor="operator")
    assert await snapshot(conn) == before
    assert [k for k, _, _ in await audit_rows(conn)][-3:] == ["denial", "refusal", "refusal"]
    state = await proposal_state(conn, proposal_id)
    assert state is not None and state.status == "denied" and state.outcome is None


async def test_deny_all_denies_only_pending_proposals(conn: aiosqlite.Connection) -> None:
    first, second, approved = [await add_proposal(conn) for _ in range(3)]
    approval = await create_approval(conn, proposal_id=approved, session_id="s", card_hash="c")
    assert (await consume_approval(conn, approval.id)).ok
    assert await deny_all(conn, actor="operator") == 2
    statuses = [await status_of(conn, p) for p in (first, second, approved)]
    assert statuses == ["denied", "denied", "approved"]


async def test_expiry_follows_the_db_clock_the_turn_and_a_restart(conn: aiosqlite.Connection) -> None:
    due = await add_proposal(conn, ttl_seconds=-1)
    fresh = await add_proposal(conn, ttl_seconds=600, turn_id="turn-1")
    other = await add_proposal(conn, ttl_seconds=600, turn_id="turn-2")
    assert await expire_due(conn) == 1
    assert await status_of(conn, due) == "expired"
    assert await expire_turn(conn, "turn-1", actor="assistant") == 1
    assert await status_of(conn, fresh) == "expired"
    assert await expire_all_pending(conn, actor="executor", reason="executor_start") == 1
    assert await status_of(conn, other) == "expired"
    assert await expire_all_pending(conn, actor="executor", reason="executor_start") == 0
    expiries = [d for k, _, d in await audit_rows(conn) if k == "expiry"]
    assert len(expiries) == 3 and '"reason":"executor_start"' in expiries[-1]


async def test_the_kill_switch_is_off_until_set_and_each_change_is_audited(
    conn: aiosqlite.Connection,
) -> None:
    assert not await kill_switch(conn)
    await set_kill_switch(conn, True, actor="operator")
    assert await kill_switch(conn)
    await set_kill_switch(conn, False, actor="operator")
    assert not await kill_switch(conn)
    assert [k for k, _, _ in await audit_rows(conn)] == ["kill_switch", "kill_switch"]
