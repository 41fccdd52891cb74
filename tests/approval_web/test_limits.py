"""The limits against approval fatigue: pure decisions, and the counts read from a real store
(times moved by editing ``created_at`` / ``decided_at`` / ``expires_at`` in the store)."""

from __future__ import annotations

import dataclasses
import json

import aiosqlite
import pytest

from services.approval_web.limits import (
    LimitCounts,
    LimitReached,
    TargetDenials,
    active_pauses,
    check_limits,
    lift_pauses,
    pause_end,
    read_counts,
    target_denials,
)
from shared.errors import Code
from shared.policy.loader import Limits
from shared.store.approvals import deny, expire_due
from shared.store.db import parse_db_text
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


def at(minutes: int) -> str:
    """A database-clock text `minutes` after 10:00 on the tests' day."""
    hours, rest = divmod(600 + minutes, 60)
    return f"2026-03-02T{hours:02d}:{rest:02d}:00.000Z"


def test_a_pause_runs_a_whole_pause_from_the_denial_that_made_the_count_not_from_the_first() -> None:
    # Denied at 10:00, 10:30 and 10:58: the third denial starts a 60-minute pause (until 11:58).
    assert pause_end([at(0), at(30), at(58)], LIMITS) == at(118)
    assert target_denials(A, [at(58), at(0), at(30)], LIMITS) == TargetDenials(A, 3, at(118))


def test_denials_spread_over_more_than_an_hour_pause_when_they_fall_within_the_window() -> None:
    assert pause_end([at(0), at(90), at(200)], LIMITS) == at(260)
    narrow = dataclasses.replace(LIMITS, denial_window_minutes=120)
    assert pause_end([at(0), at(90), at(200)], narrow) is None
    assert pause_end([at(0), at(90), at(110)], narrow) == at(170)


def test_the_latest_pause_wins_and_fewer_than_n_denials_make_none() -> None:
    assert pause_end([at(0), at(10), at(20), at(40)], LIMITS) == at(100)
    assert pause_end([at(0), at(10)], LIMITS) is None
    assert pause_end([], LIMITS) is None


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


async def denials(conn: aiosqlite.Connection, *offsets: str, target: str = A) -> list[str]:
    """Deny one proposal of batch_reboot on `target` per offset, each decision moved to now + offset."""
    ids = []
    for offset in offsets:
        ids.append(await add_proposal(conn, target=target))
        assert await deny(conn, ids[-1], actor="operator")
        await move(conn, ids[-1], "decided_at", offset)
    return ids


async def test_the_first_denial_58_minutes_ago_still_pauses_for_an_hour_from_the_third(
    conn: aiosqlite.Connection,
) -> None:
    await denials(conn, "-58 minutes", "-30 minutes", "-1 minutes")
    observed = await counts(conn, target=A)
    assert refusal(observed) == Code.DENIAL_PAUSE
    (pause,) = await active_pauses(conn, LIMITS)
    minutes_left = (parse_db_text(pause.until) - parse_db_text(observed.now)).total_seconds() / 60
    assert 58 < minutes_left <= 59, minutes_left


async def test_three_denials_spread_over_more_than_an_hour_pause(conn: aiosqlite.Connection) -> None:
    await denials(conn, "-150 minutes", "-90 minutes", "-10 minutes")
    assert refusal(await counts(conn, target=A)) == Code.DENIAL_PAUSE


async def test_denials_further_apart_than_the_window_do_not_pause(conn: aiosqlite.Connection) -> None:
    await denials(conn, "-3000 minutes", "-1500 minutes", "-10 minutes")
    observed = await counts(conn, target=A)
    assert refusal(observed) is None and observed.denials[0].pause_until is None


async def test_the_pause_ends_a_pause_length_after_the_third_denial(conn: aiosqlite.Connection) -> None:
    ids = await denials(conn, "-100 minutes", "-70 minutes", "-59 minutes")
    assert refusal(await counts(conn, target=A)) == Code.DENIAL_PAUSE
    await move(conn, ids[-1], "decided_at", "-61 minutes")
    assert refusal(await counts(conn, target=A)) is None
    assert await active_pauses(conn, LIMITS) == ()


async def test_an_operator_lifts_a_pause_with_an_audit_row_and_later_denials_count_afresh(
    conn: aiosqlite.Connection,
) -> None:
    await denials(conn, "-3 minutes", "-2 minutes", "-1 minutes")
    await denials(conn, "-3 minutes", "-2 minutes", "-1 minutes", target=B)
    lifted = await lift_pauses(conn, LIMITS, actor="operator:1000", tool="batch_reboot", target=A)
    assert [(p.tool, p.target) for p in lifted] == [("batch_reboot", A)]
    assert refusal(await counts(conn, target=A)) is None
    assert refusal(await counts(conn, target=B)) == Code.DENIAL_PAUSE
    async with conn.execute("SELECT actor, detail_json FROM audit WHERE kind = 'denial_lift'") as cursor:
        rows = [(r[0], json.loads(r[1])) for r in await cursor.fetchall()]
    assert [(actor, d["tool"], d["target"], d["denials"]) for actor, d in rows] == [
        ("operator:1000", "batch_reboot", A, 3)
    ]
    await denials(conn, "-0 minutes", "-0 minutes")
    assert refusal(await counts(conn, target=A)) is None
    await denials(conn, "-0 minutes")
    assert refusal(await counts(conn, target=A)) == Code.DENIAL_PAUSE


async def test_lifting_every_pause_lifts_each_running_one_and_nothing_else(
    conn: aiosqlite.Connection,
) -> None:
    await denials(conn, "-3 minutes", "-2 minutes", "-1 minutes")
    await denials(conn, "-3 minutes", "-2 minutes", "-1 minutes", target=B)
    await denials(conn, "-300 minutes", "-200 minutes", "-100 minutes", target="29088800003")
    lifted = await lift_pauses(conn, LIMITS, actor="operator", tool=None, target=None)
    assert sorted(p.target for p in lifted) == [A, B]
    assert await active_pauses(conn, LIMITS) == ()
    assert await lift_pauses(conn, LIMITS, actor="operator", tool=None, target=None) == ()
