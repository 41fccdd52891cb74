"""Fixtures for the watch's tests: the campus lab on a frozen clock (13:00 UTC, outside the
shipped quiet hours), its guarded read client, a watch store in the test's folder, a recording
destination and a `Watch` factory whose clock is the lab's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from services.assistant.watch.destinations import Outbox
from services.assistant.watch.heartbeat import Watch, WatchOptions
from services.assistant.watch.store import WatchStore
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.policy.loader import Policy, load_policies
from tests.assistant.watch.helpers import NOW, Recorder


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus", clock=LabClock(NOW, frozen=True)) as handle:
        yield handle


@pytest.fixture
def policy() -> Policy:
    return load_policies(REPO_POLICY_DIR)[0]


@pytest.fixture
async def reader(lab: LabHandle) -> AsyncIterator[EpiphanReadClient]:
    tools = load_policies(REPO_POLICY_DIR)[1]
    client = EpiphanReadClient(McpConnection(lab.mcp_url, lab.teams["normal"].token), tools.read_tools)
    async with client:
        yield client


@pytest.fixture
def recorder() -> Recorder:
    """Records every post; named ``console`` so it also gets console-only ones."""
    return Recorder(name="console")


@pytest.fixture
async def make_watch(
    lab: LabHandle, reader: EpiphanReadClient, policy: Policy, recorder: Recorder, tmp_path: Path
) -> AsyncIterator[Callable[..., Any]]:
    """``await make_watch(**changes)``: a loaded `Watch` on the lab, posting to `recorder`
    (``destinations=``, ``policy=``, ``options=``, ``proposals=``, ``store_path=`` change it)."""
    async with AsyncExitStack() as stack:

        async def make(**kw: Any) -> Watch:
            store = await WatchStore.connect(kw.pop("store_path", tmp_path / "watch.db"))
            stack.push_async_callback(store.close)
            outbox = await stack.enter_async_context(
                Outbox(kw.pop("destinations", [recorder]), timeout_seconds=kw.pop("post_timeout", 5.0))
            )
            watch = Watch(
                reader=kw.pop("reader", reader),
                store=store,
                outbox=outbox,
                proposals=kw.pop("proposals", None),
                policy=kw.pop("policy", policy),
                options=kw.pop("options", WatchOptions()),
                now=lambda: lab.now,
            )
            assert not kw, kw
            await watch.load()
            return watch

        yield make
