"""What reaches the model, end to end: a real question through the real SDK to the stand-in
(which records every request), with the campus lab answering every read tool the model may use.
No device IP address, serial number, stream key, publisher password, SRT stream ID or passphrase
of the lab's fleet may be in any request body; the rest of the fleet data (user names too) must
be."""

from __future__ import annotations

import json
import logging

from services.lab.model_standin import Reply, ToolUse
from services.lab.state import Device
from shared.epiphan.model_data import WITHHELD
from shared.epiphan.redact import REDACTED
from shared.wire.executor import WritableChannel, WritableDevice, WritableDevices
from tests.assistant.helpers import (
    DEVICES,
    SANDBOX_CLASSROOM,
    FakeSink,
    error_codes,
    result_payloads,
    sequence,
)

UNTIL = "2026-09-17T13:00:00Z"
SCI101, SCI201, ENG101, LAW_MOOT = "19012340101", "19012340103", "19012340201", "19012340501"
LIB_STUDIO, ART_RECITAL = "19012340301", "19012340403"
ROOMS = (SCI101, SCI201, ENG101, LAW_MOOT, LIB_STUDIO, ART_RECITAL)


def publisher_secrets(devices: list[Device]) -> list[str]:
    """Every secret a Pearl publisher's settings carry in the lab: its stream (the key), password,
    SRT stream ID and passphrase."""
    return sorted(
        {
            value
            for d in devices
            for c in d.channels
            for p in c.publishers
            for value in (p.key, p.password, p.streamid, p.passphrase)
            if value
        }
    )


def _calls(*calls: tuple[str, dict]) -> Reply:
    return Reply(tuple(ToolUse(name, arguments) for name, arguments in calls))


def _every_read_tool(device_ids: list[str], endpoint_ids: list[str]) -> list[Reply]:
    """Model turns that call each read tool the model is offered, on the campus normal team."""
    per_room = [
        call
        for room in ROOMS
        for call in (
            ("get_device_info", {"device_id": room}),
            ("get_device_sources", {"device_id": room}),
            ("get_channel_settings", {"device_id": room, "channel_id": "1"}),
            ("get_channel_audio_levels", {"device_id": room, "channel_id": "1"}),
        )
    ]
    many = {"device_ids": device_ids}
    return [
        _calls(
            (DEVICES, {}),
            ("get_stream_endpoints", {}),
            ("get_team_presets", {}),
            ("kb_search", {"query": "stream key"}),
        ),
        _calls(*per_room, *(("get_stream_endpoint", {"endpoint_id": e}) for e in endpoint_ids)),
        _calls(
            ("get_system_status_for_devices", many),
            ("get_recorder_status_for_devices", many),
            ("get_storage_status_for_devices", many),
            ("get_cms_events_for_devices", many),
            ("get_current_or_next_cms_events_for_devices", {"until": UNTIL}),
            ("get_cms_names_for_devices", many),
            ("get_devices_by_cms", {"cms": "panopto"}),
            ("get_cms_events_for_device", {"device_id": SCI201}),
            ("get_current_or_next_cms_event_for_device", {"device_id": SCI101}),
            ("kb_fetch", {"id": "rtmp-streaming"}),
        ),
        _calls(("list_writable_devices", {})),
    ]


async def test_no_ip_address_serial_number_or_stream_secret_of_the_campus_fleet_reaches_the_model(
    lab, standin, make_assistant, caplog
):
    caplog.set_level(logging.DEBUG)
    devices = list(lab.state.devices.values())
    ips, serials = {d.ip for d in devices}, {d.serial for d in devices}
    assert len(ips) >= 30 and len(serials) >= 30
    room = lab.state.devices[SCI101]
    room.name = f"SCI 101 Lecture Hall ({room.ip}, {room.serial})"
    sandbox = lab.state.devices[SANDBOX_CLASSROOM]
    sink = FakeSink(
        writable_reply=WritableDevices(
            devices=(
                WritableDevice(
                    device_id=SANDBOX_CLASSROOM,
                    name=f"Sandbox Classroom {sandbox.ip}",
                    model="Pearl Mini",
                    online=True,
                    channels=(WritableChannel(channel_id="1", name="Lecture", recording=False),),
                ),
            ),
            read_at="2026-09-16T13:00:00.000Z",
        )
    )
    endpoints = list(lab.state.teams["normal"].endpoints.values())
    normal_ids = list(lab.teams["normal"].device_ids)
    standin.set_script(sequence(*_every_read_tool(normal_ids, [e.id for e in endpoints])))

    answer = await make_assistant(sink=sink).ask(
        f"Which rooms need attention? The log says SCI 101 at {room.ip} lost password=hunter2"
    )

    assert answer.answered_by == "model" and error_codes(standin.requests) == []
    payloads = json.dumps([result_payloads(r) for r in standin.requests], ensure_ascii=False)
    bodies = "\n".join(json.dumps(r.body, ensure_ascii=False) for r in standin.requests) + payloads
    assert [ip for ip in sorted(ips) if ip in bodies] == []
    assert [serial for serial in sorted(serials) if serial in bodies] == []
    secrets = [e.key for e in endpoints if e.key] + ["Lib-Stream-Passphrase-91", "lib-main", "Sup3rSecret"]
    secrets += publisher_secrets(devices)
    assert len(secrets) >= 8
    assert [s for s in secrets if s in bodies] == [] and "hunter2" not in bodies
    ours = [r for r in caplog.records if r.name.split(".")[0] in ("services", "shared")]
    assert ours and [r.name for r in ours if any(s in r.getMessage() for s in secrets)] == []  # nor our log
    assert "recital-caster" in bodies and "rtmp://recital.example.net/" in bodies  # a user name is no secret
    assert f"SCI 101 Lecture Hall ({WITHHELD}, {WITHHELD})" in bodies
    assert f"Sandbox Classroom {WITHHELD}" in bodies and f"SCI 101 at {WITHHELD} lost" in bodies
    assert f"srt://ingest.example.com:9000?streamid={REDACTED}&passphrase={REDACTED}" in bodies
    names = [
        d.name for d in devices if d.team == "normal" and d.id != SCI101 and not set(d.name) & set("<>&")
    ]
    shown = [*names, "4.24.6", "Pearl Nexus", ENG101]
    assert [s for s in shown if s not in bodies] == []
