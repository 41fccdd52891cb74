"""Issue 16's reported classes, each with the small input the issue gives (pure, no I/O).

1. an unknown shape must never become made-up data;
3. an offline device's recording is unknown ("last known: recording, since March 3");
4. rounding: nearest minute, free space as "0.4% (2.1 GB) free";
5. the older shapes of the issue are read alongside the live ones.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.ctl.fleet_view import device_row, render_fleet
from shared.epiphan.attention import findings
from shared.epiphan.fleet import (
    FleetShapeError,
    FleetSnapshot,
    StorageStatus,
    parse_devices,
    parse_events,
    parse_system_status,
)
from shared.text.fleet_answers import storage_words
from shared.text.wording import describe_event, describe_finding, minutes_text

NOW = datetime(2026, 9, 16, 13, 0, 30, tzinfo=UTC)

ISSUE_SYSTEM_STATUS = {
    "devices": {"19012340101": {"cpu_load": 94, "cpu_temp_c": 51, "up_since": "2026-09-16T12:50:00Z"}}
}
ISSUE_OLDER_EVENTS = {
    "devices": {
        "19012340101": {
            "event": {
                "id": "ev1",
                "title": "Physics 101",
                "start": "2026-09-16T14:00:00Z",
                "end": "2026-09-16T15:15:00Z",
            }
        }
    }
}


def _device(**changes):
    device = {
        "Id": "19012340101",
        "Name": "SCI 101",
        "Model": "Pearl-2",
        "Firmware": "4.24.6",
        "Status": "online",
        "StateTime": "2026-09-16T10:00Z",
        "Channels": [
            {"channel_id": "1", "name": "Lecture", "recording_status": {"state": "stopped"}},
        ],
        "Warnings": [],
    }
    return {**device, **changes}


def test_a_system_status_keyed_by_device_under_devices_is_read_not_made_up():
    status = parse_system_status(ISSUE_SYSTEM_STATUS)
    assert set(status) == {"19012340101"}
    row = status["19012340101"]
    assert (row.cpu_load_pct, row.cpu_temp_c) == (94.0, 51.0)
    assert row.up_since == datetime(2026, 9, 16, 12, 50, tzinfo=UTC)
    _, devices = parse_devices({"devices": [_device()]})
    found = findings(FleetSnapshot(None, devices, system=status), NOW)
    assert {f.kind for f in found} >= {"cpu_high", "recent_reboot"}


@pytest.mark.parametrize(
    "result",
    [
        {"readings": {"cpu": 94}},
        {"devices": [{"cpu_load": 94}]},
        {"status": [{"cpu": 94}]},
        {"status": {"not-a-device": {"cpu_load": 94}}},
        {"status": "ok"},
        [],
    ],
)
def test_a_system_status_in_no_known_shape_is_a_read_error_never_a_row(result):
    with pytest.raises(FleetShapeError) as caught:
        parse_system_status(result)
    assert caught.value.tool == "get_system_status_for_devices"


def test_events_in_the_older_shape_keyed_by_device_with_end_are_read():
    (event,) = parse_events(ISSUE_OLDER_EVENTS).values()
    assert event is not None and event.title == "Physics 101"
    assert event.finish == datetime(2026, 9, 16, 15, 15, tzinfo=UTC)


def test_an_offline_device_keeps_no_recording_only_what_was_last_known():
    stale = _device(
        Status="offline",
        StateTime="2026-03-20T08:00Z",
        Channels=[
            {
                "channel_id": "1",
                "name": "Lecture",
                "recording_status": {
                    "state": "recording",
                    "timestamp": str(int(datetime(2026, 3, 3, 9, 0, tzinfo=UTC).timestamp())),
                },
            },
            {
                "channel_id": "2",
                "name": "Camera 2",
                "recording_status": {
                    "state": "recording",
                    "timestamp": str(int(datetime(2026, 3, 3, 9, 0, tzinfo=UTC).timestamp())),
                },
            },
        ],
    )
    _, (device,) = parse_devices({"devices": [stale]})
    assert not device.recording
    assert all(c.recording is None for c in device.channels)
    row = device_row(device, FleetSnapshot(None, (device,)), NOW, 30)
    assert "REC" not in " ".join(row)
    assert "unknown (last known: recording, since March 3)" in row


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (25 * 60 - 20, "25 min"),
        (3 * 3600 - 1, "3 h 00 min"),
        (3 * 3600 - 25, "3 h 00 min"),
        (3 * 3600 - 40, "2 h 59 min"),
        (89, "1 min"),
    ],
)
def test_minutes_round_to_the_nearest_minute(seconds, text):
    assert minutes_text(seconds) == text


def test_a_class_25_minutes_ahead_is_in_25_min():
    from shared.epiphan.fleet import Event

    event = Event("ev1", "Physics", start=NOW + timedelta(minutes=25) - timedelta(seconds=30))
    assert describe_event(event, NOW, 30) == '"Physics" in 25 min'


def test_free_space_shows_the_share_and_the_bytes():
    storage = StorageStatus("19012340101", "critical", free=2_100_000_000, total=500_000_000_000)
    assert storage_words(storage, "en").startswith("0.4% (2.1 GB) free")
    warning = {
        "id": "disk_space_error",
        "label": "",
        "message": "",
        "data": {"free": 2_100_000_000, "total": 500_000_000_000, "state": "critical"},
    }
    _, devices = parse_devices({"devices": [_device(Warnings=[warning])]})
    (finding,) = [f for f in findings(FleetSnapshot(None, devices), NOW) if f.kind == "disk_low"]
    assert "0.4% (2.1 GB) free" in describe_finding(finding)
    assert "0% free" not in render_fleet(FleetSnapshot(None, devices), NOW)
