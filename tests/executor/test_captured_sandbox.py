"""Cards and approvals on a captured sandbox: the lab replays the committed captures of the
campus (normal and sandbox teams, ``tests/fixtures/captures/``) and the real executor prepares,
shows and runs a change there exactly as on the live lab, with no account."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.wire.executor import ExecutionReport, Inspection
from tests.executor.harness import IDLE, SANDBOX_STREAM, Harness

pytestmark = pytest.mark.asyncio(loop_scope="module")
CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab(
        "campus", capture=CAPTURES / "campus", capture_sandbox=CAPTURES / "campus-sandbox"
    ) as handle:
        yield handle


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(lab: LabHandle, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    started = await Harness.start(lab, tmp_path_factory.mktemp("captured"))
    yield started
    await started.close()


async def test_a_recording_approved_on_a_captured_sandbox_runs_once_and_is_verified(harness):
    harness.lab.reset()
    proposal_id, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}
    )
    inspection = await harness.inspect(proposal_id)
    assert isinstance(inspection, Inspection) and inspection.complete
    (target,) = inspection.targets
    assert (target.name, target.channel_name, target.online) == ("Sandbox Pearl-2", "Program", True)
    report = await harness.execute(approval_id)
    assert isinstance(report, ExecutionReport) and (report.outcome, report.verification) == ("ok", "verified")
    assert [(w["tool"], w["team"]) for w in harness.lab.writes()] == [("batch_recording", "sandbox")]


async def test_a_captured_stream_destination_shows_its_host_and_never_its_key(harness):
    harness.lab.reset()
    proposal_id = await harness.propose(
        "start_stream_endpoint", {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
    )
    inspection = await harness.inspect(proposal_id)
    assert isinstance(inspection, Inspection) and inspection.stream is not None
    assert (inspection.stream.name, inspection.stream.host) == ("Sandbox test stream", "test.example.net")
    assert "sbx_sk_" not in repr(inspection) and "redacted-secret-" not in repr(inspection)
