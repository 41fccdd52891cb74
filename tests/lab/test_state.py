from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.lab.scenario import load_scenario
from services.lab.state import (
    FIRMWARE_INSTALL_SECONDS,
    FIRMWARE_REBOOT_SECONDS,
    REBOOT_SECONDS,
    LabClock,
    World,
)

START = datetime(2026, 9, 16, 13, 0, 0, tzinfo=UTC)
SANDBOX_PEARL2 = "29088800001"
SANDBOX_MINI = "29088800002"


@pytest.fixture
def world() -> World:
    return World.build(load_scenario("campus"), START)


def test_a_frozen_clock_moves_only_when_told_and_restarts_where_it_began():
    clock = LabClock(START, frozen=True)
    assert clock.now() == START
    clock.advance(90)
    assert clock.now() == START + timedelta(seconds=90)
    clock.set(datetime(2027, 1, 1, tzinfo=UTC))
    assert clock.now() == datetime(2027, 1, 1, tzinfo=UTC)
    clock.restart()
    assert clock.now() == START


def test_a_running_clock_follows_the_wall_plus_the_offset():
    wall = [1_000_000.0]
    clock = LabClock(wall=lambda: wall[0])
    assert clock.now() == datetime.fromtimestamp(1_000_000, UTC)
    wall[0] += 5
    clock.advance(60)
    assert clock.now() == datetime.fromtimestamp(1_000_065, UTC)


def test_a_naive_time_is_refused_by_the_clock():
    with pytest.raises(ValueError, match="timezone-aware"):
        LabClock(datetime(2026, 1, 1), frozen=True)


def test_events_are_placed_relative_to_when_the_world_is_built(world: World):
    event = world.events["8e2f6b01-3d55-4c2f-8a1b-7c4d9e3f2a51"]
    assert event.start == START + timedelta(minutes=40)
    assert event.finish == START + timedelta(minutes=115)
    assert event.status(START) == "scheduled"
    assert event.status(START + timedelta(minutes=41)) == "in_progress"
    assert event.status(START + timedelta(minutes=116)) == "completed"


def test_a_reboot_takes_the_device_offline_until_ninety_seconds_have_passed(world: World):
    device = world.team_device("sandbox", SANDBOX_MINI, START)
    assert device is not None and device.online and device.channels[0].recording
    assert world.reboot(device, START) is None
    assert not device.online and not device.channels[0].recording
    assert (
        world.team_device("sandbox", SANDBOX_MINI, START + timedelta(seconds=REBOOT_SECONDS - 1)).online
        is False
    )
    back = world.team_device("sandbox", SANDBOX_MINI, START + timedelta(seconds=REBOOT_SECONDS))
    assert back.online
    assert back.up_since == back.state_time == START + timedelta(seconds=REBOOT_SECONDS)


def test_a_rebooting_device_refuses_another_reboot_as_offline(world: World):
    device = world.team_device("sandbox", SANDBOX_MINI, START)
    world.reboot(device, START)
    assert world.reboot(device, START + timedelta(seconds=10)) == "device offline"


def test_a_firmware_update_installs_then_reboots_then_reports_the_new_version(world: World):
    device = world.team_device("sandbox", SANDBOX_PEARL2, START)
    assert device.firmware == "4.24.3"
    assert world.update_firmware(device, START) is None
    during = world.team_device(
        "sandbox", SANDBOX_PEARL2, START + timedelta(seconds=FIRMWARE_INSTALL_SECONDS - 1)
    )
    assert during.online and during.firmware == "4.24.3"
    assert world.reboot(during, START + timedelta(seconds=10)) == "firmware update in progress"
    rebooting = world.team_device(
        "sandbox", SANDBOX_PEARL2, START + timedelta(seconds=FIRMWARE_INSTALL_SECONDS)
    )
    assert not rebooting.online
    done_at = START + timedelta(seconds=FIRMWARE_INSTALL_SECONDS + FIRMWARE_REBOOT_SECONDS)
    done = world.team_device("sandbox", SANDBOX_PEARL2, done_at)
    assert done.online and done.firmware == "4.24.6" and done.up_since == done_at


def test_a_device_already_on_the_latest_firmware_is_not_updated(world: World):
    device = world.team_device("sandbox", SANDBOX_MINI, START)
    assert world.update_firmware(device, START) == "firmware is up to date"
    assert not device.busy


def test_a_device_of_the_other_team_is_not_found(world: World):
    assert world.team_device("normal", SANDBOX_MINI, START) is None
    assert world.team_device("sandbox", SANDBOX_MINI, START) is not None


def test_recording_on_an_offline_device_fails_and_changes_nothing(world: World):
    device = world.team_device("normal", "19012340204", START)
    assert world.set_recording(device, "1", True, START) == "device offline"
    assert not device.channels[0].recording


def test_a_stream_starts_and_stops_as_a_publisher_of_the_endpoint(world: World):
    device = world.team_device("sandbox", SANDBOX_PEARL2, START)
    endpoint = next(iter(world.teams["sandbox"].endpoints.values()))
    assert (
        world.set_stream(device, "1", endpoint, False, START)
        == "stream endpoint is not started on this channel"
    )
    assert world.set_stream(device, "1", endpoint, True, START) is None
    publisher = device.channels[0].publishers[0]
    assert publisher.id == endpoint.id and publisher.started and publisher.key == endpoint.key
    assert world.set_stream(device, "1", endpoint, False, START + timedelta(minutes=1)) is None
    assert not publisher.started and publisher.since == START + timedelta(minutes=1)


def test_the_current_or_next_event_respects_until(world: World):
    later = START + timedelta(minutes=30)
    assert world.current_or_next_event("19012340101", START, later) is None
    assert world.current_or_next_event("19012340101", START, None).title == "CHEM 201 Organic Chemistry"
    assert world.current_or_next_event("19012340103", START, later).title == "BIO 230 Genetics Lab"
