"""Fixtures of the executor's tests: one campus lab and one executor process per module.

The lab's clock follows the wall clock (the executor judges event windows on its own clock);
`harness` resets the lab, signs the sandbox in again, clears the kill switch and restores the
policy copy before each test, so tests share the processes but not their state.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.config import REPO_POLICY_DIR
from tests.executor.harness import Harness


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_harness(lab: LabHandle, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    harness = await Harness.start(lab, tmp_path_factory.mktemp("executor"), "--call-timeout", "3")
    yield harness
    await harness.close()


@pytest_asyncio.fixture(loop_scope="module")
async def harness(shared_harness: Harness) -> AsyncIterator[Harness]:
    """The module's harness with a fresh lab world, the sandbox signed in, no kill switch, and
    the policy copy as in the repository."""
    shared_harness.lab.reset()
    shared_harness.sign_in()
    if (await shared_harness.health()).kill_switch:
        await shared_harness.set_kill_switch(False)
    restore_policy(shared_harness.policy_dir)
    yield shared_harness


def restore_policy(folder: Path) -> None:
    for name in ("policy.yaml", "tool_policy.yaml"):
        shutil.copyfile(REPO_POLICY_DIR / name, folder / name)
