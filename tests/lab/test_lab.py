"""The lab over real MCP (the SDK's client, streamable HTTP): team isolation, the in-band
401, the exact write log, reset."""

from __future__ import annotations

import pytest

from services.lab.server import LabHandle
from tests.lab.helpers import data_of, open_session, text_of


async def test_each_token_sees_only_its_own_team(lab: LabHandle):
    seen = {}
    for name, team in lab.teams.items():
        async with open_session(lab.mcp_url, team.token) as session:
            data = data_of(await session.call_tool("get_devices_in_my_team", {}))
            seen[name] = {d["Id"] for d in data["devices"]}
            assert data["team_id"] == team.team_id
            assert seen[name] == set(team.device_ids)
    assert len(seen["normal"]) == 30 and len(seen["sandbox"]) == 4
    assert not seen["normal"] & seen["sandbox"]


async def test_a_token_cannot_read_or_write_the_other_teams_devices(lab: LabHandle):
    normal_device = lab.teams["normal"].device_ids[0]
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        read = await session.call_tool("get_device_info", {"device_id": normal_device})
        assert read.is_error and text_of(read) == f"Device not found: {normal_device}"
        write = await session.call_tool("batch_reboot", {"device_ids": [normal_device]})
        assert data_of(write) == {normal_device: "device not found"}
    assert lab.state.devices[normal_device].online
    assert [(w["tool"], w["team"]) for w in lab.writes()] == [("batch_reboot", "sandbox")]


@pytest.mark.parametrize("token", [None, "not-a-real-token"], ids=["missing", "wrong"])
async def test_admit_mode_a_missing_or_wrong_token_connects_and_calls_get_an_in_band_401(
    lab: LabHandle, token: str | None
):
    async with open_session(lab.mcp_url, token) as session:
        listed = await session.list_tools()
        assert len(listed.tools) == 35
        result = await session.call_tool("get_devices_in_my_team", {})
        assert result.is_error
        assert "401 Unauthorized" in text_of(result) and "invalid_token" in text_of(result)
        write = await session.call_tool("batch_reboot", {"device_ids": ["29088800001"]})
        assert write.is_error and "401 Unauthorized" in text_of(write)
    assert lab.writes() == []
    assert [r["reason"] for r in lab.rejected()] == ["not signed in", "not signed in"]
    assert lab.state.devices["29088800001"].online


async def test_admit_mode_an_expired_token_gets_an_in_band_401_saying_token_expired(lab: LabHandle):
    token = lab.issue_token("sandbox", ttl_seconds=60)
    async with open_session(lab.mcp_url, token) as session:
        assert not (await session.call_tool("get_team_presets", {})).is_error
        lab.advance(61)
        result = await session.call_tool("get_team_presets", {})
    assert result.is_error
    assert "401 Unauthorized" in text_of(result) and "token expired" in text_of(result)


async def test_admit_mode_a_revoked_token_gets_an_in_band_401(lab: LabHandle):
    token = lab.issue_token("normal")
    lab.revoke_token(token)
    async with open_session(lab.mcp_url, token) as session:
        result = await session.call_tool("get_team_presets", {})
    assert result.is_error and "401 Unauthorized" in text_of(result)


async def test_a_room_named_401_is_data_not_a_sign_in_error(lab: LabHandle):
    async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
        result = await session.call_tool("get_device_info", {"device_id": "19012340303"})
    assert not result.is_error
    assert data_of(result)["Name"] == "LIB 401 Reading Room"


async def test_the_write_log_holds_exactly_the_write_calls_with_their_arguments_team_and_time(lab: LabHandle):
    arguments = {"action": "start", "device_ids": ["29088800001-1"]}
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        await session.call_tool("get_devices_in_my_team", {})
        result = await session.call_tool("batch_recording", arguments)
        bad = await session.call_tool("batch_recording", {"action": "start", "device_ids": ["29088800001"]})
        await session.call_tool("get_recorder_status_for_devices", {"device_ids": ["29088800001"]})
    assert data_of(result) == {}
    assert bad.is_error and text_of(bad).startswith("Invalid arguments for batch_recording: device_ids[0]:")
    (write,) = lab.writes()
    assert write == {
        "seq": 1,
        "tool": "batch_recording",
        "arguments": arguments,
        "team": "sandbox",
        "at": "2026-09-16T13:00:00Z",
        "result": {},
    }
    (rejected,) = lab.rejected()
    assert rejected["tool"] == "batch_recording" and rejected["team"] == "sandbox"
    assert lab.state.devices["29088800001"].channels[0].recording


async def test_an_unknown_tool_is_an_error_result_and_not_a_write(lab: LabHandle):
    async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
        result = await session.call_tool("reboot_everything", {})
    assert result.is_error and text_of(result) == "Unknown tool: reboot_everything"
    assert lab.writes() == []


async def test_reset_restores_the_scenario_and_clears_the_log_and_faults_but_keeps_tokens(lab: LabHandle):
    token = lab.teams["sandbox"].token
    async with open_session(lab.mcp_url, token) as session:
        await session.call_tool("batch_reboot", {"device_ids": ["29088800002"]})
        lab.set_fault("*", "error")
        lab.advance(3600)
        lab.reset()
        result = await session.call_tool("get_device_info", {"device_id": "29088800002"})
    assert data_of(result)["Status"] == "online"
    assert lab.writes() == [] and lab.rejected() == []
    assert lab.now.isoformat() == "2026-09-16T13:00:00+00:00"
    assert lab.teams["sandbox"].token == token
