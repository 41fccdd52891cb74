"""The limits against approval fatigue: pure decisions, and the counts read from a real store
(times moved by editing ``created_at`` / ``decided_at`` / ``expires_at`` in the store)."""

from __future__ import annotations

import aiosqlite
import pytest

from services.approval_web.limits import (
    LimitCounts,
    LimitReached,
    TargetDenials,
    active_pauses,
    check_limits,
    read_counts,
    target_denials,
)
from shared.errors import Code
from shared.policy.loader import Limits
from shared.store.approvals import deny, expire_due
from tests.shared.store.approval_helpers import add_proposal, conn

__all__ = ["conn"]  # the fixture

LIMITS = Limits(
    max_pending=3,
    per_hour=4,
    denials_before_pause=3,
    denial_pause_minutes=60,
    approval_ttl_seconds=300,
    proposal_ttl_seconds=900,
)
A, B = "29088800001", "29088800002"
NOW = "2026-03-02T10:00:00.000Z"


def refusal(counts: LimitCounts, limits: Limits = LIMITS) -> Code | None:
    try:
        check_limits(counts, limits, tool="batch_reboot")
    except LimitReached as exc:
        return exc.code
    return None


MOVES = {
    "created_at": "UPDATE proposals SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE id = ?",
    "decided_at": "UPDATE proposals SET decided_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE id = ?",
    "expires_at": "UPDATE proposals SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE id = ?",
}


async def move(conn: aiosqlite.Connection, proposal_id: str, column: str, offset: str) -> None:
    """Move one of a proposal's times to ``db now + offset`` (how these tests move time)."""
    await conn.execute(MOVES[column], (offset, proposal_id))


async def counts(conn: aiosqlite.Connection, target: str = A, tool: str = "batch_reboot") -> LimitCounts:
    return await read_counts(conn, tool=tool, targets=[target], limits=LIMITS)


# --- pure -------------------------------------------------------------------------------------


def test_limits_are_checked_queue_first_then_the_hourly_cap_then_the_denial_pause() -> None:
    paused = (TargetDenials(A, 3, "2026-03-02T10:30:00.000Z"),)
    assert refusal(LimitCounts(NOW, pending=3, last_hour=4, denials=paused)) == Code.QUEUE_FULL
    assert refusal(LimitCounts(NOW, pending=2, last_hour=4, denials=paused)) == Code.HOURLY_CAP_REACHED
    assert refusal(LimitCounts(NOW, pending=2, last_hour=3, denials=paused)) == Code.DENIAL_PAUSE
    assert refusal(LimitCounts(NOW, pending=2, last_hour=3)) is None


def test_a_pause_that_has_lifted_refuses_nothing() -> None:
    lifted = (TargetDenials(A, 3, "2026-03-02T09:59:59.999Z"),)
    assert refusal(LimitCounts(NOW, pending=0, last_hour=0, denials=lifted)) is None


def test_the_pause_lifts_a_pause_length_after_the_nth_most_recent_denial() -> None:
    rows = [("t3", "t3+60"), ("t2", "t2+60"), ("t1", "t1+60"), ("t0", "t0+60")]
    assert target_denials(A, rows, 3) == TargetDenials(A, 4, "t1+60")
    assert target_denials(A, rows[:2], 3) == TargetDenials(A, 2, None)


def test_a_refusal_names_the_counts_and_the_cap_in_words() -> None:
    with pytest.raises(LimitReached) as caught:
        check_limits(LimitCounts(NOW, pending=3, last_hour=0), LIMITS, tool="batch_reboot")
    assert "3 proposals are already waiting" in caught.value.message and "at most 3" in caught.value.message


# --- counts from the store ------------------------------------------------------------------------


async def test_pending_counts_only_proposals_not_past_their_expiry(conn: aiosqlite.Connection) -> None:
    ids = [await add_proposal(conn, target=t) for t in (A, B, "29088800003")]
    assert refusal(await counts(conn)) == Code.QUEUE_FULL
    await move(conn, ids[0], "expires_at", "-1 seconds")
    assert (await counts(conn)).pending == 2
    assert refusal(await counts(conn)) is None


async def test_the_hourly_cap_counts_expired_proposals_but_not_denied_ones(
    conn: aiosqlite.Connection,
) -> None:
    ids = [await add_proposal(conn, target=A) for _ in range(4)]
    for proposal_id in ids[:3]:
        await move(conn, proposal_id, "expires_at", "-1 seconds")
    assert await expire_due(conn) == 3
    observed = await counts(conn, target=B)
    assert (observed.pending, observed.last_hour) == (1, 4)
    assert refusal(observed) == Code.HOURLY_CAP_REACHED
    assert await deny(conn, ids[3], actor="operator")
    assert (await counts(conn, target=B)).last_hour == 3
    assert refusal(await counts(conn, target=B)) is None


async def test_proposals_older_than_an_hour_leave_the_hourly_cap(conn: aiosqlite.Connection) -> None:
    ids = [await add_proposal(conn, target=A) for _ in range(3)]
    await move(conn, ids[0], "created_at", "-3601 seconds")
    assert (await counts(conn, target=B)).last_hour == 2


async def test_three_denials_of_one_tool_and_target_pause_it_while_another_target_still_works(
    conn: aiosqlite.Connection,
) -> None:
    for _ in range(3):
        assert await deny(conn, await add_proposal(conn, target=A), actor="operator")
    on_a = await counts(conn, target=A)
    assert refusal(on_a) == Code.DENIAL_PAUSE
    assert on_a.denials[0].count == 3 and on_a.denials[0].pause_until is not None
    assert on_a.denials[0].pause_until > on_a.now
    assert refusal(await counts(conn, target=B)) is None
    assert refusal(await counts(conn, target=A, tool="batch_firmware_update")) is None
    pauses = await active_pauses(conn, LIMITS)
    assert [(p.tool, p.target) for p in pauses] == [("batch_reboot", A)]


async def test_two_denials_do_not_pause(conn: aiosqlite.Connection) -> None:
    for _ in range(2):
        assert await deny(conn, await add_proposal(conn, target=A), actor="operator")
    assert refusal(await counts(conn, target=A)) is None
    assert await active_pauses(conn, LIMITS) == ()


async def test_denials_older_than_the_pause_window_no_longer_pause(conn: aiosqlite.Connection) -> None:
    ids = []
    for _ in range(3):
        ids.append(await add_proposal(conn, target=A))
        assert await deny(conn, ids[-1], actor="operator")
    await move(conn, ids[0], "decided_at", "-61 minutes")
    observed = await counts(conn, target=A)
    assert observed.denials[0].count == 2
    assert refusal(observed) is None


async def test_the_pause_lifts_an_hour_after_the_third_most_recent_denial(conn: aiosqlite.Connection) -> None:
    ids = []
    for _ in range(3):
        ids.append(await add_proposal(conn, target=A))
        assert await deny(conn, ids[-1], actor="operator")
    await move(conn, ids[0], "decided_at", "-59 minutes")
    assert refusal(await counts(conn, target=A)) == Code.DENIAL_PAUSE
    await move(conn, ids[0], "decided_at", "-60 minutes")
    assert refusal(await counts(conn, target=A)) is None
