from __future__ import annotations

import base64
import re
import struct
import zlib
from typing import Any
from urllib.parse import urlsplit

from services.lab.lab import Lab
from services.lab.server import make_lab
from services.lab.state import LabClock
from shared.epiphan.fleet import StorageStatus, parse_storage_status
from tests.lab.conftest import START

DEVICE_KEYS = {
    "Id",
    "Name",
    "Model",
    "GroupId",
    "GroupName",
    "Firmware",
    "Status",
    "StateTime",
    "IPAddress",
    "SerialNumber",
    "Channels",
    "Warnings",
}


async def _read(lab: Lab, name: str, args: dict[str, Any] | None = None, team: str = "normal") -> Any:
    outcome = await lab.call_tool(lab.demo_tokens[team], name, args or {})
    assert not outcome.result.is_error, outcome.result.content
    return outcome.result.structured_content


async def _error(lab: Lab, name: str, args: dict[str, Any], team: str = "normal") -> str:
    outcome = await lab.call_tool(lab.demo_tokens[team], name, args)
    assert outcome.result.is_error
    return outcome.result.content[0].text


async def test_the_device_list_uses_epiphans_keys_and_casing(campus: Lab):
    data = await _read(campus, "get_devices_in_my_team")
    assert data["team_id"] == "5b1f0c2e-8d3a-4c71-9e0b-2f6a7d4c1e90"
    device = next(d for d in data["devices"] if d["Id"] == "19012340501")
    assert set(device) == DEVICE_KEYS
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", device["StateTime"])
    channel = device["Channels"][0]
    assert set(channel) == {"channel_id", "name", "recording_status", "Publishers"}
    assert channel["channel_id"] == "1"
    assert channel["recording_status"]["state"] == "recording"
    assert channel["recording_status"]["timestamp"] == str(int(START.timestamp()) - 30 * 60)
    publisher = channel["Publishers"][0]
    assert set(publisher) == {"id", "type", "status", "settings"}
    assert set(publisher["status"]) == {"state", "started", "since", "description"}
    assert publisher["status"]["started"] is True
    assert [s["id"] for s in publisher["settings"]] == ["url", "stream", "username", "password"]
    assert set(publisher["settings"][0]) == {"id", "type", "title", "value"}


async def test_warnings_carry_the_ids_and_data_epiphan_sends(campus: Lab):
    devices = {d["Name"]: d for d in (await _read(campus, "get_devices_in_my_team"))["devices"]}
    (no_storage,) = devices["LAW 102"]["Warnings"]
    assert no_storage["id"] == "no_storage_detected" and no_storage["data"] is None
    (disk,) = devices["ART 110 Black Box"]["Warnings"]
    assert disk["id"] == "disk_space_error"
    assert disk["data"] == {"free": 14_500_000_000, "total": 931_000_000_000, "state": "critical"}
    assert devices["ART 120 Studio"]["Warnings"][0]["data"]["state"] == "low"
    (source,) = devices["SCI 201 Lab"]["Warnings"]
    assert source == {
        "id": "source_no_signal",
        "label": "No signal",
        "message": "No signal on SDI-A.",
        "data": {"source_name": "SDI-A"},
    }
    dark = devices["SCI 201 Lab"]["Channels"][1]
    assert dark["Warnings"][0]["id"] == "channel_no_signal"
    assert dark["Warnings"][0]["data"] == {"channel_name": "Camera 2"}
    assert "Warnings" not in devices["SCI 201 Lab"]["Channels"][0]


async def test_the_team_id_is_left_out_when_the_lab_does_not_expose_it():
    lab = make_lab("campus", expose_team_id=False, clock=LabClock(START, frozen=True))
    data = await _read(lab, "get_devices_in_my_team")
    assert set(data) == {"devices"}


async def test_a_device_of_the_other_team_reads_exactly_like_a_missing_one(campus: Lab):
    other = await _error(campus, "get_device_info", {"device_id": "29088800001"})
    missing = await _error(campus, "get_device_info", {"device_id": "29088800099"})
    assert other == "Device not found: 29088800001"
    assert missing == "Device not found: 29088800099"
    status = await _read(
        campus, "get_system_status_for_devices", {"device_ids": ["29088800001", "19012340101"]}
    )
    assert [row["device_id"] for row in status["status"]] == ["19012340101"]


async def test_system_status_reports_load_temperature_and_uptime_and_nulls_when_offline(campus: Lab):
    data = await _read(
        campus, "get_system_status_for_devices", {"device_ids": ["19012340202", "19012340102", "19012340204"]}
    )
    hot, rebooted, offline = data["status"]
    assert (hot["cpu_load_pct"], hot["cpu_temp_c"]) == (94.0, 83.0)
    assert rebooted["uptime_since"] == "2026-09-16T12:48:00Z"
    assert offline == {
        "device_id": "19012340204",
        "cpu_load_pct": None,
        "cpu_temp_c": None,
        "uptime_since": None,
    }


async def test_stream_endpoints_carry_keys_and_credential_looking_urls_on_example_hosts(campus: Lab):
    data = await _read(campus, "get_stream_endpoints")
    endpoints = data["stream_endpoints"]
    assert all(re.fullmatch(r"[0-9a-f-]{36}", e["id"]) for e in endpoints)
    assert any(e["key"] and e["key"].startswith("live_sk_") for e in endpoints)
    assert any("passphrase=" in e["url"] for e in endpoints)
    assert any(urlsplit(e["url"]).password for e in endpoints)
    hosts = {urlsplit(e["url"]).hostname for e in endpoints}
    assert all(h.endswith((".example.net", ".example.com")) for h in hosts)
    one = await _read(campus, "get_stream_endpoint", {"endpoint_id": endpoints[0]["id"]})
    assert one == endpoints[0]


async def test_a_dark_channel_shows_a_black_picture_and_silence(campus: Lab):
    outcome = await campus.call_tool(
        campus.demo_tokens["normal"], "get_channel_image", {"device_id": "19012340103", "channel_id": "2"}
    )
    block = outcome.result.content[0]
    assert block.type == "image" and block.mime_type == "image/png"
    png = base64.b64decode(block.data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    (length,) = struct.unpack(">I", png[33:37])
    assert png[37:41] == b"IDAT"
    pixels = zlib.decompress(png[41 : 41 + length])
    assert set(pixels) == {0}
    levels = await _read(campus, "get_channel_audio_levels", {"device_id": "19012340103", "channel_id": "2"})
    assert levels["silent"] is True
    live = await _read(campus, "get_channel_audio_levels", {"device_id": "19012340103", "channel_id": "1"})
    assert live["silent"] is False


async def test_the_picture_of_an_offline_device_is_an_error(campus: Lab):
    assert (
        await _error(campus, "get_channel_image", {"device_id": "19012340204", "channel_id": "1"})
        == "Device is offline: 19012340204"
    )


async def test_current_or_next_events_use_finish_and_null_when_nothing_is_scheduled(campus: Lab):
    data = await _read(
        campus,
        "get_current_or_next_cms_events_for_devices",
        {"device_ids": ["19012340101", "19012340103", "19012340104"], "until": "2026-09-16T14:00:00Z"},
    )
    by_device = {row["device_id"]: row["event"] for row in data["events"]}
    assert by_device["19012340104"] is None
    chem = by_device["19012340101"]
    assert (chem["title"], chem["start"], chem["finish"]) == (
        "CHEM 201 Organic Chemistry",
        "2026-09-16T13:40:00Z",
        "2026-09-16T14:55:00Z",
    )
    assert chem["status"] == "scheduled" and chem["confirmed"] is True and chem["cms"] == "panopto"
    assert chem["devices"] == [
        {
            "device_id": "19012340101",
            "channels": [
                {"channel_id": "1", "recording": True, "streaming": False},
                {"channel_id": "2", "recording": True, "streaming": False},
            ],
        }
    ]
    assert by_device["19012340103"]["status"] == "in_progress"


async def test_current_or_next_events_without_device_ids_cover_the_whole_team(campus: Lab):
    data = await _read(
        campus, "get_current_or_next_cms_events_for_devices", {"until": "2026-09-16T23:00:00Z"}
    )
    assert len(data["events"]) == 30


async def test_a_time_that_fits_the_pattern_but_is_not_a_date_is_refused(campus: Lab):
    text = await _error(
        campus, "get_current_or_next_cms_events_for_devices", {"until": "2026-13-45T00:00:00Z"}
    )
    assert text.startswith("Invalid arguments for get_current_or_next_cms_events_for_devices: not a UTC time")


async def test_cms_names_and_devices_by_cms_agree(campus: Lab):
    names = await _read(campus, "get_cms_names_for_devices", {"device_ids": ["19012340101", "19012340201"]})
    assert names["devices"] == [
        {"device_id": "19012340101", "cms": "panopto"},
        {"device_id": "19012340201", "cms": "kaltura"},
    ]
    kaltura = await _read(campus, "get_devices_by_cms", {"cms": "Kaltura"})
    assert {"device_id": "19012340201", "name": "ENG 101 Auditorium"} in kaltura["devices"]


async def test_the_knowledge_base_finds_and_fetches_articles(campus: Lab):
    found = await _read(campus, "kb_search", {"query": "firmware update"})
    assert found["results"][0]["id"] == "pearl-firmware-update"
    article = await _read(campus, "kb_fetch", {"id": "pearl-firmware-update"})
    assert "five minutes" in article["content"]
    assert await _error(campus, "kb_fetch", {"id": "nope"}) == "Article not found: nope"
    assert found["low_confidence"] is False


async def test_a_question_the_knowledge_base_does_not_cover_is_answered_with_low_confidence(campus: Lab):
    found = await _read(campus, "kb_search", {"query": "zebra telepathy calibration"})
    assert found["low_confidence"] is True
    assert found["results"]  # like the live server: weak results come back all the same


async def test_the_sandbox_token_reads_only_the_sandbox_team(campus: Lab):
    data = await _read(campus, "get_devices_in_my_team", team="sandbox")
    assert [d["Id"] for d in data["devices"]] == ["29088800001", "29088800002", "29088800003", "29088800004"]
    assert data["team_id"] == "9e7d3c1a-4b2f-4e8d-a6c5-0f1e2d3c4b5a"
    presets = await _read(campus, "get_team_presets", team="sandbox")
    assert [p["name"] for p in presets["presets"]] == ["Sandbox default"]


async def test_publishers_carry_a_pearl_s_own_secret_settings_rtmp_stream_and_sign_in_srt_stream_id_and_passphrase(
    campus: Lab,
):
    devices = {d["Name"]: d for d in (await _read(campus, "get_devices_in_my_team"))["devices"]}

    def settings(room: str, channel: str) -> dict[str, tuple[str, str, Any]]:
        (publisher,) = next(c for c in devices[room]["Channels"] if c["channel_id"] == channel)["Publishers"]
        return {s["id"]: (s["type"]["name"], s["title"], s["value"]) for s in publisher["settings"]}

    assert settings("ART Recital Hall", "2") == {
        "url": ("string", "URL", "rtmp://recital.example.net/live"),
        "stream": ("string", "Stream", "arh_9d1e7c2b4a"),
        "username": ("string", "Username", "recital-caster"),
        "password": ("password", "Password", "Recital-Pw-2208"),
    }
    assert settings("LIB Media Studio", "2") == {
        "url": ("string", "URL", "srt://srt.example.net:9000"),
        "streamid": ("string", "Stream ID", "#!::u=lib-caster,r=live/lib-host-cam-7d41,m=publish"),
        "passphrase": ("password", "Passphrase", "Lib-Host-Passphrase-4417"),
    }
    assert settings("ENG 101 Auditorium", "1")["stream"][2] == "live_sk_7c9f2e41a0b3d58e6f1a2b3c"


async def test_an_offline_devices_storage_state_is_the_empty_string_storage_unknown(campus: Lab):
    storage = await _read(
        campus, "get_storage_status_for_devices", {"device_ids": ["19012340204", "19012340101"]}
    )
    rows = {row["device_id"]: row for row in storage["storage"]}
    assert rows["19012340204"] == {"device_id": "19012340204", "state": "", "free": 0, "total": 0}  # ENG 210
    assert rows["19012340101"]["state"] == "ok" and rows["19012340101"]["total"] > 0
    parsed = parse_storage_status(storage)
    assert parsed["19012340204"] == StorageStatus("19012340204", "unknown")
