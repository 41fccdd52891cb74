"""The lab serves every named shape of every tool Fleetwatch parses (``--shape TOOL=NAME``), so
a captured team's shapes can be replayed and the product tried on each; each shape it serves is
recognised as that shape and reads to the same facts as the live one."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from services.lab import LabError
from services.lab.__main__ import main as lab_main
from services.lab.server import make_lab, run_lab
from services.lab.shapes import SERVED_SHAPES
from services.lab.state import LabClock
from shared.epiphan.fleet import PARSERS, parse_events
from shared.epiphan.fleet_shapes import SHAPES, recognise
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.policy.loader import load_policies
from tests.lab.conftest import START

ARGUMENTS: dict[str, dict[str, Any]] = {
    "get_devices_in_my_team": {},
    "get_stream_endpoints": {},
    "get_current_or_next_cms_events_for_devices": {
        "device_ids": ["19012340101", "19012340204", "19012340302", "19012340103"],
        "until": "2026-09-17T13:00:00Z",
    },
}
DEVICES = {"device_ids": ["19012340101", "19012340204", "19012340401", "19012340502", "19012340302"]}
SERVED = [(tool, name) for tool, names in sorted(SERVED_SHAPES.items()) for name in sorted(names)]


async def answer(tool: str, shape: str) -> Any:
    lab = make_lab("campus", clock=LabClock(START, frozen=True), shapes={tool: shape})
    outcome = await lab.call_tool(lab.demo_tokens["normal"], tool, ARGUMENTS.get(tool, DEVICES))
    assert not outcome.result.is_error
    return json.loads(outcome.result.content[0].text)


def test_the_lab_serves_every_shape_of_every_tool_fleetwatch_parses():
    assert {tool: frozenset(s.name for s in SHAPES[tool]) for tool in SERVED_SHAPES} == dict(SERVED_SHAPES)
    assert {tool for tool in PARSERS if len(SHAPES[tool]) > 1} <= set(SERVED_SHAPES)


@pytest.mark.parametrize(("tool", "shape"), SERVED)
async def test_each_served_shape_is_recognised_and_reads_like_the_live_one(tool, shape):
    served, live = await answer(tool, shape), await answer(tool, "current")
    found = recognise(tool, served)
    assert found is not None and found.name == shape
    if tool == "get_current_or_next_cms_events_for_devices":
        strip = {"cms": "", "status": "", "confirmed": False}  # the older shape has none of these

        def bare(events: Any) -> dict[str, Any]:
            return {k: v and msgspec.structs.replace(v, **strip) for k, v in parse_events(events).items()}

        assert bare(served) == bare(live) and any(bare(live).values())
    else:
        assert PARSERS[tool](served) == PARSERS[tool](live)


def test_a_shape_the_lab_cannot_serve_is_refused_at_start():
    with pytest.raises(LabError, match="no shape 'flat'"):
        make_lab("campus", shapes={"get_system_status_for_devices": "flat"})
    with pytest.raises(LabError, match="no other shape"):
        make_lab("campus", shapes={"kb_fetch": "current"})
    assert lab_main(["--shape", "get_system_status_for_devices", "--port", "0"]) == 2


async def test_the_issue_s_older_shapes_give_the_same_snapshot(repo_root):
    read_tools = load_policies(repo_root / "policy")[1].read_tools
    issue = {
        "get_system_status_for_devices": "keyed_devices",
        "get_current_or_next_cms_events_for_devices": "keyed_devices",
    }
    snapshots = []
    for shapes in ({}, issue):
        async with run_lab("campus", clock=LabClock(START, frozen=True), shapes=shapes) as lab:
            connection = McpConnection(lab.mcp_url, lab.teams["normal"].token)
            async with EpiphanReadClient(connection, read_tools) as client:
                snapshots.append(await client.snapshot())
    live, older = snapshots
    assert older.unread == () and older.system == live.system
    assert {k: (v.id, v.title, v.start, v.finish) if v else None for k, v in older.events.items()} == {
        k: (v.id, v.title, v.start, v.finish) if v else None for k, v in live.events.items()
    }
