from __future__ import annotations

from typing import Any

import pytest

from services.lab.lab import Lab
from services.lab.server import make_lab
from services.lab.state import LabClock
from tests.lab.conftest import START


@pytest.fixture
def older() -> Lab:
    return make_lab("campus", older_shapes=True, clock=LabClock(START, frozen=True))


async def _read(lab: Lab, name: str, args: dict[str, Any]) -> Any:
    outcome = await lab.call_tool(lab.demo_tokens["normal"], name, args)
    assert not outcome.result.is_error, outcome.result.content
    return outcome.result.structured_content


async def test_older_recorder_status_is_a_list_with_lower_case_keys(older: Lab):
    data = await _read(older, "get_recorder_status_for_devices", {"device_ids": ["19012340103"]})
    assert data == {
        "devices": [
            {
                "device_id": "19012340103",
                "name": "SCI 201 Lab",
                "channels": {
                    "1": {
                        "name": "Lecture",
                        "recording_status": {
                            "state": "recording",
                            "timestamp": str(int(START.timestamp()) - 19 * 60),
                            "description": "Recording",
                        },
                    },
                    "2": {
                        "name": "Camera 2",
                        "recording_status": {
                            "state": "stopped",
                            "timestamp": str(int(START.timestamp()) - 24 * 3600),
                            "description": "Stopped",
                        },
                    },
                },
            }
        ]
    }


async def test_current_recorder_status_is_keyed_by_device_with_capitalised_keys(campus: Lab):
    data = await _read(campus, "get_recorder_status_for_devices", {"device_ids": ["19012340103"]})
    channels = data["devices"]["19012340103"]["Channels"]
    assert data["devices"]["19012340103"]["Name"] == "SCI 201 Lab"
    assert channels["1"]["Name"] == "Lecture"
    assert channels["1"]["RecordingStatus"]["state"] == "recording"


async def test_older_system_status_is_keyed_by_device_with_cpu_load_and_up_since(older: Lab):
    data = await _read(older, "get_system_status_for_devices", {"device_ids": ["19012340202"]})
    assert data == {
        "status": {"19012340202": {"cpu_load": 94.0, "cpu_temp_c": 83.0, "up_since": "2026-09-14T13:00:00Z"}}
    }


async def test_older_event_times_are_epoch_seconds_in_lists_and_milliseconds_for_the_next_event(older: Lab):
    listing = await _read(older, "get_cms_events_for_device", {"device_id": "19012340101"})
    chem = listing["events"][1]
    assert chem["start"] == int(START.timestamp()) + 40 * 60
    nxt = await _read(older, "get_current_or_next_cms_event_for_device", {"device_id": "19012340101"})
    assert nxt["event"]["start"] == (int(START.timestamp()) + 40 * 60) * 1000
    assert nxt["event"]["finish"] > 1e11


async def test_older_stream_endpoints_come_under_endpoints(older: Lab):
    data = await _read(older, "get_stream_endpoints", {})
    assert set(data) == {"endpoints"}
    assert len(data["endpoints"]) == 3


async def test_current_event_times_are_iso_8601_utc(campus: Lab):
    listing = await _read(campus, "get_cms_events_for_device", {"device_id": "19012340101"})
    assert [e["start"] for e in listing["events"]] == ["2026-09-16T10:00:00Z", "2026-09-16T13:40:00Z"]
    assert listing["events"][0]["status"] == "completed"
