import shutil
from datetime import UTC, datetime, timedelta

from shared.config import REPO_POLICY_DIR
from shared.epiphan.attention import (
    Priority,
    Thresholds,
    event_state,
    findings,
    newest_firmware_by_model,
    priority_unjudged,
    thresholds_from_policy,
    unjudged,
)
from shared.epiphan.fleet import (
    Channel,
    Device,
    DeviceWarning,
    Event,
    FleetSnapshot,
    SystemStatus,
    UnreadPart,
)
from shared.policy.loader import load_policies

NOW = datetime(2026, 11, 30, 8, 30, tzinfo=UTC)


def device(id_, name, **kw):
    kw.setdefault("online", True)
    kw.setdefault("model", "Pearl-2")
    kw.setdefault("firmware", "4.24.6")
    kw.setdefault("channels", (Channel("1", "Lectern", recording=False),))
    return Device(id=id_, name=name, **kw)


def event(minutes_from_now, length=60, title="Physics 101"):
    start = NOW + timedelta(minutes=minutes_from_now)
    return Event(id="ev", title=title, start=start, finish=start + timedelta(minutes=length))


def kinds(result):
    return [(f.priority, f.kind, f.device_name) for f in result]


def test_event_state_tells_on_now_soon_later_and_none():
    assert event_state(event(-10), NOW, 30) == "on_now"
    assert event_state(event(20), NOW, 30) == "soon"
    assert event_state(event(45), NOW, 30) == "later"
    assert event_state(event(-120), NOW, 30) == "none"
    assert event_state(None, NOW, 30) == "none"


def test_an_offline_room_with_a_class_soon_is_fix_first_and_without_one_fix_soon():
    snap = FleetSnapshot(
        team_id=None,
        devices=(device("a1", "Hall A", online=False), device("b1", "Hall B", online=False)),
        events={"a1": event(15), "b1": event(300)},
    )
    assert kinds(findings(snap, NOW)) == [
        (Priority.FIX_FIRST, "offline", "Hall A"),
        (Priority.FIX_SOON, "offline", "Hall B"),
    ]


def test_a_room_not_recording_during_its_event_is_fix_first():
    snap = FleetSnapshot(team_id=None, devices=(device("a1", "Hall A"),), events={"a1": event(-5)})
    assert kinds(findings(snap, NOW)) == [(Priority.FIX_FIRST, "not_recording_in_event", "Hall A")]


def test_a_recording_room_during_its_event_needs_nothing():
    rec = device("a1", "Hall A", channels=(Channel("1", "L", recording=True),))
    assert findings(FleetSnapshot(team_id=None, devices=(rec,), events={"a1": event(-5)}), NOW) == []


def test_a_dark_channel_disk_heat_reboot_and_old_firmware_are_each_reported():
    dark = Channel("2", "Camera 2", recording=False, warnings=(DeviceWarning("channel_no_signal"),))
    disk = DeviceWarning("disk_space_error", data={"free": 5, "total": 100, "state": "low"})
    snap = FleetSnapshot(
        team_id=None,
        devices=(
            device("a1", "Hall A", channels=(dark,), warnings=(disk,)),
            device("b1", "Hall B", firmware="4.20.1"),
        ),
        system={
            "a1": SystemStatus("a1", cpu_load_pct=95, cpu_temp_c=85, up_since=NOW - timedelta(minutes=10))
        },
    )
    got = kinds(findings(snap, NOW, Thresholds()))
    assert got == [
        (Priority.FIX_SOON, "cpu_high", "Hall A"),
        (Priority.FIX_SOON, "disk_low", "Hall A"),
        (Priority.FIX_SOON, "no_signal", "Hall A"),
        (Priority.FIX_SOON, "temp_high", "Hall A"),
        (Priority.WHEN_CONVENIENT, "recent_reboot", "Hall A"),
        (Priority.WHEN_CONVENIENT, "firmware_behind", "Hall B"),
    ]


def test_thresholds_move_the_line():
    snap = FleetSnapshot(
        team_id=None, devices=(device("a1", "A"),), system={"a1": SystemStatus("a1", cpu_load_pct=85)}
    )
    assert findings(snap, NOW, Thresholds(cpu_pct=90)) == []
    assert kinds(findings(snap, NOW, Thresholds(cpu_pct=80))) == [(Priority.FIX_SOON, "cpu_high", "A")]


def test_firmware_is_compared_within_a_model_family_only():
    devices = [
        device("a", "A", model="EC20", firmware="3.6.2"),
        device("b", "B", model="Pearl-2", firmware="4.24.6"),
        device("c", "C", model="Pearl-2", firmware="4.9.0"),
    ]
    assert newest_firmware_by_model(devices) == {"EC20": "3.6.2", "Pearl-2": "4.24.6"}


def test_venue_is_its_own_firmware_family_never_compared_with_a_pearl():
    devices = [
        device("v1", "Venue Hall", model="Venue", firmware="1.4.0"),
        device("v2", "Venue Annex", model="Epiphan Venue", firmware="1.2.0"),
        device("p1", "Pearl Hall", model="Pearl-2", firmware="4.24.6"),
        device("p2", "Pearl Annex", model="Pearl 2", firmware="4.20.0"),
        device("e1", "Camera Room", model="EC20", firmware="3.6.2"),
    ]
    behind = [
        f
        for f in findings(FleetSnapshot(team_id=None, devices=tuple(devices)), NOW)
        if f.kind == "firmware_behind"
    ]
    assert [(f.device_name, dict(f.facts)["newest"]) for f in behind] == [
        ("Pearl Annex", "4.24.6"),
        ("Venue Annex", "1.4.0"),
    ]
    newest = newest_firmware_by_model(devices)
    assert (newest["Venue"], newest["Epiphan Venue"], newest["Pearl 2"]) == ("1.4.0", "1.4.0", "4.24.6")


def test_a_room_whose_model_is_not_known_has_no_family_to_be_behind():
    devices = [
        device("x", "Unknown A", model="", firmware="1.0.0"),
        device("y", "Unknown B", model="", firmware="4.24.6"),
    ]
    assert [f.kind for f in findings(FleetSnapshot(team_id=None, devices=tuple(devices)), NOW)] == []


def test_a_policys_thresholds_and_lead_window_become_the_attention_thresholds(tmp_path):
    folder = tmp_path / "policy"
    shutil.copytree(REPO_POLICY_DIR, folder)
    text = (folder / "policy.yaml").read_text()
    for old, new in [
        ("cpu_pct: 90", "cpu_pct: 85"),
        ("temp_c: 80", "temp_c: 75"),
        ("disk_free_pct: 10", "disk_free_pct: 15"),
        ("recent_reboot_minutes: 30", "recent_reboot_minutes: 20"),
        ("lead_minutes: 30", "lead_minutes: 25"),
    ]:
        assert text.count(old) == 1
        text = text.replace(old, new)
    (folder / "policy.yaml").write_text(text)
    policy, _ = load_policies(folder)
    assert thresholds_from_policy(policy) == Thresholds(85, 75, 15, 20, 25)
    assert thresholds_from_policy(load_policies(REPO_POLICY_DIR)[0]) == Thresholds()


def test_a_finding_judged_from_a_part_not_read_for_its_room_is_unjudged_and_the_others_are_not():
    hot = SystemStatus("19012340101", cpu_load_pct=95.0, cpu_temp_c=40.0, up_since=None)
    snapshot = FleetSnapshot(
        team_id=None,
        devices=(device("19012340101", "SCI 101"), device("19012340102", "SCI 102")),
        system={"19012340101": hot},
        unread=(
            UnreadPart(
                part="events",
                tool="get_current_or_next_cms_events_for_devices",
                code="epiphan_bad_result",
                message="no known shape",
                device_ids=("19012340102",),
            ),
        ),
    )
    assert snapshot.read_for("19012340101", "events") and not snapshot.read_for("19012340102", "events")
    assert unjudged(snapshot, "19012340102", "not_recording_in_event")
    assert not unjudged(snapshot, "19012340101", "not_recording_in_event")
    assert not unjudged(snapshot, "19012340102", "cpu_high") and not unjudged(
        snapshot, "19012340102", "offline"
    )
    assert priority_unjudged(snapshot, "19012340102") and not priority_unjudged(snapshot, "19012340101")
