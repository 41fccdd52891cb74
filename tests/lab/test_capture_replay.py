"""A capture served back by the lab (``--capture DIR``): ``fleetwatch capture`` → the lab →
``fleetwatch fleet --json`` equals the live ``fleet --json`` (times aside), for the campus and
a generated 500-device fleet; the captured shapes, and answers in no known shape, are served as
they were; and the lab runs a capture as a real process (``fleetwatch lab --capture``)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from services.lab.__main__ import main as lab_main
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.epiphan.capture import read_capture
from shared.epiphan.slots import SignIn, write_slot
from tests.ctl.cli import run_cli_async, sign_in_home

TIMES = frozenset({"taken_at", "state_time", "recording_since", "up_since", "start", "finish"})
"""The fields of ``fleet --json`` that are times (a replay shifts them to the lab's clock)."""


def times_aside(value: Any) -> Any:
    """`value` without its time fields (and a finding's ``minutes_ago``)."""
    if isinstance(value, dict):
        return {k: times_aside(v) for k, v in value.items() if k not in TIMES and k != "minutes_ago"}
    if isinstance(value, list):
        return [times_aside(v) for v in value]
    return value


async def capture_of(lab: LabHandle, home: Path, folder: Path, team: str = "normal") -> Path:
    sign_in_home(home, lab, team)
    code, _, err = await run_cli_async("capture", str(folder), home=home, timeout=170)
    assert code == 0, err
    return folder


async def fleet_views(homes: tuple[Path, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``fleet --json`` in both homes at once (the two processes judge findings at nearly the
    same moment); run again once when their findings differ, since a finding can change at a
    whole minute between two processes' clocks."""
    for _ in range(2):
        results = await asyncio.gather(
            *(run_cli_async("fleet", "--json", home=h, timeout=120) for h in homes)
        )
        for code, _, err in results:
            assert code == 0, err
        live, replayed = (json.loads(out) for _, out, _ in results)
        for view in (live, replayed):
            # The rooms a change may target are the executor's to read, and neither home runs one:
            # both say so, each naming its own home's socket.
            assert view.pop("sandbox_rooms_not_read")["code"] == "service_unavailable", view
        if live["findings"] == replayed["findings"]:
            break
    return live, replayed


@pytest.mark.parametrize("devices", [None, 500])
async def test_capture_then_the_lab_then_fleet_json_equals_the_live_view(tmp_path, devices):
    async with run_lab("campus", devices=devices) as live:
        folder = await capture_of(live, tmp_path / "live", tmp_path / "capture")
        captured = read_capture(folder).manifest.captured
        async with run_lab("campus", capture=folder, clock=LabClock(captured, frozen=True)) as replayed:
            sign_in_home(tmp_path / "replay", replayed)
            seen, again = await fleet_views((tmp_path / "live", tmp_path / "replay"))
    assert len(seen["snapshot"]["devices"]) == (devices or 30) and seen["findings"]
    assert times_aside(again) == times_aside(seen)
    seen["snapshot"].pop("taken_at"), again["snapshot"].pop("taken_at")
    assert again["snapshot"] == seen["snapshot"], "with the lab's clock at the capture, even times agree"


async def test_the_captured_shapes_are_served_as_they_were(tmp_path):
    shapes = {
        "get_system_status_for_devices": "keyed_devices",
        "get_current_or_next_cms_events_for_devices": "keyed_devices",
        "get_recorder_status_for_devices": "lower_case",
    }
    async with run_lab("campus", shapes=shapes) as live:
        folder = await capture_of(live, tmp_path / "live", tmp_path / "capture")
    manifest = read_capture(folder).manifest
    assert {c.tool: c.shape for c in manifest.calls if c.tool in shapes} == shapes
    async with run_lab("campus", capture=folder) as replayed:
        assert replayed.lab.settings.shape_map() == shapes
        sign_in_home(tmp_path / "replay", replayed)
        code, out, err = await run_cli_async("fleet", home=tmp_path / "replay")
    assert code == 0 and "could not be read" not in out, err


async def test_an_answer_in_no_known_shape_is_served_as_it_was_and_marked_on_the_view(tmp_path):
    async with run_lab("campus") as live:
        live.set_fault("get_system_status_for_devices", "schema_drift")
        folder = await capture_of(live, tmp_path / "live", tmp_path / "capture")
    async with run_lab("campus", capture=folder) as replayed:
        sign_in_home(tmp_path / "replay", replayed)
        code, out, err = await run_cli_async("fleet", home=tmp_path / "replay")
    assert code == 0, err
    assert (
        "CPU, temperature and uptime: could not be read: get_system_status_for_devices: no known shape" in out
    )


async def test_a_captured_room_keeps_its_stale_recording_and_its_offline_time(tmp_path):
    async with run_lab("campus") as live:
        folder = await capture_of(live, tmp_path / "live", tmp_path / "capture")
    async with run_lab("campus", capture=folder) as replayed:
        room = replayed.state.devices["19012340302"]
        assert not room.online and room.channels[0].recording
        offline_minutes = (replayed.now - room.state_time).total_seconds() / 60
    assert 2880 <= offline_minutes < 2882


async def _ready(path: Path, process: asyncio.subprocess.Process, seconds: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while not path.exists():  # polling a real external process, hard-bounded
        assert process.returncode is None, (await process.communicate())[1].decode()
        assert time.monotonic() < deadline, "the lab did not become ready in time"
        await asyncio.sleep(0.05)
    return json.loads(path.read_text())


async def test_fleetwatch_lab_serves_a_capture_folder_as_a_real_process(tmp_path):
    async with run_lab("campus") as live:
        folder = await capture_of(live, tmp_path / "live", tmp_path / "capture")
    ready = tmp_path / "lab.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.ctl.main",
        "lab",
        "--capture",
        str(folder),
        "--port",
        "0",
        "--ready-file",
        str(ready),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        info = await _ready(ready, process)
        async with httpx2.AsyncClient(base_url=info["url"]) as http:
            state = (await http.get("/_lab/state")).json()
        normal = next(t for t in state["teams"] if t["name"] == "normal")
        home = tmp_path / "home"
        write_slot(
            home / "tokens" / "read.json",
            SignIn(
                access_token=normal["token"], server=info["mcp_url"], team_id=normal["team_id"], kind="lab"
            ),
        )
        code, out, err = await run_cli_async("fleet", "--json", home=home)
        assert code == 0, err
        assert len(json.loads(out)["snapshot"]["devices"]) == 30
        process.send_signal(signal.SIGTERM)
        stdout, _ = await asyncio.wait_for(process.communicate(), timeout=20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0 and "capture:capture" in stdout.decode()


def test_a_folder_that_is_not_a_capture_is_refused_with_one_line(tmp_path, capsys):
    assert lab_main(["--capture", str(tmp_path), "--port", "0"]) == 2
    assert "no readable manifest.json" in capsys.readouterr().err


def publisher_settings(devices: dict[str, Any]) -> dict[tuple[str, str, str], list[Any]]:
    """Each publisher's settings, as (room, channel, publisher) -> [(id, type, title, value)]."""
    return {
        (d["Name"], c["channel_id"], p["id"]): [
            (s["id"], s["type"]["name"], s["title"], s["value"]) for s in p["settings"]
        ]
        for d in devices["devices"]
        for c in d["Channels"]
        for p in c.get("Publishers", [])
    }


async def test_a_pearl_s_publisher_settings_are_captured_as_placeholders_and_served_back_in_their_shape(
    tmp_path,
):
    async with run_lab("campus") as live:
        folder = await capture_of(live, tmp_path / "live", tmp_path / "capture")
    (captured,) = [d for _, d in read_capture(folder).answers("get_devices_in_my_team")]
    kept = publisher_settings(captured)
    recital = dict((i, v) for i, _, _, v in kept[("ART Recital Hall", "2", "3")])
    srt = dict((i, v) for i, _, _, v in kept[("LIB Media Studio", "2", "2")])
    placeholders = [recital["stream"], recital["password"], srt["streamid"], srt["passphrase"]]
    assert (
        all(re.fullmatch(r"redacted-secret-[0-9]+", p) for p in placeholders) and len(set(placeholders)) == 4
    )
    assert recital["username"] == "recital-caster" and srt["url"] == "srt://srt.example.net:9000"
    streams = {v for key, rows in kept.items() if key[2] == ENDPOINT for i, _, _, v in rows if i == "stream"}
    assert len(streams) == 1  # one destination's key, one placeholder in both rooms
    async with run_lab("campus", capture=folder) as replayed:
        outcome = await replayed.lab.call_tool(
            replayed.lab.demo_tokens["normal"], "get_devices_in_my_team", {}
        )
    assert publisher_settings(outcome.result.structured_content) == kept


ENDPOINT = "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5"
"""The campus's YouTube destination, started from two rooms."""
