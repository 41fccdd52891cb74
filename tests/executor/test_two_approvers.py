"""The executor's claim of a change that needs two people: two approvals of distinct uids,
both in their window and bound to the same card, claimed together, or nothing runs
(``approvals_insufficient``)."""

from __future__ import annotations

import aiosqlite

from services.executor.executions import claim_approval
from shared.errors import Code
from shared.store.approvals import ClaimResult, get_approval
from tests.shared.store.approval_helpers import add_proposal, approve_as, approved, conn, snapshot, status_of

__all__ = ["conn"]  # the fixture

ALICE, BOB = 1001, 1002


async def two(conn: aiosqlite.Connection, first_uid: int, second_uid: int) -> tuple[str, str, str]:
    """A proposal approved by `first_uid` then `second_uid`: (proposal, first, approval) IDs."""
    proposal_id = await add_proposal(conn)
    ids = []
    for uid in (first_uid, second_uid):
        result = await approve_as(conn, proposal_id, uid, approvers=2)
        assert result.ok
        ids.append(result.approval_id)
    return proposal_id, ids[0], ids[1]


async def claim(
    conn: aiosqlite.Connection, proposal_id: str, approval_id: str, approvers: int = 2
) -> ClaimResult:
    return await claim_approval(
        conn, approval_id, proposal_id=proposal_id, card_hash="c", facts_hash="f", approvers=approvers
    )


async def test_two_distinct_people_are_claimed_together(conn: aiosqlite.Connection) -> None:
    proposal_id, first_id, approval_id = await two(conn, ALICE, BOB)
    taken = await claim(conn, proposal_id, approval_id)
    assert taken.ok
    async with conn.execute("SELECT claimed FROM first_approvals WHERE id = ?", (first_id,)) as cursor:
        assert (await cursor.fetchone())[0] == 1


async def test_the_executor_refuses_one_approval_for_a_change_that_needs_two(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, approval_id = await approved(conn)  # one person, as a page with one approver records it
    taken = await claim(conn, proposal_id, approval_id)
    assert not taken.ok and taken.code is Code.APPROVALS_INSUFFICIENT
    assert await status_of(conn, proposal_id) == "not_run"
    row = await get_approval(conn, approval_id)
    assert row is not None and not row.claimed and row.ended_code == "approvals_insufficient"


async def test_the_same_uid_written_twice_into_the_store_is_refused_at_the_claim(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, first_id, approval_id = await two(conn, ALICE, BOB)
    await conn.execute("UPDATE first_approvals SET uid = ? WHERE id = ?", (BOB, first_id))
    await conn.commit()
    taken = await claim(conn, proposal_id, approval_id)
    assert not taken.ok and taken.code is Code.APPROVALS_INSUFFICIENT


async def test_a_replayed_first_approval_is_refused(conn: aiosqlite.Connection) -> None:
    """A first approval already claimed once cannot complete another approval row: an edited
    store that points a new approval at it claims nothing."""
    proposal_id, first_id, approval_id = await two(conn, ALICE, BOB)
    assert (await claim(conn, proposal_id, approval_id)).ok
    other, _, other_approval = await two(conn, ALICE, BOB)
    await conn.execute("UPDATE approvals SET first_approval_id = ? WHERE id = ?", (first_id, other_approval))
    await conn.execute("UPDATE first_approvals SET proposal_id = ? WHERE id = ?", (other, first_id))
    await conn.commit()
    before = await snapshot(conn)
    replayed = await claim(conn, other, other_approval)
    assert not replayed.ok and replayed.code is Code.APPROVALS_INSUFFICIENT
    after = await snapshot(conn)
    assert after["executions"] == before["executions"]


async def test_a_first_approval_whose_window_passed_is_refused_at_the_claim(
    conn: aiosqlite.Connection,
) -> None:
    proposal_id, first_id, approval_id = await two(conn, ALICE, BOB)
    await conn.execute(
        "UPDATE first_approvals SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 seconds') WHERE id = ?",
        (first_id,),
    )
    await conn.commit()
    assert (await claim(conn, proposal_id, approval_id)).code is Code.APPROVALS_INSUFFICIENT


async def test_a_one_person_tool_still_claims_one_approval(conn: aiosqlite.Connection) -> None:
    proposal_id, approval_id = await approved(conn)
    assert (await claim(conn, proposal_id, approval_id, approvers=1)).ok
