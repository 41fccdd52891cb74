"""``python -m services.approval_web --after-executor`` (how ``fleetwatch up`` starts it, beside
the executor's process): after its imports, settings and policy it waits for executor.sock to
answer, and until then opens nothing: no approval.sock, no page, no page secret, no store."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from services.approval_web import ApprovalWebError
from services.approval_web.__main__ import wait_for_executor
from shared.config import load_settings
from shared.errors import Code
from shared.wire.approval import ApprovalClient, GetStatus
from tests.procs import base_env, running_service
from tests.support import READY_SECONDS, wait_for_socket, wait_until


async def test_it_opens_nothing_until_the_executor_answers_then_serves(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home", FLEETWATCH_WRITE_DEVICE_IDS="29088800001")
    settings = load_settings(env)
    log = tmp_path / "approval_web.log"
    with log.open("ab") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "services.approval_web",
            "--after-executor",
            env=env,
            stdout=sink,
            stderr=sink,
        )
    try:
        await wait_until(
            lambda: "waiting for the executor" in log.read_text(),
            what="approval_web waiting for the executor",
            seconds=READY_SECONDS,
            process=process,
            log=log,
        )
        # it printed that line right before its wait: whatever it opens comes after the wait
        assert process.returncode is None
        assert not settings.approval_socket.exists()
        assert not settings.approve_secret_file.exists()
        assert not settings.db.exists()
        async with running_service("services.executor", env):
            await wait_for_socket(process, settings.approval_socket, log)
            status = await ApprovalClient(settings.approval_socket).call(GetStatus())
            assert status.executor_up
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


def test_the_wait_is_bounded_and_says_the_executor_did_not_answer(tmp_path: Path) -> None:
    with pytest.raises(ApprovalWebError) as caught:
        wait_for_executor(tmp_path / "executor.sock", seconds=0.05)
    assert caught.value.code == Code.SERVICE_UNAVAILABLE
