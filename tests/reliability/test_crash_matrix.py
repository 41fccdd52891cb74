"""A slice of the crash matrix (`tests.reliability.crash`) under real supervisord: each service
killed at a step where its death matters most (the executor at two: before and after its write). ``bench/reliability.py`` runs every cell
(3 services × 9 steps) through the same `run_cell`."""

from __future__ import annotations

import pytest

from tests.reliability.crash import run_cell
from tests.reliability.fleet import Fleet

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize(
    ("service", "step", "outcome", "writes"),
    [
        ("executor", "claim", "executed/unknown", 0),
        ("executor", "outcome", "executed/unknown", 1),
        ("approval_web", "consume", "executed/ok/verified", 1),
        ("assistant", "prepare", "executed/ok/verified", 1),
    ],
)
async def test_a_service_killed_at_a_step_restarts_and_the_job_ends_final_with_at_most_one_write(
    fleet: Fleet, service: str, step: str, outcome: str, writes: int
) -> None:
    result = await run_cell(fleet, service, step)
    assert result.ok, result.problems
    assert (result.outcome, result.writes) == (outcome, writes)
