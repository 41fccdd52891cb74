"""Every fault mode, seen through the SDK's own MCP client over HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from services.lab import LabError
from services.lab.faults import Fault, FaultKind, FaultTable, parse_fault
from services.lab.scenario import SCENARIO_DIR
from services.lab.server import LabHandle, make_lab
from services.lab.tools import TOOL_NAMES
from tests.lab.helpers import data_of, open_session, raw_call, text_of
from tests.support import wait_until

REBOOT = {"device_ids": ["29088800001"]}


def test_a_fault_with_after_lets_that_many_calls_pass_first_and_only_for_its_team():
    table = FaultTable()
    table.add(Fault(tool="batch_reboot", kind=FaultKind.HOLD, count=1, after=2, team="sandbox"))
    assert table.take("batch_reboot", "normal") == (0.0, frozenset())
    assert table.take("batch_reboot", "sandbox") == (0.0, frozenset())
    assert table.take("batch_reboot", "sandbox") == (0.0, frozenset())
    assert table.take("batch_reboot", "sandbox")[1] == {FaultKind.HOLD}
    assert table.listing() == []


def test_a_counted_fault_applies_that_many_times_then_goes():
    table = FaultTable()
    table.add(Fault(tool="batch_reboot", kind=FaultKind.ERROR, count=2))
    table.add(Fault(tool="*", kind=FaultKind.LATENCY, seconds=0.5))
    assert table.take("get_team_presets") == (0.5, frozenset({FaultKind.LATENCY}))
    assert table.take("batch_reboot") == (0.5, frozenset({FaultKind.LATENCY, FaultKind.ERROR}))
    assert table.take("batch_reboot")[1] == {FaultKind.LATENCY, FaultKind.ERROR}
    assert table.take("batch_reboot")[1] == {FaultKind.LATENCY}
    assert [f["kind"] for f in table.listing()] == ["latency"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"tool": "nope", "kind": "error"}', "unknown tool: 'nope'"),
        (b'{"tool": "*", "kind": "explode"}', "Invalid enum value 'explode'"),
        (b'{"tool": "*", "kind": "error", "seconds": 3}', "only for latency and hold"),
        (b'{"tool": "*", "kind": "hold", "team": "other"}', "unknown team"),
        (b'{"tool": "*", "kind": "error", "count": 0}', "at least 1"),
        (b"not json", "not JSON"),
        (b'{"tool": "*", "kind": "error", "color": "red"}', "unknown field `color`"),
    ],
)
def test_a_bad_fault_is_refused_with_a_reason(body: bytes, message: str):
    with pytest.raises(LabError, match=message):
        parse_fault(body, TOOL_NAMES)


async def test_latency_delays_the_answer_and_nothing_else(lab: LabHandle):
    lab.set_fault("get_team_presets", "latency", seconds=0.3)
    async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
        began = time.monotonic()
        result = await session.call_tool("get_team_presets", {})
        slow = time.monotonic() - began
        began = time.monotonic()
        await session.call_tool("get_stream_endpoints", {})
        fast = time.monotonic() - began
    assert len(data_of(result)["presets"]) == 3
    assert slow >= 0.3 > fast


async def test_an_error_fault_answers_an_error_result_and_applies_nothing(lab: LabHandle):
    lab.set_fault("batch_reboot", "error", count=1)
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        failed = await session.call_tool("batch_reboot", REBOOT)
        assert failed.is_error and text_of(failed).startswith("500 Internal Server Error")
        assert lab.state.devices["29088800001"].online
        assert lab.writes() == []
        assert data_of(await session.call_tool("batch_reboot", REBOOT)) == {}
    assert len(lab.writes()) == 1


async def test_an_auth_401_fault_answers_the_in_band_401_and_applies_nothing(lab: LabHandle):
    lab.set_fault("*", "auth_401")
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        for name, args in (("get_devices_in_my_team", {}), ("batch_reboot", REBOOT)):
            result = await session.call_tool(name, args)
            assert (
                result.is_error
                and "401 Unauthorized" in text_of(result)
                and "token expired" in text_of(result)
            )
    assert lab.writes() == []
    assert lab.state.devices["29088800001"].online


async def test_a_dropped_response_applies_the_write_once_and_the_client_only_sees_a_timeout(lab: LabHandle):
    lab.set_fault("batch_reboot", "drop_response")
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        with pytest.raises(MCPError, match="[Tt]imed out"):
            await session.call_tool("batch_reboot", REBOOT, read_timeout_seconds=0.5)
        still_there = await session.call_tool("get_device_info", {"device_id": "29088800001"})
    assert data_of(still_there)["Status"] == "offline"
    (write,) = lab.writes()
    assert (write["tool"], write["arguments"], write["result"]) == ("batch_reboot", REBOOT, {})


async def test_malformed_json_applies_the_call_and_sends_cut_off_text_without_structured_content(
    lab: LabHandle,
):
    lab.set_fault("batch_reboot", "malformed_json")
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        result = await raw_call(session, "batch_reboot", REBOOT)
    assert not result.is_error and result.structured_content is None
    with pytest.raises(json.JSONDecodeError):
        json.loads(text_of(result))
    assert len(lab.writes()) == 1 and not lab.state.devices["29088800001"].online


async def test_the_sdk_client_itself_refuses_a_drifted_result_so_a_tolerant_client_reads_around_it(
    lab: LabHandle,
):
    lab.set_fault("get_devices_in_my_team", "schema_drift")
    async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
        with pytest.raises(
            RuntimeError, match="Invalid structured content returned by tool get_devices_in_my_team"
        ):
            await session.call_tool("get_devices_in_my_team", {})
        drifted = await raw_call(session, "get_devices_in_my_team", {})
    devices = json.loads(text_of(drifted))["devices"]
    assert len(devices) == 30
    assert any(w["data"] is None and w["id"] == "disk_space_error" for d in devices for w in d["Warnings"])


async def test_faults_are_set_listed_and_cleared_over_http(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        added = await http.post(
            "/_lab/faults", json={"tool": "kb_search", "kind": "latency", "seconds": 0.2, "count": 3}
        )
        assert added.status_code == 200
        assert added.json()["faults"] == [
            {
                "tool": "kb_search",
                "kind": "latency",
                "seconds": 0.2,
                "count": 3,
                "team": None,
                "after": 0,
                "remaining": 3,
            }
        ]
        refused = await http.post(
            "/_lab/faults", json={"tool": "kb_search", "kind": "latency", "seconds": -1}
        )
        assert refused.status_code == 400 and "between 0 and 600" in refused.json()["error"]
        cleared = await http.delete("/_lab/faults")
        assert cleared.json() == {"faults": [], "held": []}


def test_faults_listed_in_a_scenario_are_in_force_from_the_start_and_after_a_reset(tmp_path: Path):
    text = (
        (SCENARIO_DIR / "campus.yaml")
        .read_text()
        .replace(
            "faults: []",
            'faults: [{tool: batch_firmware_update, kind: error, count: 1}, {tool: "*", kind: latency}]',
        )
    )
    path = tmp_path / "faulty.yaml"
    path.write_text(text)
    lab = make_lab(path)
    assert [f["kind"] for f in lab.faults.listing()] == ["error", "latency"]
    lab.faults.take("batch_firmware_update")
    assert [f["kind"] for f in lab.faults.listing()] == ["latency"]
    lab.reset()
    assert [f["kind"] for f in lab.faults.listing()] == ["error", "latency"]


@pytest.mark.parametrize("kind", ["http_500", "close_connection"])
async def test_an_http_layer_fault_fails_the_request_itself_and_applies_nothing(lab: LabHandle, kind: str):
    lab.set_fault("batch_reboot", kind, count=1)
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        with pytest.raises(MCPError):
            await session.call_tool("batch_reboot", REBOOT, read_timeout_seconds=10)
    assert lab.writes() == [] and lab.state.devices["29088800001"].online
    assert lab.lab.faults.listing() == []


async def test_a_hold_keeps_the_call_in_the_lab_until_released_and_only_for_its_team(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        added = await http.post(
            "/_lab/faults", json={"tool": "batch_reboot", "kind": "hold", "team": "sandbox", "count": 1}
        )
        assert added.json()["faults"][0]["team"] == "sandbox"
        async with open_session(lab.mcp_url, lab.teams["normal"].token) as other:
            assert (await other.call_tool("get_team_presets", {})).is_error is False
        async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
            call = asyncio.ensure_future(session.call_tool("batch_reboot", REBOOT))
            held = await wait_until(lambda: lab.lab.held, what="the write held in the lab", seconds=20)
            assert held == [{"tool": "batch_reboot", "team": "sandbox"}]
            assert (await http.get("/_lab/faults")).json()["held"] == held
            assert lab.writes() == [] and not call.done()
            assert (await http.post("/_lab/release")).json() == {"released": 1}
            assert data_of(await call) == {}
    assert len(lab.writes()) == 1 and lab.lab.held == []
