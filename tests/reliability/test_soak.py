"""A few unpaced cycles of the soak (`tests.reliability.soak`) under real supervisord: every
kind of traffic answers (the watch's heartbeat too), nothing is locked, no audit row is lost,
no service restarts.
``bench/reliability.py --soak MINUTES`` runs the same mix paced for minutes."""

from __future__ import annotations

import pytest

from tests.reliability.fleet import Fleet
from tests.reliability.soak import soak

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_short_soak_loses_nothing_and_locks_nothing(fleet: Fleet) -> None:
    report = await soak(fleet, cycles=2)
    assert report.cycles == 2
    assert report.lock_errors == 0 and report.lost_audit_rows == 0 and report.audit_ok
    assert report.restarts == 0, (report.restarted, report.outcomes)
    assert report.outcomes["propose"] >= 2
    assert report.outcomes["beat:read"] == 2 and report.outcomes["watch_status:alive"] == 2
    assert report.beats >= 2 and report.beats_read == report.beats
    assert report.outcomes["approve:303"] == 1  # the page answers Approve with its outcome page
    assert all(len(u.samples) == 3 for u in report.usage.values())
