"""The guarded read client against the lab, over real MCP streamable HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx2
import msgspec
import pytest

from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import (
    READ_TOOLS_OF_EPIPHAN,
    WRITE_TOOLS_OF_EPIPHAN,
    EpiphanError,
    EpiphanReadClient,
    is_auth_error_text,
)
from shared.errors import Code, FleetwatchError
from shared.policy.loader import load_policies

START = datetime(2026, 9, 16, 13, 0, 0, tzinfo=UTC)


class CountingTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that counts the requests it sends (a fake at the boundary)."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.requests = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus", clock=LabClock(START, frozen=True)) as handle:
        yield handle


@pytest.fixture
def read_tools(repo_root) -> frozenset[str]:
    return load_policies(repo_root / "policy")[1].read_tools


def client(lab: LabHandle, read_tools, token: str | None = "normal", **kw) -> EpiphanReadClient:
    bearer = lab.teams[token].token if token in lab.teams else token
    return EpiphanReadClient(McpConnection(lab.mcp_url, bearer, **kw), read_tools)


@pytest.mark.parametrize(
    "tool", sorted(WRITE_TOOLS_OF_EPIPHAN) + ["format_all_devices", "get_devices_in_my_team "]
)
async def test_the_guard_refuses_every_write_tool_and_unknown_tools_with_no_request_sent(
    lab, read_tools, tool
):
    transport = CountingTransport()
    async with client(lab, read_tools, transport=transport) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.call(tool, {"device_ids": ["19012341234"]})
    expected = Code.TOOL_NOT_ALLOWED if tool in WRITE_TOOLS_OF_EPIPHAN else Code.UNKNOWN_TOOL
    assert caught.value.code == expected
    assert transport.requests == 0
    assert lab.writes() == [] and lab.rejected() == []


def test_the_shipped_read_list_is_exactly_the_epiphan_read_tools(read_tools):
    assert read_tools == READ_TOOLS_OF_EPIPHAN
    assert not read_tools & WRITE_TOOLS_OF_EPIPHAN


async def test_a_read_tool_the_policy_leaves_off_is_refused_before_sending(lab):
    transport = CountingTransport()
    narrow = frozenset({"get_devices_in_my_team"})
    async with EpiphanReadClient(
        McpConnection(lab.mcp_url, lab.teams["normal"].token, transport=transport), narrow
    ) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.call("get_stream_endpoints")
        assert caught.value.code == Code.TOOL_NOT_ALLOWED and transport.requests == 0
        await c.call("get_devices_in_my_team")
        assert transport.requests > 0


async def test_each_token_sees_only_its_own_team(lab, read_tools):
    async with client(lab, read_tools, "normal") as normal, client(lab, read_tools, "sandbox") as sandbox:
        normal_ids = {d.id for d in (await normal.snapshot()).devices}
        sandbox_ids = {d.id for d in (await sandbox.snapshot()).devices}
    assert normal_ids == set(lab.teams["normal"].device_ids)
    assert sandbox_ids == set(lab.teams["sandbox"].device_ids)
    assert not normal_ids & sandbox_ids


@pytest.mark.parametrize("token", [None, "not-a-real-token"])
async def test_a_missing_or_wrong_sign_in_reported_in_band_is_an_auth_error(lab, read_tools, token):
    async with client(lab, read_tools, token) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.snapshot()
    assert caught.value.code == Code.EPIPHAN_AUTH


async def test_an_expired_token_is_an_auth_error(lab, read_tools):
    token = lab.issue_token("normal", ttl_seconds=60)
    lab.advance(120)
    async with EpiphanReadClient(McpConnection(lab.mcp_url, token), read_tools) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.call("get_devices_in_my_team")
    assert caught.value.code == Code.EPIPHAN_AUTH


async def test_a_room_called_room_401_is_data_not_an_auth_error(lab, read_tools):
    device_id = lab.teams["normal"].device_ids[0]
    lab.state.devices[device_id].name = "Room 401 Unauthorized token expired"
    async with client(lab, read_tools) as c:
        snapshot = await c.snapshot()
    assert snapshot.device(device_id).name == "Room 401 Unauthorized token expired"


def test_auth_words_are_recognised_only_as_sign_in_problems():
    assert is_auth_error_text("Error: 401 Unauthorized")
    assert is_auth_error_text("invalid_token: the access token expired")
    assert not is_auth_error_text("device offline")


@pytest.mark.parametrize("text", ["FORBIDDEN", "Error: FORBIDDEN", "403 Forbidden", '{"error": "FORBIDDEN"}'])
def test_forbidden_reads_as_a_dead_sign_in_like_a_401(text):
    assert is_auth_error_text(text)


async def test_an_error_result_fault_is_a_tool_error_with_a_code(lab, read_tools):
    lab.set_fault("get_devices_in_my_team", "error")
    async with client(lab, read_tools) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.snapshot()
    assert caught.value.code == Code.EPIPHAN_TOOL_ERROR


async def test_an_in_band_401_fault_is_an_auth_error(lab, read_tools):
    lab.set_fault("get_recorder_status_for_devices", "auth_401")
    async with client(lab, read_tools) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.snapshot()
    assert caught.value.code == Code.EPIPHAN_AUTH


@pytest.mark.parametrize("tool", ["get_devices_in_my_team", "get_recorder_status_for_devices"])
async def test_an_in_band_forbidden_fault_is_the_same_auth_error_as_a_401(lab, read_tools, tool):
    lab.set_fault(tool, "auth_forbidden")
    async with client(lab, read_tools) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.snapshot()
    assert caught.value.code == Code.EPIPHAN_AUTH
    assert caught.value.message.endswith("Epiphan reports no valid sign-in")


async def test_malformed_json_text_fails_the_snapshot_as_a_bad_result(lab, read_tools):
    lab.set_fault("get_devices_in_my_team", "malformed_json")
    async with client(lab, read_tools) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.snapshot()
    assert caught.value.code == Code.EPIPHAN_BAD_RESULT


async def test_schema_drift_is_tolerated_and_still_read(lab, read_tools):
    async with client(lab, read_tools) as c:
        clean = await c.snapshot()
    lab.set_fault("*", "schema_drift")
    async with client(lab, read_tools) as c:
        drifted = await c.snapshot()
    assert {d.id for d in drifted.devices} == {d.id for d in clean.devices}


async def test_latency_beyond_the_timeout_is_a_timeout(lab, read_tools):
    lab.set_fault("get_devices_in_my_team", "latency", seconds=3)
    async with client(lab, read_tools, timeout_seconds=0.5) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.call("get_devices_in_my_team")
    assert caught.value.code == Code.EPIPHAN_TIMEOUT


async def test_an_unreachable_server_is_reported_with_a_code(read_tools):
    async with EpiphanReadClient(
        McpConnection("http://127.0.0.1:9/mcp", "t", timeout_seconds=2), read_tools
    ) as c:
        with pytest.raises(EpiphanError) as caught:
            await c.call("get_devices_in_my_team")
    assert caught.value.code == Code.EPIPHAN_UNREACHABLE


async def test_a_session_the_server_ended_is_unreachable_at_the_connection(lab):
    async with McpConnection(lab.mcp_url, lab.teams["normal"].token, timeout_seconds=5) as connection:
        await connection.call("get_devices_in_my_team")
        lab.end_sessions()  # as a server that reaped the idle session, or restarted
        with pytest.raises(FleetwatchError) as caught:
            await connection.call("get_devices_in_my_team")
        assert caught.value.code == Code.EPIPHAN_UNREACHABLE


async def test_the_read_client_never_repeats_a_read_itself(lab, read_tools):
    """Repeating a read on a warm session the server ended is `SignedConnection`'s (it reads the
    slot first); the guarded client sends each call once."""
    async with client(lab, read_tools, timeout_seconds=5) as c:
        await c.call("get_devices_in_my_team")
        lab.end_sessions()
        with pytest.raises(EpiphanError) as caught:
            await c.call("get_devices_in_my_team")
    assert caught.value.code == Code.EPIPHAN_UNREACHABLE and len(lab.calls()) == 1


async def test_stream_keys_never_leave_the_client(lab, read_tools):
    raw_keys = [e.key for e in lab.state.teams["normal"].endpoints.values() if e.key]
    assert len(raw_keys) >= 2
    async with client(lab, read_tools) as c:
        data = await c.call("get_stream_endpoints")
        endpoints = await c.stream_endpoints()
    text = msgspec.json.encode(data).decode() + repr(endpoints)
    for key in raw_keys:
        assert key not in text


async def test_current_and_older_result_shapes_parse_to_the_same_snapshot(read_tools):
    snapshots = []
    for older in (False, True):
        async with run_lab("campus", clock=LabClock(START, frozen=True), older_shapes=older) as lab:
            async with client(lab, read_tools) as c:
                snap = await c.snapshot()
        snapshots.append(msgspec.structs.replace(snap, taken_at=None))
    assert snapshots[0] == snapshots[1]
    assert any(d.recording for d in snapshots[0].devices) and any(snapshots[0].events.values())
