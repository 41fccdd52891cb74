"""What changed between the watch store and a read: rooms and findings."""

from __future__ import annotations

from services.assistant.watch.diff import (
    FLEET_ID,
    KnownDevice,
    OpenFinding,
    diff_devices,
    diff_findings,
    finding_key,
    held_over,
    key_of,
)
from shared.epiphan.attention import Finding, Priority
from shared.epiphan.fleet import FleetSnapshot, UnreadPart
from tests.assistant.watch.helpers import device

OFFLINE = Finding(Priority.FIX_SOON, "offline", "d1", "ENG 210")
DISK = Finding(Priority.FIX_SOON, "disk_low", "d2", "ART 110", (("free_pct", "2"),))


def _open(finding: Finding) -> OpenFinding:
    return OpenFinding(
        key_of(finding), finding.device_id, finding.device_name, finding.kind, finding.priority, finding.facts
    )


def test_a_findings_identity_is_its_room_kind_and_channel_not_its_numbers_or_event():
    a = Finding(Priority.FIX_SOON, "disk_low", "d2", "ART 110", (("free_pct", "2"),))
    b = Finding(Priority.FIX_FIRST, "disk_low", "d2", "ART 110 renamed", (("free_pct", "1"), ("event", "X")))
    assert key_of(a) == key_of(b)
    cam1 = finding_key("d3", "no_signal", (("channel", "Camera 1"),))
    cam2 = finding_key("d3", "no_signal", (("channel", "Camera 2"),))
    source = finding_key("d3", "no_signal", (("source", "SDI-A"),))
    assert len({cam1, cam2, source}) == 3


def test_a_new_finding_opens_a_same_one_is_no_change_and_a_gone_one_resolves():
    first = diff_findings({}, [OFFLINE, DISK])
    assert [(c.kind, c.room) for c in first.changes] == [
        ("finding_opened", "ART 110"),
        ("finding_opened", "ENG 210"),
    ]
    again = diff_findings({key_of(OFFLINE): _open(OFFLINE), key_of(DISK): _open(DISK)}, [OFFLINE, DISK])
    assert again.changes == ()
    gone = diff_findings({key_of(OFFLINE): _open(OFFLINE), key_of(DISK): _open(DISK)}, [DISK])
    assert [(c.kind, c.room, c.finding_kind) for c in gone.changes] == [
        ("finding_resolved", "ENG 210", "offline")
    ]


def test_a_finding_whose_priority_rises_is_worse_and_one_that_eases_is_better_but_not_news():
    urgent = Finding(Priority.FIX_FIRST, "offline", "d1", "ENG 210", (("event", "Statics"),))
    worse = diff_findings({key_of(OFFLINE): _open(OFFLINE)}, [urgent])
    (change,) = worse.changes
    assert (change.kind, change.priority, change.old_priority) == (
        "finding_worse",
        Priority.FIX_FIRST,
        Priority.FIX_SOON,
    )
    assert worse.news == worse.changes
    better = diff_findings({key_of(urgent): _open(urgent)}, [OFFLINE])
    assert [c.kind for c in better.changes] == ["finding_better"] and better.news == ()


def test_the_whole_fleet_finding_is_never_resolved_by_a_read_of_devices():
    unreadable = OpenFinding(
        f"{FLEET_ID}|fleet_unreadable|", FLEET_ID, "", "fleet_unreadable", Priority.FIX_FIRST
    )
    assert diff_findings({unreadable.key: unreadable}, []).changes == ()


def test_the_first_read_is_the_starting_point_not_a_list_of_new_rooms():
    assert diff_devices({}, [device("d1", "A"), device("d2", "B", online=False)]) == []


def test_rooms_going_offline_coming_back_joining_and_leaving_are_changes():
    known = {
        "d1": KnownDevice("d1", "A", online=True),
        "d2": KnownDevice("d2", "B", online=False),
        "d3": KnownDevice("d3", "C", online=True),
        "d5": KnownDevice("d5", "E", online=True, gone=True),
    }
    now = [device("d1", "A", online=False), device("d2", "B"), device("d4", "D"), device("d5", "E")]
    changes = [(c.kind, c.device_id) for c in diff_devices(known, now)]
    assert changes == [
        ("device_offline", "d1"),
        ("device_online", "d2"),
        ("device_gone", "d3"),
        ("device_new", "d4"),
        ("device_new", "d5"),
    ]


def _events_unread_for(*device_ids: str) -> UnreadPart:
    return UnreadPart(
        part="events",
        tool="get_current_or_next_cms_events_for_devices",
        code="epiphan_bad_result",
        message="no known shape",
        device_ids=device_ids,
    )


def test_a_finding_judged_from_events_that_could_not_be_read_stays_open_and_is_not_resolved():
    """Issue 16: one unreadable answer never becomes "all fine"; the store's finding is kept."""
    dark = Finding(Priority.FIX_FIRST, "not_recording_in_event", "d1", "SCI 101", (("event", "Physics"),))
    partial = FleetSnapshot(
        team_id=None, devices=(device("d1", "SCI 101"),), unread=(_events_unread_for("d1"),)
    )
    kept = held_over([], {key_of(dark): _open(dark)}, partial)
    assert kept == [dark]
    assert diff_findings({key_of(dark): _open(dark)}, kept).changes == ()
    whole = FleetSnapshot(team_id=None, devices=(device("d1", "SCI 101"),))
    assert held_over([], {key_of(dark): _open(dark)}, whole) == []  # read in full: resolved as before


def test_a_room_whose_events_could_not_be_read_keeps_its_findings_priorities():
    fix_first = Finding(Priority.FIX_FIRST, "offline", "d1", "ENG 210", (("event", "Statics"),))
    eased = Finding(Priority.FIX_SOON, "offline", "d1", "ENG 210")
    partial = FleetSnapshot(
        team_id=None, devices=(device("d1", "ENG 210", online=False),), unread=(_events_unread_for("d1"),)
    )
    (kept,) = held_over([eased], {key_of(fix_first): _open(fix_first)}, partial)
    assert kept == fix_first, "the stored priority and the class it named"
    assert diff_findings({key_of(fix_first): _open(fix_first)}, [kept]).changes == ()


def test_what_the_device_list_alone_judges_still_resolves_when_another_part_was_not_read():
    partial = FleetSnapshot(
        team_id=None, devices=(device("d1", "ENG 210"),), unread=(_events_unread_for("d1"),)
    )
    assert held_over([], {key_of(OFFLINE): _open(OFFLINE)}, partial) == []
    other_room = FleetSnapshot(
        team_id=None, devices=(device("d9", "LAW 101"),), unread=(_events_unread_for("d1"),)
    )
    dark = Finding(Priority.FIX_FIRST, "not_recording_in_event", "d9", "LAW 101")
    assert held_over([], {key_of(dark): _open(dark)}, other_room) == []  # its events were read
