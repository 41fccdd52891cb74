"""Epiphan's per-call limit (at most 100 device IDs in one per-device read) on every executor
path, with a sandbox team of 250 devices and the team-ID fence alone (no allowlist): ListWritable,
Prepare, Inspect and Execute all read through the one batching client, and the lab (which refuses
a call with more than 100 IDs) refuses nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
import pytest
import pytest_asyncio

from services.lab.scenario import TeamsSpec, generate_fleet, load_scenario
from services.lab.server import LabHandle, run_lab
from shared.wire.executor import ExecutionReport, Inspection, WritableDevices
from tests.executor.harness import Harness

pytestmark = pytest.mark.asyncio(loop_scope="module")
SANDBOX_SIZE = 250


def big_sandbox():
    campus = load_scenario("campus")
    sandbox = generate_fleet(SANDBOX_SIZE, seed=16).teams.normal
    return msgspec.structs.replace(campus, teams=TeamsSpec(normal=campus.teams.normal, sandbox=sandbox))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab(big_sandbox()) as handle:
        yield handle


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(lab: LabHandle, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    started = await Harness.start(lab, tmp_path_factory.mktemp("batching"), FLEETWATCH_WRITE_DEVICE_IDS="")
    yield started
    await started.close()


def refused(lab: LabHandle) -> list[dict]:
    return [r for r in lab.rejected() if r["tool"] != "batch_recording"]


def idle_device(lab: LabHandle, *, last: bool) -> str:
    ids = list(lab.teams["sandbox"].device_ids)
    for device_id in reversed(ids) if last else ids:
        device = lab.state.devices[device_id]
        if device.online and not any(c.recording for c in device.channels):
            if not any(e.device_id == device_id for e in lab.state.events.values()):
                return device_id
    raise AssertionError("no idle sandbox device without an event")


async def test_list_writable_lists_all_250_sandbox_devices_in_calls_of_at_most_100(harness):
    reply = await harness.list_writable()
    assert isinstance(reply, WritableDevices), reply
    assert len(reply.devices) == SANDBOX_SIZE
    recording = {d.device_id for d in reply.devices if any(c.recording for c in d.channels)}
    truth = {
        d
        for d in harness.lab.teams["sandbox"].device_ids
        if any(c.recording for c in harness.lab.state.devices[d].channels)
    }
    assert recording == truth
    assert refused(harness.lab) == []


async def test_prepare_inspect_and_execute_work_on_a_250_device_sandbox(harness):
    target = idle_device(harness.lab, last=True)
    proposal_id, approval_id = await harness.proposed_and_approved(
        "batch_recording", {"action": "start", "device_ids": [f"{target}-1"]}
    )
    inspection = await harness.inspect(proposal_id)
    assert isinstance(inspection, Inspection) and inspection.complete, inspection
    report = await harness.execute(approval_id)
    assert isinstance(report, ExecutionReport) and report.outcome == "ok", report
    assert [w["tool"] for w in harness.lab.writes()] == ["batch_recording"]
    assert refused(harness.lab) == []
