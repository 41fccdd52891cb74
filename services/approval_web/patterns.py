"""The approvers' report: how each person decided, read from the audit (issue 33).

Pure over audit rows (`approver_lines`), plus the one read of the rows it needs
(`approver_report`). A person is a uid: the page's rows name the page session, and the
session's ``session_start`` row names the uid that signed it in (an approval row names it too);
a ``fleetwatch deny`` names its peer as ``<role>:<uid>``.

Per person, over the report's days:

- ``seen``: proposals the person acted on (approved, gave a first approval, denied, or pressed
  Approve and was refused). The page writes nothing when it shows a card, so a card looked at
  and left is not in the audit and not counted.
- ``approved`` (first approvals of two-person changes included) and ``denied``.
- ``median_seconds``: the median of whole seconds from the card shown (the signed ``shown_at``
  the approval row keeps) to Approve. A Deny carries no shown-at, so denials are not timed.
- ``fast``: approvals sooner than ``min_read_seconds`` (policy, default 3 s): "decided faster
  than the card can be read".
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

import aiosqlite

from shared.store.db import parse_db_text
from shared.wire.approval import ApproverLine, ApproverReport

MAX_DAYS = 366
"""The longest report."""
_PEER = re.compile(r":(-?\d+)$")
_DECISIONS = ("session_start", "approval", "first_approval", "denial", "refusal")


@dataclasses.dataclass
class _Person:
    proposals: set[str] = dataclasses.field(default_factory=set)
    approved: int = 0
    denied: int = 0
    seconds: list[int] = dataclasses.field(default_factory=list)
    fast: int = 0


def _seconds(shown_at: object, at: str) -> int | None:
    if not isinstance(shown_at, str):
        return None
    try:
        return int((parse_db_text(at) - parse_db_text(shown_at)).total_seconds() // 1)
    except ValueError:
        return None


def approver_lines(rows: Iterable[Mapping[str, Any]], *, threshold_seconds: int) -> tuple[ApproverLine, ...]:
    """The per-person lines of `rows` (audit rows oldest first: ``at``, ``actor``, ``kind``,
    ``proposal_id``, ``detail`` a dict), most approvals first, then by uid."""
    sessions: dict[str, int] = {}
    people: dict[int, _Person] = {}
    for row in rows:
        detail, kind = row["detail"], row["kind"]
        session = detail.get("session_id")
        if kind == "session_start" and isinstance(session, str) and isinstance(detail.get("uid"), int):
            sessions[session] = detail["uid"]
            continue
        uid = _uid_of(row, sessions)
        if uid is None:
            continue
        person = people.setdefault(uid, _Person())
        if kind in ("approval", "first_approval"):
            person.approved += 1
            took = _seconds(detail.get("shown_at"), row["at"])
            if took is not None:
                person.seconds.append(max(took, 0))
                person.fast += took < threshold_seconds
        elif kind == "denial":
            person.denied += 1
        elif not (kind == "refusal" and detail.get("operation") == "approve"):
            continue
        if row["proposal_id"]:
            person.proposals.add(row["proposal_id"])
    lines = [
        ApproverLine(
            uid=uid,
            seen=len(p.proposals),
            approved=p.approved,
            denied=p.denied,
            median_seconds=int(statistics.median(p.seconds)) if p.seconds else None,
            fast=p.fast,
        )
        for uid, p in people.items()
        if p.proposals or p.approved or p.denied
    ]
    return tuple(sorted(lines, key=lambda line: (-line.approved, line.uid)))


def _uid_of(row: Mapping[str, Any], sessions: Mapping[str, int]) -> int | None:
    """The person behind a decision row: its own ``uid``, its page session's, or the uid at the
    end of a peer actor (``operator:1001``); None when the row is no person's decision."""
    detail, kind = row["detail"], row["kind"]
    if kind not in _DECISIONS[1:]:
        return None
    if kind == "refusal" and detail.get("operation") != "approve":
        return None
    uid = detail.get("uid")
    if isinstance(uid, int) and uid >= 0:
        return uid
    actor = str(row["actor"])
    session = detail.get("session_id")
    if not isinstance(session, str) and actor.startswith("page "):
        session = actor.removeprefix("page ")
    if isinstance(session, str) and session in sessions:
        return sessions[session]
    peer = _PEER.search(actor)
    return int(peer.group(1)) if peer and kind == "denial" else None


async def approver_report(conn: aiosqlite.Connection, *, days: int, threshold_seconds: int) -> ApproverReport:
    """The report over the last `days` days of the audit (database clock). Reads only."""
    # A session that signed in up to a day before the window still names the uid of its rows.
    sql = (
        "SELECT at, actor, kind, proposal_id, detail_json FROM audit"
        " WHERE (at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) AND kind IN (?, ?, ?, ?))"
        " OR (at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) AND kind = ?) ORDER BY seq"
    )
    rows = []
    params = (f"-{int(days)} days", *_DECISIONS[1:], f"-{int(days) + 1} days", _DECISIONS[0])
    async with conn.execute(sql, params) as cursor:
        async for row in cursor:
            try:
                detail = json.loads(row["detail_json"])
            except ValueError:
                continue
            if isinstance(detail, dict):
                rows.append({**dict(row), "detail": detail})
    lines = approver_lines(rows, threshold_seconds=threshold_seconds)
    return ApproverReport(days=days, threshold_seconds=threshold_seconds, people=lines)
