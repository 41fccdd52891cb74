"""The approvers' report on a seeded audit: per person, proposals acted on, approved, denied,
the median seconds from card shown to Approve, and approvals under the reading threshold."""

from __future__ import annotations

from typing import Any

import aiosqlite

from services.approval_web.patterns import approver_lines, approver_report
from shared.store.approvals import deny
from shared.store.db import append_audit
from tests.shared.store.approval_helpers import add_proposal, approve_as, conn

__all__ = ["conn"]  # the fixture

ALICE, BOB = 1001, 1002


def row(
    kind: str, at: str, proposal: str | None = None, actor: str = "approval_web", **detail: Any
) -> dict[str, Any]:
    return {"kind": kind, "at": at, "proposal_id": proposal, "actor": actor, "detail": detail}


def t(seconds: float) -> str:
    whole, part = divmod(int(seconds * 1000), 1000)
    return f"2026-03-02T10:{whole // 60:02d}:{whole % 60:02d}.{part:03d}Z"


SEEDED = [
    row("session_start", t(0), session_id="sa", uid=ALICE),
    row("session_start", t(1), session_id="sb", uid=BOB),
    # Alice approves p1 after 1.5 s (fast), p2 after 20 s, gives a first approval on p3 after 9 s.
    row("approval", t(11.5), "p1", session_id="sa", shown_at=t(10), uid=ALICE),
    row("approval", t(40), "p2", session_id="sa", shown_at=t(20)),  # an older row: no uid, its session's
    row("first_approval", t(59), "p3", session_id="sa", uid=ALICE, shown_at=t(50)),
    # Bob denies p3 on the page and p4 from the command line; his Approve of p5 was refused.
    row("denial", t(70), "p3", actor="page sb"),
    row("denial", t(80), "p4", actor="operator:1002"),
    row("refusal", t(90), "p5", operation="approve", code="approval_expired", session_id="sb", uid=BOB),
    # Not a person's decision: an expiry, the executor's refusal.
    row("expiry", t(95), "p6", reason="undecided"),
    row("refusal", t(96), "p7", actor="executor", operation="execute", code="kill_switch_on"),
]


def test_the_report_on_a_seeded_audit_counts_each_person_and_flags_the_fast_approvals() -> None:
    alice, bob = approver_lines(SEEDED, threshold_seconds=3)
    assert (alice.uid, alice.seen, alice.approved, alice.denied, alice.fast) == (ALICE, 3, 3, 0, 1)
    assert alice.median_seconds == 9  # of 1, 20 and 9 seconds
    assert (bob.uid, bob.seen, bob.approved, bob.denied, bob.median_seconds, bob.fast) == (
        BOB,
        3,
        0,
        2,
        None,
        0,
    )


def test_a_higher_threshold_flags_more() -> None:
    alice, _ = approver_lines(SEEDED, threshold_seconds=10)
    assert alice.fast == 2


async def test_the_report_reads_the_store_the_page_wrote(conn: aiosqlite.Connection) -> None:
    for session, uid in (("sa", ALICE), ("sb", BOB)):
        await conn.execute("INSERT INTO sessions (id) VALUES (?)", (session,))
        await conn.commit()
        await append_audit(
            conn, actor="approval_web", kind="session_start", detail={"session_id": session, "uid": uid}
        )
    await approve_as(conn, await add_proposal(conn), ALICE, session="sa")
    await deny(conn, await add_proposal(conn), actor="page sb")
    report = await approver_report(conn, days=7, threshold_seconds=3)
    by_uid = {line.uid: line for line in report.people}
    assert (by_uid[ALICE].approved, by_uid[ALICE].fast) == (1, 1)  # approved at once: under 3 s
    assert by_uid[BOB].denied == 1 and report.threshold_seconds == 3
