"""Fixtures for the assistant's tests: the campus lab on a frozen clock, the model stand-in
(the real Anthropic SDK talks to it), guarded read clients, and an `Assistant` factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import pytest

from services.assistant.budget import Budget
from services.assistant.service import Assistant
from services.lab.model_standin import StandinHandle, run_model_standin
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.policy.loader import Policy, ToolPolicy, load_policies
from tests.assistant.helpers import CountingTransport, FakeSink, model_client

START = datetime(2026, 9, 16, 13, 0, 0, tzinfo=UTC)


@pytest.fixture
def policies() -> tuple[Policy, ToolPolicy]:
    """The shipped policy (autonomy: propose)."""
    return load_policies(REPO_POLICY_DIR)


@pytest.fixture
def observe_policies(tmp_path: Path) -> tuple[Policy, ToolPolicy]:
    """The shipped policy narrowed to autonomy: observe."""
    override = tmp_path / "observe.yaml"
    override.write_text("autonomy: observe\n")
    return load_policies(REPO_POLICY_DIR, override)


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus", clock=LabClock(START, frozen=True)) as handle:
        yield handle


@pytest.fixture
async def standin() -> AsyncIterator[StandinHandle]:
    async with run_model_standin("demo") as handle:
        yield handle


@pytest.fixture
def transport() -> CountingTransport:
    return CountingTransport()


@pytest.fixture
async def reader(
    lab: LabHandle, policies: tuple[Policy, ToolPolicy], transport: CountingTransport
) -> AsyncIterator[EpiphanReadClient]:
    """A guarded read client on the lab's normal team, counting its tool calls."""
    connection = McpConnection(lab.mcp_url, lab.teams["normal"].token, transport=transport)
    async with EpiphanReadClient(connection, policies[1].model_read_tools) as client:
        yield client


@pytest.fixture
async def client(standin: StandinHandle) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """The real Anthropic SDK pointed at the stand-in (no retries), closed after the test."""
    async with model_client(standin) as sdk:
        yield sdk


MakeAssistant = Callable[..., Assistant]


@pytest.fixture
def make_assistant(
    lab: LabHandle,
    client: anthropic.AsyncAnthropic,
    reader: EpiphanReadClient,
    policies: tuple[Policy, ToolPolicy],
) -> MakeAssistant:
    """An `Assistant` on the lab (normal team) and the stand-in, with a `FakeSink` unless one
    is given. Keyword arguments override the defaults."""

    def make(**overrides: Any) -> Assistant:
        policy, tool_policy = overrides.pop("policies", policies)
        options: dict[str, Any] = {
            "reader": reader,
            "sink": FakeSink(),
            "policy": policy,
            "tool_policy": tool_policy,
            "model_client": client,
            "model": "standin-model",
            "fence_configured": True,
            "budget": Budget(),
            "now": lambda: lab.now,
        }
        options.update(overrides)
        return Assistant(**options)

    return make
