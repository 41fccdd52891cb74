"""A slice of the fault matrix (`tests.reliability.faults`): the executor and the assistant as
real processes on the lab, one fault on one of their Epiphan calls per cell, the promised
outcome checked: each fault kind at least once (latency on the executor's side only: the
assistant's read timeout is 30 s). ``bench/reliability.py`` runs every cell (each tool × each
fault)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from tests.executor.harness import Harness
from tests.reliability.faults import CALL_TIMEOUT, assistant_cell, executor_cell
from tests.reliability.services import Services

pytestmark = pytest.mark.asyncio(loop_scope="session")


@dataclass
class Sides:
    services: Services
    executor: Harness


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def sides(services: Services, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Sides]:
    """The shared services (their lab and assistant) and an executor of the matrix's own (its
    short call timeout)."""
    home = tmp_path_factory.mktemp("faults")
    harness = await Harness.start(services.lab, home / "executor", "--call-timeout", str(CALL_TIMEOUT))
    try:
        yield Sides(services, harness)
    finally:
        await harness.close()


@pytest.mark.parametrize(
    ("tool", "kind", "observed", "writes"),
    [
        ("get_devices_in_my_team", "http_500", "refused/device_list_unreadable", 0),
        ("get_recorder_status_for_devices", "latency", "refused/state_read_failed", 0),
        ("get_recorder_status_for_devices", "close_connection", "refused/state_read_failed", 0),
        ("get_current_or_next_cms_events_for_devices", "schema_drift", "refused/state_read_failed", 0),
        ("batch_recording", "drop_response", "unknown/verified", 1),
        ("batch_recording", "http_500", "unknown/contradicted", 0),
        ("get_system_status_for_devices", "auth_401", "ok/not_observed", 1),
    ],
)
async def test_a_fault_on_an_executor_call_ends_in_its_promised_outcome(
    sides: Sides, tool: str, kind: str, observed: str, writes: int
) -> None:
    cell = await executor_cell(sides.executor, sides.services.lab, tool, kind)
    assert cell.right, cell
    assert (cell.observed, cell.writes) == (observed, writes)


@pytest.mark.parametrize(
    ("tool", "kind", "observed"),
    [
        ("get_devices_in_my_team", "malformed_json", "answer/epiphan_bad_result"),
        ("get_recorder_status_for_devices", "auth_401", "answer/epiphan_auth"),
        ("get_recorder_status_for_devices", "schema_drift", "answer"),
        ("get_system_status_for_devices", "schema_drift", "answer/unread part"),
        ("get_current_or_next_cms_events_for_devices", "http_500", "answer/unread part"),
    ],
)
async def test_a_fault_on_an_assistant_read_gives_an_answer_with_a_read_code_or_the_part_unread(
    sides: Sides, tool: str, kind: str, observed: str
) -> None:
    cell = await assistant_cell(sides.services.socket("assistant"), sides.services.lab, tool, kind)
    assert cell.right, cell
    assert cell.observed == observed
