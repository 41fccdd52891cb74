"""Readiness: Ready / Ready, with notes / Not ready, and why; one post per event."""

from __future__ import annotations

from datetime import timedelta

import msgspec
import pytest

from services.assistant.watch.readiness import NOT_READY, READY, READY_NOTES, due, judge, readiness_key
from shared.epiphan.attention import DEFAULT_THRESHOLDS
from shared.epiphan.fleet import Channel, DeviceWarning, SystemStatus, UnreadPart
from tests.assistant.watch.helpers import NOW, device, event, snapshot

CLASS = event("e1", "Statics", 20)


def verdict(dev, ev=CLASS, system=None, others=()):
    snap = snapshot([dev, *others], {dev.id: ev}, system or {})
    return judge(dev, ev, snap, NOW, DEFAULT_THRESHOLDS, "en")


def test_a_healthy_room_with_a_confirmed_class_is_ready():
    assert verdict(device("d1", "ENG 101")) == (READY, ())


@pytest.mark.parametrize(
    ("dev", "ev", "why"),
    [
        (device("d1", "A", online=False, offline_minutes=180), CLASS, "offline for 3 h 00 min"),
        (device("d1", "A", online=False), CLASS, "offline"),
        (
            device(
                "d1", "A", warnings=[DeviceWarning("firmware_update_in_progress", data={"target": "4.24.6"})]
            ),
            CLASS,
            "a firmware update is running",
        ),
        (
            device(
                "d1", "A", channels=[Channel("2", "Camera 2", warnings=(DeviceWarning("channel_no_signal"),))]
            ),
            CLASS,
            "no signal on “Camera 2”",
        ),
        (device("d1", "A", warnings=[DeviceWarning("no_storage_detected")]), CLASS, "no storage detected"),
        (
            device(
                "d1",
                "A",
                warnings=[
                    DeviceWarning(
                        "disk_space_error",
                        data={"free": 2_100_000_000, "total": 500_000_000_000, "state": "critical"},
                    )
                ],
            ),
            CLASS,
            "disk almost full: 0.4% (2.1 GB) free",
        ),
        (
            device("d1", "A"),
            event("e1", "Statics", 20, confirmed=False),
            "the event is not confirmed on the device",
        ),
    ],
)
def test_a_room_is_not_ready_and_says_why(dev, ev, why):
    result, reasons = verdict(dev, ev)
    assert result == NOT_READY and reasons[0] == why


def test_a_room_with_a_problem_that_will_not_stop_the_class_is_ready_with_notes():
    low = device(
        "d1",
        "A",
        warnings=[
            DeviceWarning(
                "disk_space_error", data={"free": 80_000_000_000, "total": 1_000_000_000_000, "state": "low"}
            )
        ],
    )
    assert verdict(low) == (READY_NOTES, ("disk nearly full: 8.0% (80.0 GB) free",))
    hot = SystemStatus("d1", cpu_load_pct=40, cpu_temp_c=85, up_since=NOW - timedelta(minutes=5))
    result, reasons = verdict(device("d1", "A"), system={"d1": hot})
    assert result == READY_NOTES and reasons == ("running hot (85 °C, CPU 40%)", "restarted 5 min ago")
    behind = verdict(device("d1", "A", firmware="4.22.0"), others=[device("d2", "B", firmware="4.24.6")])
    assert behind == (READY_NOTES, ("firmware 4.22.0, newest of its model here 4.24.6",))


def test_events_within_the_window_are_due_once_soonest_first():
    devices = [device("d1", "A"), device("d2", "B"), device("d3", "C"), device("d4", "D")]
    events = {
        "d1": event("e1", "Soon", 29),
        "d2": event("e2", "Sooner", 5),
        "d3": event("e3", "Later", 31),
        "d4": event("e4", "On now", -5),
    }
    snap = snapshot(devices, events)
    items = due(snap, NOW, 30, set(), DEFAULT_THRESHOLDS, "en")
    assert [i.title for i in items] == ["Sooner", "Soon"]
    posted = {items[0].key}
    assert [i.title for i in due(snap, NOW, 30, posted, DEFAULT_THRESHOLDS, "en")] == ["Soon"]


def test_an_event_moved_to_another_time_is_due_again():
    moved = event("e1", "Statics", 25)
    assert readiness_key("d1", CLASS) != readiness_key("d1", moved)
    snap = snapshot([device("d1", "A")], {"d1": moved})
    assert len(due(snap, NOW, 30, {readiness_key("d1", CLASS)}, DEFAULT_THRESHOLDS, "en")) == 1


def test_readiness_speaks_spanish():
    result, reasons = verdict(device("d1", "A", online=False), event("e1", "X", 20, confirmed=False))
    assert result == NOT_READY
    es = judge(
        device("d1", "A", online=False),
        event("e1", "X", 20, confirmed=False),
        snapshot([]),
        NOW,
        DEFAULT_THRESHOLDS,
        "es",
    )
    assert es[1] == ("desconectada", "el evento no está confirmado en el dispositivo")


def test_a_restart_4_min_40_s_ago_is_5_min_ago_to_the_nearest_minute():
    rebooted = SystemStatus(
        "d1", cpu_load_pct=10, cpu_temp_c=40, up_since=NOW - timedelta(minutes=4, seconds=40)
    )
    assert verdict(device("d1", "A"), system={"d1": rebooted}) == (READY_NOTES, ("restarted 5 min ago",))


def test_a_room_whose_system_status_could_not_be_read_is_ready_with_that_said_never_judged_calm():
    dev = device("d1", "A")
    unread = UnreadPart("system", "get_system_status_for_devices", "epiphan_timeout", "timed out", ("d1",))
    partial = msgspec.structs.replace(snapshot([dev], events={"d1": CLASS}), unread=(unread,))
    assert judge(dev, CLASS, partial, NOW, DEFAULT_THRESHOLDS, "en") == (
        READY_NOTES,
        ("CPU, temperature and uptime: could not be read",),
    )
    assert judge(dev, CLASS, partial, NOW, DEFAULT_THRESHOLDS, "es")[1] == (
        "CPU, temperatura y tiempo encendido: no se pudo leer",
    )
