"""The approval state: proposals, approvals consumed once on the DB clock, denials, expiry,
the kill switch. Every refusal leaves the rows as they were and adds one audit row."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiosqlite
import msgspec
import pytest

from services.executor.executions import claim_approval
from shared.binding import TargetState, fingerprint_hash, make_bound_record, record_bytes
from shared.errors import Code
from shared.store.approvals import (
    approve,
    card_window_end,
    deny,
    deny_all,
    end_stranded,
    end_unclaimed,
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
from shared.store.db import append_audit, db_now, migrate, open_store, verify_audit, write_tx
from tests.shared.store.approval_helpers import (
    KEYRING,
    MASTER,
    add_proposal,
    audit_rows,
    conn,
    snapshot,
    status_of,
)

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


async def test_an_approval_is_recorded_consumed_and_approves_its_proposal_once(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    await conn.execute("INSERT INTO sessions (id) VALUES ('s1')")
    shown_at = await db_now(conn)
    result = await approve(
        conn,
        proposal_id=proposal_id,
        session_id="s1",
        card_hash="c",
        facts_hash="f",
        facts={"tool": "batch_reboot"},
        shown_at=shown_at,
        ttl_seconds=300,
    )
    assert result.ok and result.proposal_id == proposal_id
    stored = await get_approval(conn, result.approval_id)
    assert stored is not None and stored.used and stored.used_at is not None and not stored.claimed
    assert (stored.proposal_id, stored.card_hash, stored.facts_hash, stored.shown_at) == (
        proposal_id,
        "c",
        "f",
        shown_at,
    )
    assert stored.facts == {"tool": "batch_reboot"} and stored.expires_at > shown_at
    assert await status_of(conn, proposal_id) == "approved"
    async with conn.execute("SELECT approvals_count FROM sessions WHERE id = 's1'") as cursor:
        assert [tuple(r) for r in await cursor.fetchall()] == [(1,)]
    kind, _, detail = (await audit_rows(conn))[-1]
    assert kind == "approval" and '"facts_hash":"f"' in detail and f'"shown_at":"{shown_at}"' in detail


async def assert_refused_without_change(conn: aiosqlite.Connection, call: Any, code: Code) -> None:
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    result = await call()
    assert not result.ok and result.code == code
    assert await snapshot(conn) == before
    after = await audit_rows(conn)
    assert len(after) == len(audit_before) + 1
    assert after[-1][0] == "refusal" and f'"code":"{code}"' in after[-1][2]


async def approve_now(
    conn: aiosqlite.Connection, proposal_id: str, *, shown_seconds_ago: int = 0, ttl: int = 300
):
    return await approve(
        conn,
        proposal_id=proposal_id,
        session_id="s",
        card_hash="c",
        facts_hash="f",
        facts=None,
        shown_at=await db_now(conn, plus_seconds=-shown_seconds_ago),
        ttl_seconds=ttl,
    )


async def test_a_second_approve_of_the_same_proposal_is_refused(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    assert (await approve_now(conn, proposal_id)).ok
    await assert_refused_without_change(
        conn, lambda: approve_now(conn, proposal_id), Code.APPROVAL_ALREADY_USED
    )


async def test_approve_after_the_cards_window_on_the_db_clock_is_refused(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    await assert_refused_without_change(
        conn, lambda: approve_now(conn, proposal_id, shown_seconds_ago=301), Code.APPROVAL_EXPIRED
    )
    assert (await approve_now(conn, proposal_id, shown_seconds_ago=290)).ok


async def test_a_card_shown_in_the_future_is_refused(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    await assert_refused_without_change(
        conn, lambda: approve_now(conn, proposal_id, shown_seconds_ago=-60), Code.APPROVAL_EXPIRED
    )


async def test_approving_an_unknown_denied_or_expired_proposal_is_refused(conn: aiosqlite.Connection) -> None:
    await assert_refused_without_change(conn, lambda: approve_now(conn, "p-none"), Code.PROPOSAL_NOT_FOUND)
    denied = await add_proposal(conn)
    assert await deny(conn, denied, actor="operator")
    await assert_refused_without_change(conn, lambda: approve_now(conn, denied), Code.PROPOSAL_NOT_PENDING)
    late = await add_proposal(conn)
    await conn.execute("UPDATE proposals SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", (late,))
    await assert_refused_without_change(conn, lambda: approve_now(conn, late), Code.PROPOSAL_NOT_PENDING)


async def test_the_card_states_whichever_ends_first_the_cards_window_or_the_proposal(
    conn: aiosqlite.Connection,
) -> None:
    shown = "2026-12-01T10:20:05.000Z"
    assert card_window_end(shown, "2026-12-01T10:40:00.000Z", 300) == "2026-12-01T10:25:05.000Z"
    assert card_window_end(shown, "2026-12-01T10:20:46.000Z", 300) == "2026-12-01T10:20:46.000Z"
    assert card_window_end(shown, None, 30) == "2026-12-01T10:20:35.000Z"


async def test_twenty_concurrent_approves_from_separate_connections_let_exactly_one_win(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fw.db"
    setup = await open_store(path, keyring=KEYRING)
    await migrate(setup)
    proposal_id = await add_proposal(setup)
    connections = [await open_store(path, keyring=KEYRING) for _ in range(20)]
    try:
        results = await asyncio.gather(*(approve_now(c, proposal_id) for c in connections))
    finally:
        for c in connections:
            await c.close()
    assert sum(r.ok for r in results) == 1
    assert {r.code for r in results if not r.ok} == {Code.APPROVAL_ALREADY_USED}
    kinds = [k for k, _, _ in await audit_rows(setup)]
    assert kinds.count("approval") == 1 and kinds.count("refusal") == 19
    async with setup.execute("SELECT count(*) FROM approvals") as cursor:
        assert (await cursor.fetchone())[0] == 1
    assert (await verify_audit(setup)).ok
    await setup.close()


async def test_an_unclaimed_approval_ends_not_run_and_can_never_be_claimed(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    result = await approve_now(conn, proposal_id)
    assert await end_unclaimed(
        conn,
        approval_id=result.approval_id,
        proposal_id=proposal_id,
        code=Code.SERVICE_UNAVAILABLE,
        message="the executor could not be reached",
        actor="approval_web",
        step="execute_not_answered",
    )
    row = await get_proposal(conn, proposal_id)
    assert row is not None and (row.status, row.status_code) == ("not_run", "service_unavailable")
    approval = await get_approval(conn, result.approval_id)
    assert approval is not None and approval.ended_code == "service_unavailable"
    kind, pid, detail = (await audit_rows(conn))[-1]
    assert (kind, pid) == ("refusal", proposal_id) and '"not_run":true' in detail
    claim = await claim_approval(
        conn, result.approval_id, proposal_id=proposal_id, card_hash="c", facts_hash="f"
    )
    assert not claim.ok and claim.code == Code.APPROVAL_ALREADY_USED


async def test_a_claimed_approval_is_not_ended_by_the_page(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    result = await approve_now(conn, proposal_id)
    claim = await claim_approval(
        conn, result.approval_id, proposal_id=proposal_id, card_hash="c", facts_hash="f"
    )
    assert claim.ok
    assert not await end_unclaimed(
        conn,
        approval_id=result.approval_id,
        proposal_id=proposal_id,
        code=Code.SERVICE_NO_ANSWER,
        message="no answer",
        actor="approval_web",
        step="execute_not_answered",
    )
    assert await status_of(conn, proposal_id) == "approved"


async def test_at_start_approved_proposals_nobody_claimed_end_not_run(conn: aiosqlite.Connection) -> None:
    stranded, running = await add_proposal(conn), await add_proposal(conn, target="19012341235")
    await approve_now(conn, stranded)
    taken = await approve_now(conn, running)
    assert (
        await claim_approval(conn, taken.approval_id, proposal_id=running, card_hash="c", facts_hash="f")
    ).ok
    assert await end_stranded(conn, actor="approval_web", reason=Code.APPROVAL_WEB_RESTARTED) == 1
    assert [await status_of(conn, p) for p in (stranded, running)] == ["not_run", "approved"]
    assert await end_stranded(conn, actor="approval_web", reason=Code.APPROVAL_WEB_RESTARTED) == 0


PAGE_END = {"actor": "approval_web", "operation": "execute", "step": "execute_not_answered"}
"""Where the page ends an approval the executor did not answer for."""


async def test_ending_before_the_claim_inside_a_transaction_is_part_of_it(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    approval_id = (await approve_now(conn, proposal_id)).approval_id
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    end = {"approval_id": approval_id, "proposal_id": proposal_id, "code": Code.SERVICE_NO_ANSWER}
    with pytest.raises(LookupError):  # the caller's transaction decides: rolled back, nothing ended
        async with write_tx(conn):
            assert await end_unclaimed(conn, **end, **PAGE_END)
            raise LookupError
    assert (await snapshot(conn), await audit_rows(conn)) == (before, audit_before)
    async with write_tx(conn):
        assert await end_unclaimed(conn, **end, **PAGE_END)
        assert conn.in_transaction, "it did not commit the caller's transaction"
    assert await status_of(conn, proposal_id) == "not_run"


async def test_ending_a_claimed_approval_leaves_the_store_as_it_was_with_its_refusal_row(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    approval_id = (await approve_now(conn, proposal_id)).approval_id
    claim = await claim_approval(conn, approval_id, proposal_id=proposal_id, card_hash="c", facts_hash="f")
    assert claim.ok
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    async with write_tx(conn):
        ended = await end_unclaimed(
            conn, approval_id=approval_id, proposal_id=proposal_id, code=Code.SERVICE_NO_ANSWER, **PAGE_END
        )
    assert not ended
    assert await snapshot(conn) == before
    kind, pid, detail = (await audit_rows(conn))[-1]
    assert len(await audit_rows(conn)) == len(audit_before) + 1
    assert (kind, pid) == ("refusal", proposal_id)
    assert (
        '"claimed":true' in detail and '"not_run":false' in detail and '"code":"service_no_answer"' in detail
    )


async def test_every_end_before_a_claim_writes_the_same_refusal_row(conn: aiosqlite.Connection) -> None:
    """The executor's refused claim, the page's end and a start's sweep: one shape of row."""
    ends = []
    for end in ("claim", "page", "start"):
        proposal_id = await add_proposal(conn, target=f"1901234123{len(ends)}")
        approval_id = (await approve_now(conn, proposal_id)).approval_id
        if end == "claim":
            assert not (
                await claim_approval(
                    conn, approval_id, proposal_id=proposal_id, card_hash="x", facts_hash="f"
                )
            ).ok
        elif end == "page":
            await end_unclaimed(
                conn,
                approval_id=approval_id,
                proposal_id=proposal_id,
                code=Code.SERVICE_UNAVAILABLE,
                message="down",
                actor="approval_web",
                step="execute_not_delivered",
            )
        else:
            assert await end_stranded(conn, actor="approval_web", reason=Code.APPROVAL_WEB_RESTARTED) == 1
        kind, pid, detail = (await audit_rows(conn))[-1]
        approval = await get_approval(conn, approval_id)
        assert (kind, pid, await status_of(conn, proposal_id)) == ("refusal", proposal_id, "not_run")
        assert approval is not None and approval.ended_code is not None
        ends.append(sorted(json.loads(detail)))
    assert ends[0] == ends[1] == ends[2]
    assert ends[0] == ["approval_id", "claimed", "code", "message", "not_run", "operation", "step"]


async def test_a_row_is_converted_by_its_columns_names_json_decoded_and_a_bad_column_refused(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn, turn_id="t-1")
    approval_id = (await approve_now(conn, proposal_id)).approval_id
    proposal, approval = await get_proposal(conn, proposal_id), await get_approval(conn, approval_id)
    assert proposal is not None and approval is not None
    assert (proposal.targets, proposal.arguments, proposal.turn_id) == (
        (MASTER,),
        {"device_ids": [MASTER]},
        "t-1",
    )
    assert (approval.used, approval.claimed, approval.facts) == (True, False, None)
    await conn.execute("UPDATE proposals SET targets_json = '{\"a\": 1}' WHERE id = ?", (proposal_id,))
    with pytest.raises(msgspec.ValidationError, match="targets"):
        await get_proposal(conn, proposal_id)


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
    first, second, approved = [await add_proposal(conn, target=f"1901234123{n}") for n in range(3)]
    assert (await approve_now(conn, approved)).ok
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


async def test_the_kill_switch_shows_paused_from_a_pause_until_the_executor_sealed_a_resume(
    conn: aiosqlite.Connection,
) -> None:
    assert not await kill_switch(conn), "never paused"
    pause = await set_kill_switch(conn, True, actor="operator:0")
    assert await kill_switch(conn)
    await append_audit(
        conn, actor="executor", kind="kill_switch_sealed", detail={"on": True, "request_seq": pause.seq}
    )
    assert await kill_switch(conn)
    resume = await set_kill_switch(conn, False, actor="operator:0")
    assert await kill_switch(conn), "a resume the executor has not sealed"
    sealed_off = {"on": False, "request_seq": resume.seq}
    await append_audit(conn, actor="operator:0", kind="kill_switch_sealed", detail=sealed_off)
    assert await kill_switch(conn), "a seal not written by the executor"
    await append_audit(
        conn, actor="executor", kind="kill_switch_sealed", detail={**sealed_off, "request_seq": pause.seq}
    )
    assert await kill_switch(conn), "the executor's seal of another request"
    await append_audit(conn, actor="executor", kind="kill_switch_sealed", detail=sealed_off)
    assert not await kill_switch(conn)
    await set_kill_switch(conn, True, actor="operator:0")
    assert await kill_switch(conn)
    assert [k for k, _, _ in await audit_rows(conn)] == [
        "kill_switch",
        "kill_switch_sealed",
        "kill_switch",
        *["kill_switch_sealed"] * 3,
        "kill_switch",
    ]
    assert (await snapshot(conn))["kv"] == [], "the audit alone holds the requests"


async def test_a_denial_on_the_page_names_its_persons_uid_in_its_own_audit_row(
    conn: aiosqlite.Connection,
) -> None:
    """Issue 28 walk item 8: ``audit tail`` said "someone, on the approval page" for a denial
    the page itself named as root's. The row of a page denial (one, or all pending) carries
    the uid that signed the session in; a session without one, and a command's, carry none."""
    from services.approval_web.admin import detail_of
    from services.approval_web.page.sessions import start_session
    from shared.store.approvals import decision

    await start_session(conn, "s-known", client="127.0.0.1", uid=1234)
    await start_session(conn, "s-unknown", client="127.0.0.1")
    one, two, three, four = [await add_proposal(conn, target=f"1901234123{n}") for n in range(4)]
    assert await deny(conn, one, actor="page s-known")
    assert await deny(conn, two, actor="page s-unknown")
    assert await deny(conn, three, actor="operator:1001")
    assert await deny_all(conn, actor="page s-known") == 1
    denials = [d for k, _, d in await audit_rows(conn) if k == "denial"]
    assert [json.loads(d).get("uid") for d in denials] == [1234, None, None, 1234]
    row = await get_proposal(conn, one)
    assert row is not None
    shown = detail_of(
        row, await proposal_state(conn, one), now=await db_now(conn), decided=await decision(conn, one)
    )
    assert (shown.decided_kind, shown.decided_from, shown.decided_uids) == ("denial", "page", (1234,))
    assert shown.decided_at == row.decided_at and shown.decided_at is not None
