"""The captures in ``tests/fixtures/captures/`` (the lab's own campus, normal and sandbox
teams): replayed by the lab, they give the live campus's ``fleetwatch fleet --json`` (times
aside), and they hold no token, key, credentialed URL, address or serial number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.lab.scenario import load_scenario
from services.lab.server import run_lab
from shared.epiphan.capture import read_capture
from tests.captures import capture_leaks, scenario_secrets
from tests.ctl.cli import run_cli_async, sign_in_home
from tests.lab.test_capture_replay import fleet_views, times_aside

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
CAMPUS, SANDBOX = CAPTURES / "campus", CAPTURES / "campus-sandbox"
COMMITTED = sorted(p.parent for p in CAPTURES.glob("*/manifest.json"))
"""Every capture folder committed here (a live run's, sent back, joins them)."""


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda p: p.name)
def test_a_committed_capture_holds_no_token_key_credentialed_url_address_or_serial(folder):
    assert capture_leaks(folder, scenario_secrets(load_scenario("campus"))) == []
    assert read_capture(folder).manifest.calls


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda p: p.name)
async def test_a_committed_capture_is_served_by_the_lab_and_read_by_fleet(folder, tmp_path):
    devices = [d for c, d in read_capture(folder).answers("get_devices_in_my_team")][0]["devices"]
    async with run_lab("campus", capture=folder, sandbox_devices=2) as replayed:  # no ID of the campus
        sign_in_home(tmp_path, replayed)
        code, out, err = await run_cli_async("fleet", "--json", home=tmp_path)
    assert code == 0, err
    assert [d["id"] for d in json.loads(out)["snapshot"]["devices"]] == [d["Id"] for d in devices]


def test_the_campus_captures_have_every_answer_in_a_shape_fleetwatch_reads():
    for folder in (CAMPUS, SANDBOX):
        manifest = read_capture(folder).manifest
        assert all(c.error is None and c.problem is None for c in manifest.calls)
        assert set(manifest.proposable.values()) == {"same arguments"}


async def test_the_campus_capture_replayed_gives_the_live_campus_view_times_aside(tmp_path):
    async with (
        run_lab("campus") as live,
        run_lab("campus", capture=CAMPUS, capture_sandbox=SANDBOX) as replayed,
    ):
        sign_in_home(tmp_path / "live", live)
        sign_in_home(tmp_path / "replay", replayed)
        seen, again = await fleet_views((tmp_path / "live", tmp_path / "replay"))
        assert [d.id for d in replayed.state.devices.values() if d.team == "sandbox"] == list(
            live.teams["sandbox"].device_ids
        )
    assert len(seen["snapshot"]["devices"]) == 30
    assert times_aside(again) == times_aside(seen)
