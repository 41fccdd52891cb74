"""Two people for one change (a rule's ``approvers: 2``): the first Approve leaves the proposal
pending, only another uid completes it, for the same card; a refusal changes nothing but its
audit row."""

from __future__ import annotations

import json

import aiosqlite

from shared.errors import Code
from shared.store.approvals import ConsumeResult, deny, get_approval, live_first_approval
from tests.shared.store.approval_helpers import (
    add_proposal,
    approve_as,
    audit_rows,
    conn,
    snapshot,
    status_of,
)

__all__ = ["conn"]  # the fixture

ALICE, BOB = 1001, 1002


async def press(
    conn: aiosqlite.Connection,
    proposal_id: str,
    uid: int | None,
    *,
    card_hash: str = "c",
    facts_hash: str = "f",
    session: str | None = None,
) -> ConsumeResult:
    """Approve as the page does for a tool that needs two people."""
    return await approve_as(
        conn, proposal_id, uid, approvers=2, card_hash=card_hash, facts_hash=facts_hash, session=session
    )


async def test_the_first_approve_is_recorded_and_the_proposal_keeps_waiting(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    first = await press(conn, proposal_id, ALICE)
    assert first.ok and first.first
    assert await status_of(conn, proposal_id) == "pending"
    live = await live_first_approval(conn, proposal_id)
    assert live is not None and live.uid == ALICE and live.card_hash == "c"
    kinds = [kind for kind, _, _ in await audit_rows(conn)]
    assert kinds[-1] == "first_approval" and "approval" not in kinds


async def test_a_second_person_completes_it_and_the_approval_names_the_first(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    first = await press(conn, proposal_id, ALICE)
    second = await press(conn, proposal_id, BOB)
    assert second.ok and not second.first
    assert await status_of(conn, proposal_id) == "approved"
    row = await get_approval(conn, second.approval_id)
    assert row is not None and row.first_approval_id == first.approval_id and row.uid == BOB


async def test_the_same_uid_twice_is_refused_and_changes_nothing_but_its_row(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id = await add_proposal(conn)
    await press(conn, proposal_id, ALICE)
    before, audit_before = await snapshot(conn), await audit_rows(conn)
    for session in ("s-1001", "another-tab"):  # the same session replayed, or a second session
        again = await press(conn, proposal_id, ALICE, session=session)
        assert not again.ok and again.code is Code.APPROVER_NOT_DISTINCT
    assert await snapshot(conn) == before
    added = (await audit_rows(conn))[len(audit_before) :]
    assert [json.loads(detail)["code"] for _, _, detail in added] == ["approver_not_distinct"] * 2


async def test_an_unknown_uid_never_counts_as_a_person(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    assert (await press(conn, proposal_id, None)).code is Code.APPROVER_NOT_DISTINCT
    await press(conn, proposal_id, ALICE)
    assert (await press(conn, proposal_id, None)).code is Code.APPROVER_NOT_DISTINCT
    assert await status_of(conn, proposal_id) == "pending"


async def test_a_card_changed_between_the_two_asks_both_again(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    first = await press(conn, proposal_id, ALICE)
    changed = await press(conn, proposal_id, BOB, facts_hash="f2")
    assert not changed.ok and changed.code is Code.APPROVALS_CARD_CHANGED
    assert await status_of(conn, proposal_id) == "pending"
    assert await live_first_approval(conn, proposal_id) is None  # Alice's first is ended
    again = await press(conn, proposal_id, BOB, facts_hash="f2")
    assert again.ok and again.first and again.approval_id != first.approval_id
    done = await press(conn, proposal_id, ALICE, facts_hash="f2")
    assert done.ok and not done.first and await status_of(conn, proposal_id) == "approved"


async def test_a_deny_by_the_second_person_ends_it(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    await press(conn, proposal_id, ALICE)
    assert await deny(conn, proposal_id, actor="page s-1002")
    assert await status_of(conn, proposal_id) == "denied"
    assert await live_first_approval(conn, proposal_id) is None
    late = await press(conn, proposal_id, BOB)
    assert not late.ok and late.code is Code.PROPOSAL_NOT_PENDING


async def test_one_approver_is_unchanged_a_single_approve_approves(conn: aiosqlite.Connection) -> None:
    proposal_id = await add_proposal(conn)
    one = await approve_as(conn, proposal_id, ALICE)
    assert one.ok and not one.first and await status_of(conn, proposal_id) == "approved"
