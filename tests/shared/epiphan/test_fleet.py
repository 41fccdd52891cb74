from datetime import UTC, datetime

import pytest

from shared.epiphan.fleet import (
    FleetShapeError,
    StorageStatus,
    parse_devices,
    parse_events,
    parse_recorder_status,
    parse_storage_status,
    parse_stream_endpoints,
    parse_system_status,
    parse_time,
    storage_from_warnings,
)

DEVICE = {
    "Id": "19012341234",
    "Name": "Hall A",
    "Model": "Pearl-2",
    "GroupId": "0b0c",
    "GroupName": "North",
    "Firmware": "4.24.6",
    "Status": "online",
    "StateTime": "2026-09-16T20:36Z",
    "IPAddress": "10.0.0.5",
    "SerialNumber": "S1",
    "Channels": [
        {
            "channel_id": "1",
            "name": "Lectern",
            "recording_status": {"state": "recording", "timestamp": "1790000000", "description": ""},
            "Publishers": [{"id": "p1", "type": "rtmp", "status": {"state": "started"}, "settings": []}],
        },
        {
            "channel_id": "2",
            "name": "Camera 2",
            "recording_status": {"state": "stopped"},
            "Warnings": [
                {
                    "id": "channel_no_signal",
                    "label": "No signal",
                    "message": "",
                    "data": {"channel_name": "Camera 2"},
                }
            ],
        },
    ],
    "Warnings": [{"id": "no_storage_detected", "label": "No storage", "message": "", "data": None}],
}


def test_times_in_every_epiphan_form_become_utc():
    expected = datetime(2026, 9, 16, 20, 36, tzinfo=UTC)
    assert parse_time("2026-09-16T20:36Z") == expected
    assert parse_time(int(expected.timestamp())) == expected
    assert parse_time(int(expected.timestamp()) * 1000) == expected
    assert parse_time(str(int(expected.timestamp()))) == expected
    assert parse_time("2026-09-16T22:36+02:00") == expected
    assert parse_time(None) is None and parse_time("soon") is None and parse_time(True) is None


def test_a_device_list_parses_channels_publishers_and_warnings():
    team, devices = parse_devices({"devices": [DEVICE], "teamId": "T-1"})
    assert team == "T-1"
    (device,) = devices
    assert device.online and device.model == "Pearl-2" and device.recording
    assert device.channel("1").publishers[0].state == "started"
    assert device.channel("2").warnings[0].id == "channel_no_signal"
    assert device.warnings[0].data is None


@pytest.mark.parametrize("key", ["team_id", "teamId", "TeamId", "TeamID"])
def test_the_team_id_is_found_under_each_unconfirmed_spelling(key):
    assert parse_devices({"devices": [], key: "T-9"})[0] == "T-9"


def test_no_team_id_key_means_none():
    assert parse_devices({"devices": []})[0] is None


@pytest.mark.parametrize(
    "bad", [None, [], {"devices": None}, {"devices": [{"Name": "no id"}]}, "401 Unauthorized"]
)
def test_an_unreadable_device_list_is_refused(bad):
    with pytest.raises(FleetShapeError):
        parse_devices(bad)


def test_recorder_status_in_all_three_shapes_reads_the_same():
    current = {
        "devices": {
            "19012341234": {
                "Name": "Hall A",
                "Channels": {"1": {"Name": "L", "RecordingStatus": {"state": "recording"}}},
            }
        }
    }
    lower = {
        "devices": {
            "19012341234": {
                "name": "Hall A",
                "channels": {"1": {"name": "L", "recording_status": {"state": "recording"}}},
            }
        }
    }
    listed = {
        "devices": [
            {
                "device_id": "19012341234",
                "channels": [{"channel_id": "1", "recording_status": {"state": "recording"}}],
            }
        ]
    }
    expected = {"19012341234": {"1": True}}
    assert (
        parse_recorder_status(current)
        == parse_recorder_status(lower)
        == parse_recorder_status(listed)
        == expected
    )


def test_system_status_in_current_and_older_shapes_reads_the_same():
    current = {
        "status": [
            {
                "device_id": "19012341234",
                "cpu_load_pct": 93,
                "cpu_temp_c": 81.5,
                "uptime_since": "2026-09-16T20:00:00Z",
            }
        ]
    }
    older = {"19012341234": {"cpu_load": 93, "cpu_temp_c": 81.5, "up_since": "2026-09-16T20:00:00Z"}}
    assert parse_system_status(current) == parse_system_status(older)
    assert parse_system_status(current)["19012341234"].cpu_load_pct == 93.0


def test_events_with_null_event_mean_nothing_scheduled_and_finish_is_the_end():
    start = datetime(2026, 9, 17, 9, 0, tzinfo=UTC)
    result = {
        "events": [
            {
                "device_id": "19012341234",
                "event": {
                    "id": "ev1",
                    "title": "Physics",
                    "cms": "panopto",
                    "status": "scheduled",
                    "confirmed": False,
                    "start": int(start.timestamp()) * 1000,
                    "finish": "2026-09-17T10:00:00Z",
                    "devices": [],
                },
            },
            {"device_id": "19012349999", "event": None},
        ]
    }
    events = parse_events(result)
    assert events["19012341234"].start == start and events["19012341234"].finish.hour == 10
    assert events["19012349999"] is None


def test_stream_endpoints_keep_id_name_and_host_only():
    result = {
        "endpoints": [
            {
                "id": "6f1c0f5e-1c1b-4c1e-9f7a-1a2b3c4d5e6f",
                "name": "Main",
                "url": "rtmp://u:p@live.example.net/app",
                "key": "sk",
            }
        ]
    }
    (endpoint,) = parse_stream_endpoints(result)
    assert endpoint.host == "live.example.net" and endpoint.name == "Main"
    assert "key" not in endpoint.__struct_fields__


def test_one_stream_endpoint_without_an_id_fails_the_whole_read():
    with pytest.raises(FleetShapeError):
        parse_stream_endpoints({"stream_endpoints": [{"id": "a", "name": "ok"}, {"name": "no id"}]})


@pytest.mark.parametrize(
    ("parser", "result"), [(parse_system_status, {"status": None}), (parse_events, {"events": None})]
)
def test_null_where_a_list_belongs_is_no_known_shape_so_nothing_is_made_up(parser, result):
    with pytest.raises(FleetShapeError) as caught:
        parser(result)
    assert "(null)" in caught.value.message


def test_storage_status_as_a_list_or_a_map_reads_the_same_and_gives_the_free_share():
    rows = [{"device_id": "19012341234", "state": "low", "free": 70_000_000_000, "total": 931_000_000_000}]
    assert parse_storage_status({"storage": rows}) == parse_storage_status({"19012341234": rows[0]})
    storage = parse_storage_status({"storage": rows})["19012341234"]
    assert storage.state == "low" and round(storage.free_pct or 0, 1) == 7.5
    missing = parse_storage_status({"storage": [{"device_id": "19012341235", "state": "missing"}]})
    assert (
        missing["19012341235"] == StorageStatus("19012341235", "missing")
        and missing["19012341235"].free_pct is None
    )
    with pytest.raises(FleetShapeError):
        parse_storage_status({"storage": "full"})


def test_an_empty_storage_state_is_storage_unknown_never_zero():
    rows = [{"device_id": "19012341236", "state": "", "free": 0, "total": 931_000_000_000}]
    unknown = parse_storage_status({"storage": rows})["19012341236"]
    assert unknown == StorageStatus("19012341236", "unknown") and unknown.free_pct is None
    unsaid = parse_storage_status({"storage": [{"device_id": "19012341237", "free": 5, "total": 10}]})
    assert unsaid["19012341237"] == StorageStatus("19012341237", "", 5, 10)  # no state: the sizes say


def test_a_device_s_own_warnings_say_what_its_storage_is():
    _, (device,) = parse_devices({"devices": [DEVICE]})
    assert storage_from_warnings(device) == StorageStatus("19012341234", "missing")
    low = {
        **DEVICE,
        "Warnings": [{"id": "disk_space_error", "data": {"free": 1, "total": 50, "state": "critical"}}],
    }
    _, (full,) = parse_devices({"devices": [low]})
    assert storage_from_warnings(full) == StorageStatus("19012341234", "critical", 1, 50)
    _, (fine,) = parse_devices({"devices": [{**DEVICE, "Warnings": []}]})
    assert storage_from_warnings(fine) is None
