from __future__ import annotations

from typing import Any

from services.lab.lab import Lab

ENDPOINT = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"  # the sandbox team's stream endpoint
PEARL2, MINI, NANO = "29088800001", "29088800002", "29088800003"


async def _call(lab: Lab, name: str, args: dict[str, Any], team: str = "sandbox") -> Any:
    outcome = await lab.call_tool(lab.demo_tokens[team], name, args)
    assert not outcome.result.is_error, outcome.result.content
    return outcome.result.structured_content


async def _device(lab: Lab, device_id: str, team: str = "sandbox") -> dict[str, Any]:
    return await _call(lab, "get_device_info", {"device_id": device_id}, team)


async def test_batch_recording_starts_and_stops_a_channel(campus: Lab):
    assert await _call(campus, "batch_recording", {"action": "start", "device_ids": [f"{PEARL2}-2"]}) == {}
    status = await _call(campus, "get_recorder_status_for_devices", {"device_ids": [PEARL2]})
    assert status["devices"][PEARL2]["Channels"]["2"]["RecordingStatus"]["state"] == "recording"
    assert await _call(campus, "batch_recording", {"action": "stop", "device_ids": [f"{PEARL2}-2"]}) == {}
    assert (await _device(campus, PEARL2))["Channels"][1]["recording_status"]["state"] == "stopped"


async def test_batch_recording_reports_each_failed_channel(campus: Lab):
    result = await _call(
        campus,
        "batch_recording",
        {"action": "start", "device_ids": [f"{PEARL2}-9", "19012340204-1", f"{NANO}-1"]},
    )
    assert result == {f"{PEARL2}-9": "channel not found", "19012340204-1": "device not found"}


EC20 = "19012340107"  # SCI 310 Seminar, an EC20 camera of the normal team
MAIN_STAGE = "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5"


async def test_an_ec20_cannot_record_or_stream_but_can_reboot(campus: Lab):
    record = await _call(
        campus, "batch_recording", {"action": "start", "device_ids": [f"{EC20}-1"]}, "normal"
    )
    assert record == {f"{EC20}-1": "not supported on EC20"}
    stream = {"stream_id": MAIN_STAGE, "device_id": EC20, "channel_id": "1"}
    assert await _call(campus, "start_stream_endpoint", stream, "normal") == {EC20: "not supported on EC20"}
    info = await _device(campus, EC20, "normal")
    assert info["Channels"][0]["recording_status"]["state"] == "stopped"
    assert await _call(campus, "batch_reboot", {"device_ids": [EC20]}, "normal") == {}


async def test_a_write_on_the_other_teams_device_changes_nothing_but_is_logged_as_a_write(campus: Lab):
    before = await _device(campus, "19012340101", team="normal")
    result = await _call(campus, "batch_reboot", {"device_ids": ["19012340101"]}, team="sandbox")
    assert result == {"19012340101": "device not found"}
    assert await _device(campus, "19012340101", team="normal") == before
    assert [(w["tool"], w["team"], w["result"]) for w in campus.writes] == [
        ("batch_reboot", "sandbox", {"19012340101": "device not found"})
    ]


async def test_a_reboot_takes_the_room_offline_for_ninety_seconds(campus: Lab):
    assert await _call(campus, "batch_reboot", {"device_ids": [MINI]}) == {}
    device = await _device(campus, MINI)
    assert device["Status"] == "offline"
    assert device["Channels"][0]["recording_status"]["state"] == "stopped"
    assert await _call(campus, "batch_reboot", {"device_ids": [MINI]}) == {MINI: "device offline"}
    campus.clock.advance(90)
    device = await _device(campus, MINI)
    assert device["Status"] == "online"
    assert device["StateTime"] == "2026-09-16T13:01Z"
    status = await _call(campus, "get_system_status_for_devices", {"device_ids": [MINI]})
    assert status["status"][0]["uptime_since"] == "2026-09-16T13:01:30Z"


async def test_a_firmware_update_runs_for_minutes_then_bumps_the_version(campus: Lab):
    assert await _call(campus, "batch_firmware_update", {"device_ids": [PEARL2, MINI]}) == {
        MINI: "firmware is up to date"
    }
    assert (await _device(campus, PEARL2))["Firmware"] == "4.24.3"
    campus.clock.advance(250)
    assert (await _device(campus, PEARL2))["Status"] == "offline"
    campus.clock.advance(60)
    device = await _device(campus, PEARL2)
    assert (device["Status"], device["Firmware"]) == ("online", "4.24.6")


async def test_a_stream_starts_and_stops_on_a_channel(campus: Lab):
    args = {"stream_id": ENDPOINT, "device_id": PEARL2, "channel_id": "1"}
    assert await _call(campus, "start_stream_endpoint", args) == {}
    (publisher,) = (await _device(campus, PEARL2))["Channels"][0]["Publishers"]
    assert publisher["id"] == ENDPOINT and publisher["status"]["state"] == "started"
    assert await _call(campus, "stop_stream_endpoint", args) == {}
    (publisher,) = (await _device(campus, PEARL2))["Channels"][0]["Publishers"]
    assert publisher["status"]["state"] == "stopped"


async def test_streaming_to_the_other_teams_endpoint_is_refused(campus: Lab):
    args = {"stream_id": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5", "device_id": PEARL2, "channel_id": "1"}
    assert await _call(campus, "start_stream_endpoint", args) == {PEARL2: "stream endpoint not found"}
    assert "Publishers" not in (await _device(campus, PEARL2))["Channels"][0]


async def test_confirming_an_event_marks_it_confirmed_and_only_on_its_own_device(campus: Lab):
    event_id = "sbx4f2a9c1:1791484740"
    wrong = await _call(campus, "confirm_cms_event_on_device", {"device_id": NANO, "event_id": event_id})
    assert wrong == {NANO: "event not found on this device"}
    assert await _call(campus, "confirm_cms_event_on_device", {"device_id": MINI, "event_id": event_id}) == {}
    nxt = await _call(campus, "get_current_or_next_cms_event_for_device", {"device_id": MINI})
    assert nxt["event"]["confirmed"] is True


async def test_events_are_created_updated_acted_on_and_deleted(campus: Lab):
    created = await _call(
        campus,
        "create_cms_event",
        {
            "device_id": PEARL2,
            "title": "Test",
            "start": "2026-09-16T13:30:00Z",
            "finish": "2026-09-16T14:00:00Z",
        },
    )
    assert created == {}
    (event,) = (await _call(campus, "get_cms_events_for_device", {"device_id": PEARL2}))["events"]
    assert (event["cms"], event["start"], event["status"]) == ("epiphan", "2026-09-16T13:30:00Z", "scheduled")
    assert event["id"].endswith(":1789565400")
    event_id = event["id"]
    assert await _call(
        campus, "update_cms_event", {"event_id": event_id, "finish": "2026-09-16T13:00:00Z"}
    ) == {event_id: "finish must be after start"}
    assert await _call(campus, "cms_event_action", {"event_id": event_id, "action": "stop"}) == {
        event_id: "event is not in progress"
    }
    assert await _call(campus, "cms_event_action", {"event_id": event_id, "action": "start"}) == {}
    assert await _call(campus, "cms_event_action", {"event_id": event_id, "action": "pause"}) == {}
    (event,) = (await _call(campus, "get_cms_events_for_device", {"device_id": PEARL2}))["events"]
    assert (event["status"], event["start"]) == ("paused", "2026-09-16T13:00:00Z")
    assert await _call(campus, "delete_cms_event", {"event_id": event_id}) == {}
    assert (await _call(campus, "get_cms_events_for_device", {"device_id": PEARL2}))["events"] == []


async def test_an_event_whose_finish_is_before_its_start_is_refused_and_not_a_write(campus: Lab):
    outcome = await campus.call_tool(
        campus.demo_tokens["sandbox"],
        "create_cms_event",
        {
            "device_id": PEARL2,
            "title": "T",
            "start": "2026-09-16T14:00:00Z",
            "finish": "2026-09-16T13:00:00Z",
        },
    )
    assert outcome.result.is_error
    assert (
        outcome.result.content[0].text == "Invalid arguments for create_cms_event: finish must be after start"
    )
    assert campus.writes == []
    assert campus.rejected[0]["reason"] == outcome.result.content[0].text


async def test_deleting_a_stream_endpoint_stops_the_streams_to_it(campus: Lab):
    args = {"stream_id": ENDPOINT, "device_id": PEARL2, "channel_id": "1"}
    await _call(campus, "start_stream_endpoint", args)
    assert await _call(campus, "delete_stream_endpoint", {"endpoint_id": ENDPOINT}) == {}
    assert (await _call(campus, "get_stream_endpoints", {}))["stream_endpoints"] == []
    (publisher,) = (await _device(campus, PEARL2))["Channels"][0]["Publishers"]
    assert publisher["status"]["started"] is False


async def test_stream_endpoints_are_created_and_updated_in_the_callers_team_only(campus: Lab):
    await _call(
        campus, "create_stream_endpoint", {"name": "New", "type": "srt", "url": "srt://x.example.net:9000"}
    )
    names = [e["name"] for e in (await _call(campus, "get_stream_endpoints", {}))["stream_endpoints"]]
    assert names == ["Sandbox test stream", "New"]
    assert len((await _call(campus, "get_stream_endpoints", {}, team="normal"))["stream_endpoints"]) == 3
    assert await _call(campus, "update_stream_endpoint", {"endpoint_id": ENDPOINT, "key": "new-key"}) == {}
    assert (await _call(campus, "get_stream_endpoint", {"endpoint_id": ENDPOINT}))["key"] == "new-key"


async def test_a_preset_restarts_the_device_and_an_unknown_preset_fails_every_target(campus: Lab):
    unknown = await _call(
        campus,
        "apply_team_preset",
        {"preset_id": "3c4d5e6f-7a8b-4c9d-8e1f-2a3b4c5d6e7f", "device_ids": [PEARL2]},
    )
    assert unknown == {PEARL2: "preset not found"}
    applied = await _call(
        campus,
        "apply_team_preset",
        {"preset_id": "7a8b9c0d-1e2f-4a3b-8c4d-6e7f8091a2b3", "device_ids": [PEARL2]},
    )
    assert applied == {}
    assert (await _device(campus, PEARL2))["Status"] == "offline"
    campus.clock.advance(30)
    assert (await _device(campus, PEARL2))["Status"] == "online"


async def test_switching_cms_changes_what_the_device_reports(campus: Lab):
    assert await _call(campus, "switch_device_to_cms", {"device_id": NANO, "cms": "panopto"}) == {}
    names = await _call(campus, "get_cms_names_for_devices", {"device_ids": [NANO]})
    assert names["devices"] == [{"device_id": NANO, "cms": "panopto"}]
