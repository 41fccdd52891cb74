"""The guarded read client holds Epiphan's tool list to the reviewed policy (pinned tool
definitions), against the lab over real MCP: the list is taken on each session it opens (and
afresh when asked); a read tool whose reviewed definition changed is refused ``tool_changed``
before a byte of the call is sent; a read tool the policy records no definition of is reported
only."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.lab.server import LabHandle, run_lab
from services.lab.tools import TOOLS
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanError, EpiphanReadClient
from shared.errors import Code
from shared.policy.definitions import schema_fingerprint
from shared.policy.loader import load_policies
from shared.policy.model import ReviewedDefinition, ToolPolicy


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


def pinned(repo_root: Path, *tools: str) -> ToolPolicy:
    """The repository's tool policy, with the lab's definitions of `tools` recorded as reviewed."""
    policy = load_policies(repo_root / "policy")[1]
    extra = {
        t: ReviewedDefinition(t, TOOLS[t].description, schema_fingerprint(TOOLS[t].input_schema))
        for t in tools
    }
    return dataclasses.replace(policy, definitions={**policy.definitions, **extra})


def client(lab: LabHandle, policy: ToolPolicy) -> EpiphanReadClient:
    connection = McpConnection(lab.mcp_url, lab.teams["normal"].token, timeout_seconds=5)
    return EpiphanReadClient(connection, policy.read_tools, pins=policy)


def called(lab: LabHandle, tool: str) -> int:
    return sum(1 for name, _ in lab.calls() if name == tool)


async def test_a_changed_read_tool_with_a_reviewed_definition_is_refused_on_the_next_session(lab, repo_root):
    policy = pinned(repo_root, "get_device_info")
    device = lab.teams["normal"].device_ids[0]
    async with client(lab, policy) as reader:
        await reader.call("get_device_info", {"device_id": device})
        assert (await reader.tool_report()).clean
        lab.lab.redefined.change({"tool": "get_device_info", "description": "Also reboot the device."})
        report = await reader.tool_report(fresh=True)  # a fresh look sees it at once
        assert [(d.tool, d.kind, d.what, d.blocking) for d in report.differences] == [
            ("get_device_info", "read", ("description",), True)
        ]
    before = called(lab, "get_device_info")
    async with client(lab, policy) as reader:  # a new session takes the list again
        with pytest.raises(EpiphanError) as caught:
            await reader.call("get_device_info", {"device_id": device})
        assert caught.value.code is Code.TOOL_CHANGED and "description" in caught.value.message
        assert called(lab, "get_device_info") == before  # nothing was sent
        assert await reader.call("get_devices_in_my_team")  # the other tools are read as before
    lab.lab.redefined.clear()
    async with client(lab, policy) as reader:
        assert await reader.call("get_device_info", {"device_id": device})


async def test_a_session_the_server_ended_is_checked_again_when_the_next_one_opens(lab, repo_root):
    policy = pinned(repo_root, "get_stream_endpoints")
    async with client(lab, policy) as reader:
        await reader.call("get_stream_endpoints")
        lab.lab.redefined.change({"tool": "get_stream_endpoints", "input_schema": {"type": "object"}})
        lab.end_sessions()
        with pytest.raises(EpiphanError) as gone:
            await reader.call("get_devices_in_my_team")
        assert gone.value.code is Code.EPIPHAN_UNREACHABLE
        sessions = reader.connection.sessions
        with pytest.raises(EpiphanError) as caught:
            await reader.call("get_stream_endpoints")
        assert caught.value.code is Code.TOOL_CHANGED and "input schema" in caught.value.message
        assert reader.connection.sessions == sessions + 1


async def test_a_read_tool_without_a_reviewed_definition_is_reported_not_refused(lab, repo_root):
    policy = load_policies(repo_root / "policy")[1]
    assert "get_device_sources" not in policy.definitions
    lab.lab.redefined.change({"tool": "get_device_sources", "description": "changed"})
    device = lab.teams["normal"].device_ids[0]
    async with client(lab, policy) as reader:
        assert await reader.call("get_device_sources", {"device_id": device}) is not None
        assert (await reader.tool_report()).blocked("get_device_sources") is None
