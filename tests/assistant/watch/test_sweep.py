"""The nightly sweep: when it is due, what it reports."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from services.assistant.watch.sweep import sweep_due, sweep_report
from services.assistant.watch.times import zone
from tests.assistant.watch.helpers import NOW, device, snapshot

BOGOTA = zone("America/Bogota")
AT = time(3, 0)
LONG_AGO = datetime(2026, 9, 1, tzinfo=UTC)


def local(hour: int, minute: int = 0, day: int = 16) -> datetime:
    return datetime(2026, 9, day, hour, minute, tzinfo=BOGOTA)


def test_the_sweep_is_due_at_its_time_or_the_first_beat_after_once_per_local_day():
    assert sweep_due(local(2, 59), BOGOTA, AT, set(), LONG_AGO) is None
    assert sweep_due(local(3, 0), BOGOTA, AT, set(), LONG_AGO) == "2026-09-16"
    assert sweep_due(local(9, 30), BOGOTA, AT, set(), LONG_AGO) == "2026-09-16"
    assert sweep_due(local(9, 30), BOGOTA, AT, {"2026-09-16"}, LONG_AGO) is None
    assert sweep_due(local(3, 1, day=17), BOGOTA, AT, {"2026-09-16"}, LONG_AGO) == "2026-09-17"


def test_the_sweep_runs_in_the_teams_zone_not_utc():
    assert sweep_due(datetime(2026, 9, 16, 7, 59, tzinfo=UTC), BOGOTA, AT, set(), LONG_AGO) is None
    assert sweep_due(datetime(2026, 9, 16, 8, 0, tzinfo=UTC), BOGOTA, AT, set(), LONG_AGO) == "2026-09-16"


def test_a_watch_that_started_after_todays_sweep_time_waits_for_the_next_night():
    assert sweep_due(local(10), BOGOTA, AT, set(), local(9)) is None
    assert sweep_due(local(3, 5, day=17), BOGOTA, AT, set(), local(9)) == "2026-09-17"


def test_the_report_counts_the_fleet_and_lists_offline_rooms_and_firmware_behind():
    snap = snapshot(
        [
            device("d1", "Zeta", online=False, offline_minutes=90),
            device("d2", "Alpha", firmware="4.22.0"),
            device("d3", "Beta"),
        ]
    )
    report = sweep_report(
        snap, NOW, zone("UTC"), "UTC", "2026-09-16", {"finding_opened": 2, "device_offline": 1}
    )
    assert (report["rooms"], report["online"]) == (3, 2)
    assert report["offline"] == [
        {"device_id": "d1", "room": "Zeta", "seconds": timedelta(minutes=90).total_seconds()}
    ]
    assert [b["room"] for b in report["behind"]] == ["Alpha"]
    assert report["since_last"] == {"opened": 2, "resolved": 0, "offline": 1, "online": 0}
    assert sweep_report(snap, NOW, zone("UTC"), "UTC", "2026-09-16", None)["since_last"] is None
