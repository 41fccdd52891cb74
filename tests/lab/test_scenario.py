from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from services.lab.scenario import (
    MASTER_ID,
    SCENARIO_DIR,
    ScenarioError,
    generate_fleet,
    load_scenario,
    with_normal_team,
)

CAMPUS_FILE = SCENARIO_DIR / "campus.yaml"


def _devices(scenario, team):
    return [d for _g, d in scenario.team(team).devices()]


def test_campus_has_about_thirty_devices_in_several_groups_and_a_small_sandbox():
    campus = load_scenario("campus")
    assert len(_devices(campus, "normal")) == 30
    assert len(campus.teams.normal.groups) >= 5
    assert 1 <= len(_devices(campus, "sandbox")) <= 5
    normal_ids = {d.id for d in _devices(campus, "normal")}
    sandbox_ids = {d.id for d in _devices(campus, "sandbox")}
    assert not normal_ids & sandbox_ids
    assert campus.teams.normal.team_id != campus.teams.sandbox.team_id
    assert all(MASTER_ID.match(i) and len(i) == 11 and i.isdigit() for i in normal_ids | sandbox_ids)


def test_campus_has_the_real_world_mix():
    campus = load_scenario("campus")
    devices = _devices(campus, "normal")
    models = Counter(d.model for d in devices)
    assert set(models) >= {"Pearl-2", "Pearl Mini", "Pearl Nano", "Pearl Nexus", "EC20"}
    behind = [d for d in devices if d.firmware != campus.firmware_latest[d.model]]
    assert len(behind) >= 5
    assert sum(d.status == "offline" for d in devices) >= 2
    assert any(not s.signal for d in devices for s in d.sources), "a dark channel"
    assert any(d.storage is None for d in devices), "no storage"
    assert any(d.storage and d.storage.free_gb / d.storage.total_gb < 0.1 for d in devices), "disk low"
    assert any(d.cpu_load_pct >= 90 and d.cpu_temp_c >= 80 for d in devices), "a hot CPU"
    assert any(d.status == "online" and d.state_minutes_ago < 30 for d in devices), "a recent reboot"
    starts = [e.start_in_minutes for e in campus.teams.normal.events]
    assert sum(0 < s <= 60 for s in starts) >= 3, "classes within the hour"
    assert sum(60 < s <= 12 * 60 for s in starts) >= 3, "classes later today"
    assert any(
        s < 0 < s + e.duration_minutes for s, e in zip(starts, campus.teams.normal.events, strict=True)
    )
    assert any(":" in e.id for e in campus.teams.normal.events), "the live-shaped event ID with a colon"


def test_a_device_in_both_teams_is_refused_naming_it(tmp_path: Path):
    text = CAMPUS_FILE.read_text()
    clash = text.replace('"29088800003"', '"19012340101"')
    path = tmp_path / "clash.yaml"
    path.write_text(clash)
    with pytest.raises(ScenarioError, match=r"sandbox device '19012340101': already in team normal"):
        load_scenario(path)


def test_an_unquoted_numeric_device_id_is_refused_with_its_place(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text(CAMPUS_FILE.read_text().replace('id: "29088800003"', "id: 29088800003"))
    with pytest.raises(
        ScenarioError, match=r"Expected `str`, got `int`.*\$\.teams\.sandbox\.groups\[0\]\.devices\[2\]"
    ):
        load_scenario(path)


def test_an_event_on_another_teams_device_is_refused(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text(CAMPUS_FILE.read_text().replace('device: "29088800003",', 'device: "19012340101",'))
    with pytest.raises(ScenarioError, match=r"device '19012340101' not in this team"):
        load_scenario(path)


def test_an_unknown_scenario_name_lists_the_bundled_ones():
    with pytest.raises(ScenarioError, match=r"bundled: .*campus"):
        load_scenario("no-such-scenario")


def test_the_generator_makes_the_fleet_size_asked_deterministically():
    first = generate_fleet(1200, seed=7)
    again = generate_fleet(1200, seed=7)
    other = generate_fleet(1200, seed=8)
    assert first == again
    assert first != other
    devices = _devices(first, "normal")
    assert len(devices) == 1200
    assert len({d.id for d in devices}) == 1200
    assert all(len(g.devices) <= 25 for g in first.teams.normal.groups)
    assert not {d.id for d in devices} & {d.id for d in _devices(first, "sandbox")}


def test_a_generated_fleet_has_the_real_world_mix():
    fleet = generate_fleet(3000, seed=1)
    devices = _devices(fleet, "normal")
    offline = sum(d.status == "offline" for d in devices)
    assert 0.01 * 3000 < offline < 0.06 * 3000
    assert any(d.storage is None for d in devices)
    assert any(d.cpu_load_pct >= 90 for d in devices)
    assert len(fleet.teams.normal.events) > 0.3 * 3000
    assert len({d.model for d in devices}) == 5
    sandbox = _devices(fleet, "sandbox")
    assert all(d.status == "online" and d.storage is not None for d in sandbox)


def test_a_generated_normal_team_can_replace_the_campus_one_keeping_its_sandbox():
    campus = load_scenario("campus")
    mixed = with_normal_team(campus, generate_fleet(100).teams.normal, name="campus+100")
    assert len(_devices(mixed, "normal")) == 100
    assert mixed.teams.sandbox == campus.teams.sandbox
    assert mixed.name == "campus+100"
