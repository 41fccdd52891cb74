"""The lab's HTTP surface: ``/_lab/*``, the loopback and host guards, both MCP eras."""

from __future__ import annotations

import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from services.lab.server import LabHandle, build_app, make_lab, run_lab
from services.lab.state import LabClock
from tests.lab.conftest import START
from tests.lab.helpers import data_of, open_session

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


async def test_state_lists_both_teams_with_their_tokens_and_device_ids(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        state = (await http.get("/_lab/state")).json()
    assert state["now"] == "2026-09-16T13:00:00Z"
    assert state["mcp_url"] == lab.mcp_url
    assert [t["name"] for t in state["teams"]] == ["normal", "sandbox"]
    sandbox = state["teams"][1]
    assert sandbox == {
        "name": "sandbox",
        "team_id": lab.teams["sandbox"].team_id,
        "token": lab.teams["sandbox"].token,
        "device_ids": ["29088800001", "29088800002", "29088800003", "29088800004"],
    }
    assert state["settings"] == {
        "anonymous": "admit",
        "expose_team_id": True,
        "older_shapes": False,
        "shapes": {},
        "verbatim": {},
    }


async def test_the_write_log_is_served_over_http(lab: LabHandle):
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        await session.call_tool("batch_reboot", {"device_ids": ["29088800003"]})
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        log = (await http.get("/_lab/writes")).json()
    assert log["writes"] == lab.writes()
    assert [w["tool"] for w in log["writes"]] == ["batch_reboot"]


async def test_the_clock_moves_by_seconds_or_to_a_time_and_refuses_nonsense(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        moved = await http.post("/_lab/clock", json={"advance_seconds": 90})
        assert moved.json() == {"now": "2026-09-16T13:01:30Z"}
        assert lab.state.team_device("sandbox", "29088800001", lab.now) is not None
        placed = await http.post("/_lab/clock", json={"set": "2026-09-17T08:00:00Z"})
        assert placed.json() == {"now": "2026-09-17T08:00:00Z"}
        for bad in ({"set": "tomorrow"}, {"set": "2026-09-17T08:00:00"}, {"advance_seconds": True}, {}):
            response = await http.post("/_lab/clock", json=bad)
            assert response.status_code == 400, bad
        assert (await http.post("/_lab/clock", content=b"[")).status_code == 400


async def test_reset_over_http_restores_the_first_state(lab: LabHandle):
    async with open_session(lab.mcp_url, lab.teams["sandbox"].token) as session:
        await session.call_tool("batch_reboot", {"device_ids": ["29088800003"]})
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        await http.post("/_lab/clock", json={"advance_seconds": 10})
        assert (await http.post("/_lab/reset")).json() == {"ok": True, "now": "2026-09-16T13:00:00Z"}
    assert lab.writes() == []
    assert lab.state.devices["29088800003"].online


async def test_tokens_of_lab_time_are_issued_over_http(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        issued = await http.post("/_lab/tokens", json={"team": "sandbox", "ttl_seconds": 30})
        refused = await http.post("/_lab/tokens", json={"team": "marketing"})
    assert refused.status_code == 400 and "no team" in refused.json()["error"]
    async with open_session(lab.mcp_url, issued.json()["token"]) as session:
        assert len(data_of(await session.call_tool("get_devices_in_my_team", {}))["devices"]) == 4


@pytest.mark.parametrize(
    ("peer", "host"),
    [(("192.0.2.7", 40000), "127.0.0.1:8770"), (("127.0.0.1", 40000), "evil.example.com")],
    ids=["foreign_peer", "foreign_host_header"],
)
async def test_lab_endpoints_answer_loopback_clients_by_loopback_names_only(peer: tuple[str, int], host: str):
    app = build_app(make_lab("campus"), "http://127.0.0.1:8770")
    transport = httpx2.ASGITransport(app=app, client=peer)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8770") as http:
        for method, path in (("GET", "/_lab/state"), ("GET", "/_lab/writes"), ("POST", "/_lab/reset")):
            response = await http.request(method, path, headers={"Host": host})
            assert response.status_code == 403, path
            assert "token" not in response.text


async def test_mcp_refuses_a_foreign_host_header(lab: LabHandle):
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            lab.mcp_url, json=INITIALIZE, headers={**MCP_HEADERS, "Host": "evil.example.com"}
        )
    assert response.status_code in (400, 403, 421)


async def test_admit_mode_initialize_without_a_token_is_http_200(lab: LabHandle):
    async with httpx2.AsyncClient() as http:
        response = await http.post(lab.mcp_url, json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 200
    assert "www-authenticate" not in response.headers


async def test_the_modern_protocol_client_works_too(lab: LabHandle):
    headers = {"Authorization": f"Bearer {lab.teams['normal'].token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(lab.mcp_url, http_client=http)) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("get_devices_in_my_team", {})
    assert len(data_of(result)["devices"]) == 30


async def test_older_shapes_are_served_and_declared_over_mcp():
    async with run_lab("campus", older_shapes=True, clock=LabClock(START, frozen=True)) as lab:
        async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools["get_stream_endpoints"].output_schema["required"]) == {"endpoints"}
            result = await session.call_tool("get_system_status_for_devices", {"device_ids": ["19012340202"]})
    assert data_of(result)["status"]["19012340202"]["cpu_load"] == 94.0


async def test_a_generated_fleet_of_thousands_is_served_to_a_client_that_allows_big_events(lab: LabHandle):
    async with run_lab("campus", devices=2000, seed=3) as big:
        assert len(big.teams["normal"].device_ids) == 2000
        assert big.teams["sandbox"].device_ids == lab.teams["sandbox"].device_ids
        async with open_session(big.mcp_url, big.teams["normal"].token) as session:
            with pytest.raises(MCPError, match="exceeded the 1048576 byte limit"):
                await session.call_tool("get_devices_in_my_team", {})
        async with open_session(big.mcp_url, big.teams["normal"].token, max_sse_event_size=None) as session:
            result = await session.call_tool("get_devices_in_my_team", {})
    assert len(data_of(result)["devices"]) == 2000
