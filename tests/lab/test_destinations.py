"""Stream destinations as the live Edge reports them (``LockByDevice``, ``CurrentlyStreaming``)
and controls applied after a delay (issue 26 items 3 and 4), on the lab without a server."""

from __future__ import annotations

from typing import Any

from services.lab.lab import Lab
from services.lab.server import make_lab
from services.lab.state import LabClock
from tests.lab.conftest import START

ENDPOINT = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"  # the sandbox team's stream endpoint
PEARL2, MINI = "29088800001", "29088800002"
START_ON = {"device_id": PEARL2, "channel_id": "1", "stream_id": ENDPOINT}


async def _call(lab: Lab, name: str, args: dict[str, Any]) -> Any:
    outcome = await lab.call_tool(lab.demo_tokens["sandbox"], name, args)
    assert not outcome.result.is_error, outcome.result.content
    return outcome.result.structured_content


async def _endpoint(lab: Lab) -> dict[str, Any]:
    one = await _call(lab, "get_stream_endpoint", {"endpoint_id": ENDPOINT})
    listed = await _call(lab, "get_stream_endpoints", {})
    assert [e for e in listed["stream_endpoints"] if e["id"] == ENDPOINT] == [one]
    return one


async def test_an_endpoint_says_which_device_uses_it_and_whether_it_streams(campus: Lab) -> None:
    endpoint = await _endpoint(campus)
    assert (endpoint["LockByDevice"], endpoint["CurrentlyStreaming"]) == (None, False)
    assert await _call(campus, "start_stream_endpoint", START_ON) == {}
    endpoint = await _endpoint(campus)
    assert (endpoint["LockByDevice"], endpoint["CurrentlyStreaming"]) == (PEARL2, True)
    assert await _call(campus, "stop_stream_endpoint", START_ON) == {}
    endpoint = await _endpoint(campus)
    assert (endpoint["LockByDevice"], endpoint["CurrentlyStreaming"]) == (None, False)


async def test_a_start_on_a_destination_another_device_uses_fails_and_changes_nothing(campus: Lab) -> None:
    assert await _call(campus, "start_stream_endpoint", START_ON) == {}
    other = {**START_ON, "device_id": MINI}
    assert await _call(campus, "start_stream_endpoint", other) == {
        MINI: "stream endpoint is in use by another device"
    }
    assert (await _endpoint(campus))["LockByDevice"] == PEARL2
    assert not any(p.started for c in campus.world.devices[MINI].channels for p in c.publishers)


async def test_a_control_is_applied_after_the_labs_delay_not_at_once() -> None:
    lab = make_lab("campus", clock=LabClock(START, frozen=True), control_delay_seconds=3)
    assert await _call(lab, "batch_recording", {"action": "start", "device_ids": [f"{PEARL2}-1"]}) == {}
    assert await _call(lab, "start_stream_endpoint", START_ON) == {}
    status = await _call(lab, "get_recorder_status_for_devices", {"device_ids": [PEARL2]})
    assert status["devices"][PEARL2]["Channels"]["1"]["RecordingStatus"]["state"] != "recording"
    assert (await _endpoint(lab))["CurrentlyStreaming"] is False
    lab.clock.advance(2.9)
    assert (await _endpoint(lab))["CurrentlyStreaming"] is False
    lab.clock.advance(0.1)
    status = await _call(lab, "get_recorder_status_for_devices", {"device_ids": [PEARL2]})
    assert status["devices"][PEARL2]["Channels"]["1"]["RecordingStatus"]["state"] == "recording"
    assert (await _endpoint(lab))["LockByDevice"] == PEARL2


def test_the_lab_program_delays_controls_by_default_and_a_test_lab_does_not() -> None:
    from services.lab.__main__ import build_parser

    assert build_parser().parse_args([]).control_delay == 2.0
    assert build_parser().parse_args(["--control-delay", "0"]).control_delay == 0.0
    assert make_lab("campus").world.control_delay == 0.0
