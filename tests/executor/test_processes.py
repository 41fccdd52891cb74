"""The executor as a process: who may connect, how it starts with a bad fence, and a crash
between the claim and the outcome. Each test starts its own executor (its own home)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from services.lab.server import LabHandle, run_lab
from shared.errors import Code
from shared.store.approvals import execution_for_approval, proposal_state
from shared.wire.client import CallError, request
from shared.wire.executor import Health, HealthReport
from shared.wire.protocol import ErrorReply
from tests.executor.harness import IDLE, TIMEOUT, Harness
from tests.support import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")
REBOOT = ("batch_reboot", {"device_ids": [IDLE]})


async def test_a_connection_from_a_uid_off_the_allowlist_is_refused_and_audited(
    lab: LabHandle, tmp_path: Path
) -> None:
    harness = await Harness.start(lab, tmp_path / "home", FLEETWATCH_EXECUTOR_UIDS=str(os.getuid() + 1))
    try:
        for _ in range(2):
            reply = await request(harness.executor.socket, Health(), HealthReport, timeout_seconds=TIMEOUT)
            assert isinstance(reply, ErrorReply) and reply.code == Code.PEER_NOT_ALLOWED

        # One row per refused connection, written after the answer; the readiness probe of
        # tests.procs may add one more, so two requests make at least two rows.
        async def two_rows() -> list | None:
            rows = await harness.audit()
            return rows if len(rows) >= 2 else None

        rows = await wait_until(two_rows, what="two refusal rows", seconds=TIMEOUT)
        assert rows and {r["kind"] for r in rows} == {"refusal"}
        assert all('"code":"peer_not_allowed"' in r["detail_json"] for r in rows)
        assert all(f'"uid":{os.getuid()}' in r["detail_json"] for r in rows)
        assert lab.writes() == []
    finally:
        await harness.close()


async def test_a_peer_in_a_group_of_executor_gids_is_admitted_and_a_peer_in_none_is_refused(
    lab: LabHandle, tmp_path: Path
) -> None:
    other_uid, own_gid = str(os.getuid() + 1), os.getgid()
    admitted = await Harness.start(
        lab, tmp_path / "by-group", FLEETWATCH_EXECUTOR_UIDS=other_uid, FLEETWATCH_EXECUTOR_GIDS=str(own_gid)
    )
    try:
        health = await request(admitted.executor.socket, Health(), HealthReport, timeout_seconds=TIMEOUT)
        assert isinstance(health, HealthReport), health
    finally:
        await admitted.close()
    refused = await Harness.start(
        lab,
        tmp_path / "other-group",
        FLEETWATCH_EXECUTOR_UIDS=other_uid,
        FLEETWATCH_EXECUTOR_GIDS=str(own_gid + 4242),
    )
    try:
        reply = await request(refused.executor.socket, Health(), HealthReport, timeout_seconds=TIMEOUT)
        assert isinstance(reply, ErrorReply) and reply.code == Code.PEER_NOT_ALLOWED

        async def refusal_row() -> bool:
            return any('"peer_not_allowed"' in r["detail_json"] for r in await refused.audit())

        await wait_until(refusal_row, what="a refusal row", seconds=TIMEOUT)
    finally:
        await refused.close()


async def test_without_a_fence_nothing_is_prepared_or_listed_as_writable(
    lab: LabHandle, tmp_path: Path
) -> None:
    harness = await Harness.start(
        lab, tmp_path / "home", FLEETWATCH_WRITE_DEVICE_IDS="", FLEETWATCH_WRITE_TEAM_ID=""
    )
    try:
        assert not (await harness.health()).fence_configured
        reply = await harness.prepare(*REBOOT)
        assert isinstance(reply, ErrorReply) and reply.code == Code.FENCE_NOT_CONFIGURED
        listed = await harness.list_writable()
        assert isinstance(listed, ErrorReply) and listed.code == Code.FENCE_NOT_CONFIGURED
        assert await harness.executor.stop() == 0  # SIGTERM: a clean stop
        assert not harness.executor.socket.exists()
    finally:
        await harness.close()


async def test_a_sign_in_to_another_team_than_the_fence_names_is_refused(
    lab: LabHandle, tmp_path: Path
) -> None:
    harness = await Harness.start(
        lab,
        tmp_path / "home",
        FLEETWATCH_WRITE_DEVICE_IDS="",
        FLEETWATCH_WRITE_TEAM_ID=lab.teams["normal"].team_id,
    )
    try:
        reply = await harness.prepare(*REBOOT)
        assert isinstance(reply, ErrorReply) and reply.code == Code.TEAM_MISMATCH
        listed = await harness.list_writable()
        assert isinstance(listed, ErrorReply) and listed.code == Code.TEAM_MISMATCH
    finally:
        await harness.close()


async def test_an_executor_killed_between_claim_and_outcome_restarts_into_unknown(tmp_path: Path) -> None:
    async with run_lab("campus") as lab:
        harness = await Harness.start(lab, tmp_path / "home", "--call-timeout", "20")
        try:
            proposal_id, approval_id = await harness.proposed_and_approved(*REBOOT)
            lab.set_fault("batch_reboot", "latency", seconds=5, count=1)
            execute = asyncio.create_task(harness.execute(approval_id))
            # The write reached the lab when its one-shot fault is taken (it sleeps in it).
            await wait_until(
                lambda: not lab.lab.faults.listing(), what="the write reaching the lab", seconds=TIMEOUT
            )
            execution = await execution_for_approval(harness.conn, approval_id)
            assert execution is not None and execution.outcome == "running"
            await harness.executor.kill()
            with pytest.raises(CallError) as lost:
                await execute
            assert lost.value.code == Code.SERVICE_NO_ANSWER
            await harness.restart()
            execution = await execution_for_approval(harness.conn, approval_id)
            assert execution is not None and execution.outcome == "unknown"
            state = await proposal_state(harness.conn, proposal_id)
            assert state is not None and (state.status, state.outcome) == ("executed", "unknown")
            again = await harness.execute(approval_id)  # a new key: the seal no longer verifies
            assert (again.outcome, again.refusal_code) == ("refused", Code.SEAL_INVALID)
            assert len(lab.writes()) <= 1
            outcomes = [r for r in await harness.audit() if r["kind"] == "outcome"]
            assert len(outcomes) == 1 and '"recovered":true' in outcomes[0]["detail_json"]
        finally:
            await harness.close()
