"""The captures in ``tests/fixtures/captures/`` (the lab's own campus, normal and sandbox
teams): replayed by the lab, they give the live campus's ``fleetwatch fleet --json`` (times
aside), and they hold no token, key, credentialed URL, address or serial number."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.lab.scenario import load_scenario
from services.lab.server import run_lab
from shared.capture import read_capture
from tests.captures import capture_leaks, scenario_secrets
from tests.ctl.cli import sign_in_home
from tests.lab.test_capture_replay import fleet_views, times_aside

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
CAMPUS, SANDBOX = CAPTURES / "campus", CAPTURES / "campus-sandbox"


@pytest.mark.parametrize("folder", [CAMPUS, SANDBOX], ids=lambda p: p.name)
def test_a_committed_capture_holds_no_token_key_credentialed_url_address_or_serial(folder):
    assert capture_leaks(folder, scenario_secrets(load_scenario("campus"))) == []
    manifest = read_capture(folder).manifest
    assert manifest.calls and all(c.error is None and c.problem is None for c in manifest.calls)


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
