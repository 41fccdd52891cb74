"""Limits against approval fatigue (DESIGN §7, seed 003 "Limits"): counts read by SQL, decided
by pure functions.

The three limits, checked in this order by `check_limits`:

- **queue** (``queue_full``): at most ``max_pending`` proposals pending at once. A proposal
  past its ``expires_at`` is not counted even before the expiry task marks it.
- **hourly cap** (``hourly_cap_reached``): at most ``per_hour`` proposals created in the last
  3600 s. A proposal a person denied does not count; pending, expired (unreviewed), approved
  and executed ones do.
- **denial pause** (``denial_pause``): when ``denials_before_pause`` proposals of the same tool
  naming the same target (a master ID, from ``proposal_targets``) were denied within the last
  ``denial_pause_minutes``, that tool may not be proposed for that target until
  ``denial_pause_minutes`` after the N-th most recent of those denials. Other targets, and
  other tools on the same target, are not paused.

Every time here is the database clock's (``YYYY-MM-DDTHH:MM:SS.SSSZ`` UTC, text order is time
order): windows are computed in SQL from ``proposals.created_at`` / ``decided_at``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from services.approval_web import ApprovalWebError
from shared.errors import Code
from shared.policy.loader import Limits
from shared.store.db import db_now
from shared.wire.approval import DenialPause


class LimitReached(ApprovalWebError):
    """A limit refuses a new proposal: ``queue_full``, ``hourly_cap_reached`` or ``denial_pause``."""


@dataclass(frozen=True, slots=True)
class TargetDenials:
    """Denials of one tool on one target inside the pause window.

    Attributes:
        target: the master ID.
        count: denials with ``decided_at`` in the last ``denial_pause_minutes``.
        pause_until: ``decided_at`` of the N-th most recent of them plus the pause, or None
            when there are fewer than N (N = ``denials_before_pause``).
    """

    target: str
    count: int
    pause_until: str | None


@dataclass(frozen=True, slots=True)
class LimitCounts:
    """What the limits judge, read at `now` (the database clock).

    Attributes:
        now: when the counts were read.
        pending: proposals pending and not past ``expires_at``.
        last_hour: proposals created in the last hour, denied ones excluded.
        denials: per target of the new proposal, its recent denials for the same tool.
    """

    now: str
    pending: int
    last_hour: int
    denials: tuple[TargetDenials, ...] = ()


# --- pure decisions --------------------------------------------------------------------------


def check_limits(counts: LimitCounts, limits: Limits, *, tool: str) -> None:
    """Refuse a new proposal of `tool` when a limit is reached; see the module doc for order.

    Raises:
        LimitReached: ``queue_full``, ``hourly_cap_reached`` or ``denial_pause`` (the message
            names the counts, the cap and, for a pause, the target and when it lifts).
    """
    if counts.pending >= limits.max_pending:
        raise LimitReached(
            Code.QUEUE_FULL,
            f"{counts.pending} proposals are already waiting for a person (at most {limits.max_pending}); "
            "approve or deny one on the page first",
        )
    if counts.last_hour >= limits.per_hour:
        raise LimitReached(
            Code.HOURLY_CAP_REACHED,
            f"{counts.last_hour} proposals in the last hour (at most {limits.per_hour}; denied ones "
            "do not count); try again later",
        )
    for denials in counts.denials:
        if denials.pause_until is not None and denials.pause_until > counts.now:
            raise LimitReached(
                Code.DENIAL_PAUSE,
                f"{tool} on {denials.target} was denied {denials.count} times recently; "
                f"no such proposal until {denials.pause_until} (UTC)",
            )


def target_denials(
    target: str, decided_at_desc: Sequence[tuple[str, str]], denials_before_pause: int
) -> TargetDenials:
    """Summarise one target's recent denials.

    Args:
        target: the master ID.
        decided_at_desc: ``(decided_at, decided_at + pause)`` per denial in the window, most
            recent first.
        denials_before_pause: N.
    """
    count = len(decided_at_desc)
    until = decided_at_desc[denials_before_pause - 1][1] if count >= denials_before_pause else None
    return TargetDenials(target=target, count=count, pause_until=until)


# --- SQL -------------------------------------------------------------------------------------


async def _count(conn: aiosqlite.Connection, sql: str) -> int:
    async with conn.execute(sql) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


_PENDING_SQL = """
SELECT count(*) FROM proposals
WHERE status = 'pending' AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
"""
_LAST_HOUR_SQL = """
SELECT count(*) FROM proposals
WHERE status != 'denied' AND created_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3600 seconds')
"""


async def count_pending(conn: aiosqlite.Connection) -> int:
    """Proposals pending and not past their ``expires_at`` (database clock)."""
    return await _count(conn, _PENDING_SQL)


async def count_last_hour(conn: aiosqlite.Connection) -> int:
    """Proposals created in the last hour (database clock), denied ones excluded."""
    return await _count(conn, _LAST_HOUR_SQL)


_DENIALS_SQL = """
SELECT t.master_id, p.decided_at, strftime('%Y-%m-%dT%H:%M:%fZ', p.decided_at, ?) AS lifts
FROM proposals AS p JOIN proposal_targets AS t ON t.proposal_id = p.id
WHERE p.tool = ? AND p.status = 'denied' AND p.decided_at IS NOT NULL
  AND p.decided_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)
  AND t.master_id IN (SELECT value FROM json_each(?))
ORDER BY p.decided_at DESC
"""


async def read_denials(
    conn: aiosqlite.Connection, *, tool: str, targets: Sequence[str], limits: Limits
) -> tuple[TargetDenials, ...]:
    """For each of `targets` (master IDs), the denials of `tool` on it inside the pause window."""
    if not targets:
        return ()
    window = f"-{int(limits.denial_pause_minutes)} minutes"
    lifts = f"+{int(limits.denial_pause_minutes)} minutes"
    per_target: dict[str, list[tuple[str, str]]] = {t: [] for t in targets}
    async with conn.execute(_DENIALS_SQL, (lifts, tool, window, json.dumps(list(targets)))) as cursor:
        async for row in cursor:
            per_target[row[0]].append((row[1], row[2]))
    return tuple(target_denials(t, rows, limits.denials_before_pause) for t, rows in per_target.items())


async def read_counts(
    conn: aiosqlite.Connection, *, tool: str, targets: Sequence[str], limits: Limits
) -> LimitCounts:
    """Everything `check_limits` needs for a new proposal of `tool` on `targets` (master IDs)."""
    return LimitCounts(
        now=await db_now(conn),
        pending=await count_pending(conn),
        last_hour=await count_last_hour(conn),
        denials=await read_denials(conn, tool=tool, targets=targets, limits=limits),
    )


_PAUSES_SQL = """
SELECT p.tool, t.master_id, p.decided_at, strftime('%Y-%m-%dT%H:%M:%fZ', p.decided_at, ?) AS lifts
FROM proposals AS p JOIN proposal_targets AS t ON t.proposal_id = p.id
WHERE p.status = 'denied' AND p.decided_at IS NOT NULL
  AND p.decided_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)
ORDER BY p.tool, t.master_id, p.decided_at DESC
"""


async def active_pauses(conn: aiosqlite.Connection, limits: Limits) -> tuple[DenialPause, ...]:
    """Every tool and target paused right now (for ``status`` and the page), sorted."""
    window = f"-{int(limits.denial_pause_minutes)} minutes"
    lifts = f"+{int(limits.denial_pause_minutes)} minutes"
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    async with conn.execute(_PAUSES_SQL, (lifts, window)) as cursor:
        async for row in cursor:
            groups.setdefault((row[0], row[1]), []).append((row[2], row[3]))
    now = await db_now(conn)
    pauses = []
    for (tool, target), rows in sorted(groups.items()):
        summary = target_denials(target, rows, limits.denials_before_pause)
        if summary.pause_until is not None and summary.pause_until > now:
            pauses.append(DenialPause(tool=tool, target=target, until=summary.pause_until))
    return tuple(pauses)
