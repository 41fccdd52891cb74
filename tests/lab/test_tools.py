from __future__ import annotations

import json

import jsonschema
import pytest

from services.lab.faults import Fault, FaultKind
from services.lab.lab import Lab
from services.lab.schemas import output_schema
from services.lab.server import make_lab
from services.lab.state import LabClock
from services.lab.tools import READ_TOOLS, TOOLS, WRITE_TOOLS
from tests.lab.conftest import START

# The tool lists as EPIPHAN.md gives them.
EPIPHAN_READ = {
    "get_devices_in_my_team",
    "get_device_info",
    "get_device_sources",
    "get_system_status_for_devices",
    "get_recorder_status_for_devices",
    "get_storage_status_for_devices",
    "get_channel_settings",
    "get_channel_image",
    "get_channel_audio_levels",
    "get_stream_endpoint",
    "get_stream_endpoints",
    "get_team_presets",
    "get_cms_events_for_device",
    "get_cms_events_for_devices",
    "get_current_or_next_cms_event_for_device",
    "get_current_or_next_cms_events_for_devices",
    "get_cms_names_for_devices",
    "get_devices_by_cms",
    "kb_search",
    "kb_fetch",
}
EPIPHAN_WRITE = {
    "batch_recording",
    "start_stream_endpoint",
    "stop_stream_endpoint",
    "create_cms_event",
    "update_cms_event",
    "delete_cms_event",
    "cms_event_action",
    "confirm_cms_event_on_device",
    "create_stream_endpoint",
    "update_stream_endpoint",
    "delete_stream_endpoint",
    "apply_team_preset",
    "switch_device_to_cms",
    "batch_reboot",
    "batch_firmware_update",
}
SOME = ["19012340101", "19012340103", "19012340204", "19012340502"]
READ_ARGS = {
    "get_devices_in_my_team": {},
    "get_device_info": {"device_id": "19012340103"},
    "get_device_sources": {"device_id": "19012340103"},
    "get_system_status_for_devices": {"device_ids": SOME},
    "get_recorder_status_for_devices": {"device_ids": SOME},
    "get_storage_status_for_devices": {"device_ids": SOME},
    "get_channel_settings": {"device_id": "19012340103", "channel_id": "2"},
    "get_channel_image": {"device_id": "19012340103", "channel_id": "2"},
    "get_channel_audio_levels": {"device_id": "19012340103", "channel_id": "2"},
    "get_stream_endpoint": {"endpoint_id": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5"},
    "get_stream_endpoints": {},
    "get_team_presets": {},
    "get_cms_events_for_device": {"device_id": "19012340101"},
    "get_cms_events_for_devices": {"device_ids": SOME},
    "get_current_or_next_cms_event_for_device": {"device_id": "19012340101"},
    "get_current_or_next_cms_events_for_devices": {"until": "2026-09-16T23:59:59Z"},
    "get_cms_names_for_devices": {"device_ids": SOME},
    "get_devices_by_cms": {"cms": "panopto"},
    "kb_search": {"query": "firmware update"},
    "kb_fetch": {"id": "disk-space"},
}
WRITE_ARGS = {
    "batch_recording": {"action": "start", "device_ids": ["19012340101-1"]},
    "start_stream_endpoint": {
        "stream_id": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5",
        "device_id": "19012340201",
        "channel_id": "1",
    },
    "stop_stream_endpoint": {
        "stream_id": "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e",
        "device_id": "19012340501",
        "channel_id": "1",
    },
    "create_cms_event": {
        "device_id": "19012340106",
        "title": "Guest lecture",
        "start": "2026-09-16T18:00:00Z",
        "finish": "2026-09-16T19:00:00Z",
    },
    "update_cms_event": {"event_id": "1_c2v6n1xd", "title": "EE 310 Signals and Systems"},
    "delete_cms_event": {"event_id": "d37e1a56-8caa-4b7e-9f6a-2b9c4d8e7fa6"},
    "cms_event_action": {
        "event_id": "9f3a7c12-4e66-4d3a-9b2c-8d5e0f4a3b62",
        "action": "extend",
        "minutes": 15,
    },
    "confirm_cms_event_on_device": {"device_id": "19012340302", "event_id": "lib7f3a2c:1791484740"},
    "create_stream_endpoint": {
        "name": "Backup",
        "type": "rtmp",
        "url": "rtmp://backup.example.net/app",
        "key": "k",
    },
    "update_stream_endpoint": {"endpoint_id": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5", "name": "Main stage"},
    "delete_stream_endpoint": {"endpoint_id": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5"},
    "apply_team_preset": {"preset_id": "3c4d5e6f-7a8b-4c9d-8e1f-2a3b4c5d6e7f", "device_ids": ["19012340106"]},
    "switch_device_to_cms": {"device_id": "19012340105", "cms": "kaltura"},
    "batch_reboot": {"device_ids": ["19012340107"]},
    "batch_firmware_update": {"device_ids": ["19012340104"]},
}
ALL_ARGS = {**READ_ARGS, **WRITE_ARGS}
JSON_READS = sorted(READ_TOOLS - {"get_channel_image"})


def _lab(older: bool = False) -> Lab:
    return make_lab("campus", older_shapes=older, clock=LabClock(START, frozen=True))


def test_the_lab_serves_exactly_the_35_tools_of_epiphan_md():
    assert READ_TOOLS == EPIPHAN_READ
    assert WRITE_TOOLS == EPIPHAN_WRITE
    assert set(READ_ARGS) == READ_TOOLS
    assert set(WRITE_ARGS) == WRITE_TOOLS


def test_tool_listings_mark_reads_read_only_and_disruptive_writes_destructive():
    assert all(TOOLS[n].listing(older_shapes=False).annotations.read_only_hint for n in READ_TOOLS)
    reboot = TOOLS["batch_reboot"].listing(older_shapes=False).annotations
    assert reboot.read_only_hint is False and reboot.destructive_hint is True
    assert TOOLS["start_stream_endpoint"].listing(older_shapes=False).annotations.destructive_hint is False


@pytest.mark.parametrize("name", sorted(EPIPHAN_READ | EPIPHAN_WRITE))
def test_every_tool_refuses_an_argument_it_does_not_declare(name: str):
    tool = TOOLS[name]
    assert tool.input_schema["additionalProperties"] is False
    assert tool.argument_problem(ALL_ARGS[name]) is None
    problem = tool.argument_problem({**ALL_ARGS[name], "bogus": 1})
    assert problem is not None and "bogus" in problem


def test_master_ids_and_channel_ids_never_pass_for_each_other():
    reboot, recording = TOOLS["batch_reboot"], TOOLS["batch_recording"]
    assert reboot.argument_problem({"device_ids": ["19012341234"]}) is None
    assert reboot.argument_problem({"device_ids": ["19012341234-1"]}) is not None
    assert recording.argument_problem({"action": "start", "device_ids": ["19012341234-1"]}) is None
    assert recording.argument_problem({"action": "start", "device_ids": ["19012341234"]}) is not None
    assert recording.argument_problem({"action": "start", "device_ids": ["19012341234-0"]}) is not None
    assert reboot.argument_problem({"device_ids": ["1901234"]}) is not None, "shorter than 8"


def test_an_event_id_with_a_colon_is_accepted_and_one_starting_with_a_colon_is_not():
    confirm = TOOLS["confirm_cms_event_on_device"]
    assert confirm.argument_problem({"device_id": "19012341234", "event_id": "abc123:1791484740"}) is None
    assert confirm.argument_problem({"device_id": "19012341234", "event_id": ":abc"}) is not None


def test_an_argument_problem_names_the_place_and_the_rule():
    problem = TOOLS["batch_reboot"].argument_problem({"device_ids": ["19012341234", "nope"]})
    assert problem == "device_ids[1]: 'nope' does not match '^[0-9a-f]{8,32}$'"
    assert TOOLS["batch_reboot"].argument_problem({}) == "arguments: 'device_ids' is a required property"


@pytest.mark.parametrize("older", [False, True], ids=["current_shapes", "older_shapes"])
async def test_every_read_result_fits_the_output_schema_the_lab_declares(older: bool):
    lab = _lab(older)
    for name in JSON_READS:
        outcome = await lab.call_tool(lab.demo_tokens["normal"], name, READ_ARGS[name])
        assert not outcome.result.is_error, (name, outcome.result.content)
        schema = output_schema(name, write=False, older=older)
        jsonschema.validate(outcome.result.structured_content, schema)


async def test_every_write_with_valid_arguments_works_on_the_campus_and_fits_the_write_result_schema():
    lab = _lab()
    schema = output_schema("batch_reboot", write=True, older=False)
    for name, args in WRITE_ARGS.items():
        outcome = await lab.call_tool(lab.demo_tokens["normal"], name, args)
        assert outcome.result.structured_content == {}, (name, outcome.result.content)
        jsonschema.validate(outcome.result.structured_content, schema)
    assert [w["tool"] for w in lab.writes] == list(WRITE_ARGS)


async def test_a_write_result_names_each_failed_target():
    lab = _lab()
    outcome = await lab.call_tool(
        lab.demo_tokens["normal"], "batch_reboot", {"device_ids": ["19012340204", "19012340101"]}
    )
    jsonschema.validate(
        outcome.result.structured_content, output_schema("batch_reboot", write=True, older=False)
    )
    assert outcome.result.structured_content == {"19012340204": "device offline"}


@pytest.mark.parametrize("name", [*JSON_READS, "batch_reboot", "batch_recording"])  # {} and an error map
async def test_schema_drift_breaks_the_declared_output_schema(name: str):
    lab = _lab()
    lab.set_fault(Fault(tool=name, kind=FaultKind.SCHEMA_DRIFT))
    args = ALL_ARGS[name] if name != "batch_recording" else {"action": "stop", "device_ids": ["1901234a01-1"]}
    outcome = await lab.call_tool(lab.demo_tokens["normal"], name, args)
    data = outcome.result.structured_content
    assert json.loads(outcome.result.content[0].text) == data
    validator = jsonschema.Draft202012Validator(output_schema(name, write=name in WRITE_TOOLS, older=False))
    assert list(validator.iter_errors(data)), f"{name} drifted but still fits: {data}"


async def test_drift_of_the_device_list_is_what_epiphan_md_describes():
    lab = _lab()
    lab.set_fault(Fault(tool="get_devices_in_my_team", kind=FaultKind.SCHEMA_DRIFT))
    outcome = await lab.call_tool(lab.demo_tokens["normal"], "get_devices_in_my_team", {})
    devices = outcome.result.structured_content["devices"]
    warnings = [w for d in devices for w in d["Warnings"]]
    assert warnings and all(w["data"] is None for w in warnings)
    assert all(d["Channels"][0]["recording_status"] is None for d in devices)
    assert all(d["Id"] for d in devices), "the data is still there to read"


async def test_drift_of_recorder_status_sends_lower_case_keys():
    lab = _lab()
    lab.set_fault(Fault(tool="get_recorder_status_for_devices", kind=FaultKind.SCHEMA_DRIFT))
    outcome = await lab.call_tool(
        lab.demo_tokens["normal"], "get_recorder_status_for_devices", {"device_ids": ["19012340103"]}
    )
    device = outcome.result.structured_content["devices"]["19012340103"]
    assert device["name"] == "SCI 201 Lab"
    assert device["channels"]["1"]["recording_status"]["state"] == "recording"
