"""Limits against approval fatigue (DESIGN §7, seed 003 "Limits"): counts read by SQL, decided
by pure functions.

The three limits, checked in this order by `check_limits`:

- **queue** (``queue_full``): at most ``max_pending`` proposals pending at once. A proposal
  past its ``expires_at`` is not counted even before the expiry task marks it.
- **hourly cap** (``hourly_cap_reached``): at most ``per_hour`` proposals created in the last
  3600 s. A proposal a person denied does not count; pending, expired (unreviewed), approved
  and executed ones do.
- **denial pause** (``denial_pause``): when ``denials_before_pause`` (N) proposals of the same
  tool naming the same target (a master ID, from ``proposal_targets``) were denied within
  ``denial_window_minutes`` of each other, that tool may not be proposed for that target for
  ``denial_pause_minutes`` counted from the N-th of those denials (the one that made the
  count), not from the first. Other targets, and other tools on the same target, are not
  paused. An operator's lift (``fleetwatch resume --denials``, a row in ``denial_lifts``)
  makes every denial of that tool on that target decided at or before it count no more.

Every time here is the database clock's (``YYYY-MM-DDTHH:MM:SS.SSSZ`` UTC, text order is time
order): windows are computed in SQL from ``proposals.created_at`` / ``decided_at``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import aiosqlite

from services.approval_web import ApprovalWebError
from shared.errors import Code
from shared.policy.loader import Limits
from shared.store.db import append_audit, db_now, db_text, parse_db_text, write_tx
from shared.text.display import visible
from shared.wire.approval import DenialPause


class LimitReached(ApprovalWebError):
    """A limit refuses a new proposal: ``queue_full``, ``hourly_cap_reached`` or ``denial_pause``."""


@dataclass(frozen=True, slots=True)
class TargetDenials:
    """Denials of one tool on one target that may still pause it.

    Attributes:
        target: the master ID.
        count: denials decided in the last ``denial_window_minutes + denial_pause_minutes``
            and after the last lift (the only ones that can make a pause still running).
        pause_until: when the latest pause those denials make ends (`pause_end`), or None
            when they make none.
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


def pause_end(decided_at: Sequence[str], limits: Limits) -> str | None:
    """When the latest denial pause made by these denials ends, or None when they make none.

    Each denial that completes ``denials_before_pause`` (N) denials within
    ``denial_window_minutes`` (itself and the N-1 before it) starts a pause of
    ``denial_pause_minutes`` from its own time; the latest such end is returned.

    Args:
        decided_at: the denials' ``decided_at`` (database-clock text), any order.
        limits: N, the window and the pause.
    """
    times = sorted(parse_db_text(t) for t in decided_at)
    n = limits.denials_before_pause
    window = timedelta(minutes=limits.denial_window_minutes)
    ends = [
        times[i] + timedelta(minutes=limits.denial_pause_minutes)
        for i in range(n - 1, len(times))
        if times[i] - times[i - n + 1] <= window
    ]
    return db_text(max(ends)) if ends else None


def target_denials(target: str, decided_at: Sequence[str], limits: Limits) -> TargetDenials:
    """Summarise one target's denials that may still pause it (see `pause_end`)."""
    return TargetDenials(target=target, count=len(decided_at), pause_until=pause_end(decided_at, limits))


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
SELECT p.tool, t.master_id, p.decided_at
FROM proposals AS p JOIN proposal_targets AS t ON t.proposal_id = p.id
WHERE p.status = 'denied' AND p.decided_at IS NOT NULL
  AND p.decided_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', :reach)
  AND p.decided_at > coalesce(
      (SELECT l.lifted_at FROM denial_lifts AS l WHERE l.tool = p.tool AND l.master_id = t.master_id), '')
  AND (:tool IS NULL OR p.tool = :tool)
  AND (:targets IS NULL OR t.master_id IN (SELECT value FROM json_each(:targets)))
ORDER BY p.tool, t.master_id, p.decided_at
"""


def _reach(limits: Limits) -> str:
    """How far back a denial can still make a running pause: the window plus the pause."""
    return f"-{int(limits.denial_window_minutes) + int(limits.denial_pause_minutes)} minutes"


async def _denials(
    conn: aiosqlite.Connection, limits: Limits, *, tool: str | None, targets: Sequence[str] | None
) -> dict[tuple[str, str], list[str]]:
    params = {
        "reach": _reach(limits),
        "tool": tool,
        "targets": None if targets is None else json.dumps(list(targets)),
    }
    groups: dict[tuple[str, str], list[str]] = {}
    async with conn.execute(_DENIALS_SQL, params) as cursor:
        async for row in cursor:
            groups.setdefault((row[0], row[1]), []).append(row[2])
    return groups


async def read_denials(
    conn: aiosqlite.Connection, *, tool: str, targets: Sequence[str], limits: Limits
) -> tuple[TargetDenials, ...]:
    """For each of `targets` (master IDs), its denials of `tool` that may still pause it."""
    if not targets:
        return ()
    groups = await _denials(conn, limits, tool=tool, targets=targets)
    return tuple(target_denials(t, groups.get((tool, t), []), limits) for t in targets)


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


_NAME_SQL = """
SELECT name FROM proposal_targets AS t JOIN proposals AS p ON p.id = t.proposal_id
WHERE t.master_id = ? AND t.name IS NOT NULL ORDER BY p.created_at DESC LIMIT 1
"""


async def target_name(conn: aiosqlite.Connection, master_id: str) -> str:
    """The room's name as last read at a proposal's Prepare (display text), or ``""``."""
    async with conn.execute(_NAME_SQL, (master_id,)) as cursor:
        row = await cursor.fetchone()
    return str(row[0]) if row is not None else ""


async def active_pauses(
    conn: aiosqlite.Connection, limits: Limits, *, tool: str | None = None, target: str | None = None
) -> tuple[DenialPause, ...]:
    """Every tool and target paused right now (for ``status``, ``doctor`` and the page), sorted
    by tool then target; only `tool` / `target` (a master ID) when given."""
    groups = await _denials(conn, limits, tool=tool, targets=None if target is None else [target])
    now = await db_now(conn)
    pauses = []
    for (paused_tool, master), decided in sorted(groups.items()):
        until = pause_end(decided, limits)
        if until is not None and until > now:
            pauses.append(
                DenialPause(
                    tool=paused_tool,
                    target=master,
                    until=until,
                    target_name=await target_name(conn, master),
                    denials=len(decided),
                )
            )
    return tuple(pauses)


async def lift_pauses(
    conn: aiosqlite.Connection, limits: Limits, *, actor: str, tool: str | None, target: str | None
) -> tuple[DenialPause, ...]:
    """Lift the denial pauses running now (all, or only `tool` on `target`): one
    ``denial_lift`` audit row each, naming the tool, the target, its name and until when it
    would have run, in one transaction; the pauses lifted (none: nothing written).

    Raises:
        StoreError: ``store_busy``.
    """
    async with write_tx(conn):
        pauses = await active_pauses(conn, limits, tool=tool, target=target)
        now = await db_now(conn)
        for pause in pauses:
            await conn.execute(
                "INSERT INTO denial_lifts (tool, master_id, lifted_at, actor) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (tool, master_id) DO UPDATE SET lifted_at = excluded.lifted_at,"
                " actor = excluded.actor",
                (pause.tool, pause.target, now, actor),
            )
            await append_audit(
                conn,
                actor=actor,
                kind="denial_lift",
                detail={
                    "tool": pause.tool,
                    "target": pause.target,
                    "target_name": visible(pause.target_name, 80),
                    "until": pause.until,
                    "denials": pause.denials,
                },
            )
    return pauses
