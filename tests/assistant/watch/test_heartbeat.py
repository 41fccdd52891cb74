"""The heartbeat against the lab (a real MCP server, the guarded read client, a real watch
store): digests only when something changed, readiness once per event, a failed read reported
once and three in a row a finding, a part that could not be read reported once and judging
nothing, quiet hours, the sweep, a restart, and 250 rooms in calls of at most 100."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

from services.assistant.watch.heartbeat import Watch, WatchOptions
from services.assistant.watch.post import plain_text
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR
from shared.epiphan.attention import Priority
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.errors import Code
from shared.policy.loader import load_policies
from tests.assistant.watch.helpers import (
    ENG220,
    NOW,
    Recorder,
    beat,
    policy_with,
    reboot_through_the_labs_mcp,
)
from tests.lab.helpers import data_of, open_session

CAPTURED = Path(__file__).resolve().parents[2] / "fixtures" / "captures" / "campus"
"""The lab's own campus, captured (`tests/fixtures/captures/campus`)."""


async def test_the_first_beat_posts_what_needs_attention_and_readiness_then_nothing_while_nothing_changes(
    make_watch, recorder: Recorder
):
    watch = await make_watch()
    first = await beat(watch)
    assert first.read and set(first.posted) == {"readiness", "digest"}
    (digest,) = recorder.of("digest")
    text = plain_text(digest)
    assert text.startswith("Fleetwatch is now watching 30 rooms (28 online).")
    assert (
        "- “ENG 210”: offline" in text
        and '- “LIB Room 2”: offline (event "Library workshop: citations")' in text
    )
    (readiness,) = recorder.of("readiness")
    assert (
        '- “ENG 101 Auditorium”: "ENG 100 Engineering Design (livestream)" at 13:25 (in 25 min): Ready'
        in plain_text(readiness)
    )
    recorder.posts.clear()
    for _ in range(3):
        outcome = await beat(watch)
        assert outcome.read and outcome.changes == 0 and outcome.posted == ()
    assert recorder.posts == []


async def test_a_room_rebooted_in_the_lab_is_posted_offline_on_the_second_beat_and_its_return_in_a_later_digest(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch()
    await beat(watch)
    recorder.posts.clear()
    await reboot_through_the_labs_mcp(lab, ENG220)
    assert (await beat(watch)).posted == ()  # not confirmed yet: offline_after_beats is 2
    assert (await beat(watch)).posted == ("digest",)
    (offline,) = recorder.of("digest")
    assert plain_text(offline).splitlines()[1:] == ["Fix soon", "- “ENG 220”: offline"]
    assert plain_text(offline).startswith("Fleetwatch, what changed since 13:00: 1 new.")
    recorder.posts.clear()
    lab.advance(91)
    await beat(watch)
    (back,) = recorder.of("digest")
    lines = plain_text(back).splitlines()
    assert lines[1:] == [
        "When convenient",
        "- “ENG 220”: rebooted 0 min ago",
        "Resolved",
        "- “ENG 220”: offline",
    ]


async def test_a_failed_read_is_reported_once_three_in_a_row_are_a_finding_and_a_good_read_resolves_it(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch()
    await beat(watch)
    recorder.posts.clear()
    lab.set_fault("get_devices_in_my_team", "error", count=3)
    first = await beat(watch)
    assert (first.read, first.code, first.posted) == (False, Code.EPIPHAN_TOOL_ERROR, ("read_failed",))
    (report,) = recorder.posts
    assert report.console_only and "could not read the fleet (epiphan_tool_error" in report.title
    assert (await beat(watch)).posted == ()
    third = await beat(watch)
    assert third.posted == ("digest",) and watch.failed_beats == 3
    unreadable = plain_text(recorder.of("digest")[0]).splitlines()
    assert unreadable[1:] == [
        "Fix first",
        "- The whole fleet: could not be read for 3 heartbeats in a row (epiphan_tool_error)",
    ]
    recorder.posts.clear()
    assert (await beat(watch)).posted == ("digest",) and watch.failed_beats == 0
    back = plain_text(recorder.of("digest")[0]).splitlines()
    assert back[1:] == [
        "Resolved",
        "- The whole fleet: could not be read for 3 heartbeats in a row (epiphan_tool_error)",
    ]


async def test_quiet_hours_hold_the_digest_but_not_readiness_and_post_the_net_change_after(
    make_watch, recorder: Recorder, lab: LabHandle, tmp_path
):
    policy = policy_with(tmp_path, quiet_hours='\n  start: "12:30"\n  end: "13:15"\n  timezone: "UTC"')
    watch = await make_watch(policy=policy)
    await beat(watch)
    assert recorder.kinds() == ["readiness"]
    await reboot_through_the_labs_mcp(lab, ENG220)
    lab.advance(5 * 60)
    await beat(watch)
    lab.advance(5 * 60)
    await beat(watch)
    assert recorder.kinds() == ["readiness", "readiness"], "readiness posts in quiet hours; digests wait"
    assert (await watch.store.kv()).get("digest_seq", "0") == "0"
    lab.advance(6 * 60)
    await beat(watch)
    (digest,) = recorder.of("digest")
    text = plain_text(digest)
    assert text.startswith("Fleetwatch is now watching 30 rooms")
    assert "- “ENG 220”: offline" not in text, "a reboot that ended during quiet hours is not news after them"


async def test_readiness_is_posted_once_per_event_as_classes_come_into_the_window(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch(options=WatchOptions(readiness_minutes=30))
    await beat(watch)
    await beat(watch)
    assert len(recorder.of("readiness")) == 1
    lab.advance(11 * 60)
    await beat(watch)
    later = recorder.of("readiness")
    assert len(later) == 2, "one new event in the window: one new post"
    assert '- “SCI 101 Lecture Hall”: "CHEM 201 Organic Chemistry" at 13:40 (in 29 min): Ready' in plain_text(
        later[1]
    )
    lab.advance(15 * 60)
    await beat(watch)
    newest = [plain_text(p).splitlines()[1:] for p in recorder.of("readiness")[2:]]
    assert newest == [
        ['- “Aula Magna”: "Español B2: conversación" at 13:45 (in 19 min): Ready'],
        [
            '- “LIB Room 2”: "Library workshop: citations" at 13:50 (in 24 min): Not ready: offline for 48 h 26 min;'
            " the event is not confirmed on the device"
        ],
        [
            '- “ART 110 Black Box”: "THEA 110 Acting I" at 13:55 (in 29 min): Not ready:'
            " disk almost full: 1.6% (14.5 GB) free"
        ],
    ], "three events came into the window in one beat: a post each, soonest first"


async def test_a_firmware_update_running_in_a_room_makes_it_not_ready_unconfirmed_form(
    make_watch, recorder: Recorder, lab: LabHandle
):
    """How Epiphan reports an update in progress is unconfirmed; the lab reports it as a
    device warning and the watch reads it from there."""
    aula = "19012340601"  # Aula Magna, Pearl-2 on the newest firmware: the lab has nothing newer
    lab.state.firmware_latest["Pearl-2"] = "4.25.0"
    async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
        assert data_of(await session.call_tool("batch_firmware_update", {"device_ids": [aula]})) == {}
    watch = await make_watch(options=WatchOptions(readiness_minutes=50))
    await beat(watch)
    texts = [plain_text(p) for p in recorder.of("readiness")]
    assert any(
        '- “Aula Magna”: "Español B2: conversación" at 13:45 (in 45 min): Not ready: a firmware update is running'
        in text
        for text in texts
    ), texts


async def test_the_nightly_sweep_runs_at_its_time_once_and_waits_for_the_end_of_quiet_hours(
    make_watch, recorder: Recorder, lab: LabHandle, tmp_path
):
    policy = policy_with(
        tmp_path,
        sweep_at='"13:05"',
        quiet_hours='\n  start: "13:04"\n  end: "13:08"\n  timezone: "UTC"',
    )
    watch = await make_watch(policy=policy)
    await beat(watch)
    lab.advance(6 * 60)
    await beat(watch)
    assert "sweep" not in recorder.kinds()
    assert len(await watch.store.sweep_dates()) == 1
    lab.advance(3 * 60)
    await beat(watch)
    await beat(watch)
    (sweep,) = recorder.of("sweep")
    lines = plain_text(sweep).splitlines()
    assert lines[0] == "Nightly sweep, 2026-09-16 13:06 (UTC): 30 rooms, 28 online."
    assert lines[1:4] == [
        "Offline (2)",
        "- “ENG 210”: offline for 3 h 06 min",
        "- “LIB Room 2”: offline for 48 h 06 min",
    ]
    assert any(line.startswith("Behind on firmware (") for line in lines)
    assert lines[-1] == "This is the first sweep."


async def test_a_restarted_watch_posts_no_second_first_digest_and_no_second_readiness(
    make_watch, recorder: Recorder, tmp_path
):
    first = await make_watch()
    await beat(first)
    recorder.posts.clear()
    again = await make_watch()
    await beat(again)
    assert recorder.posts == []
    assert again.last_read_at is not None


async def test_a_failed_count_survives_a_restart(make_watch, recorder: Recorder, lab: LabHandle):
    watch = await make_watch()
    lab.set_fault("get_devices_in_my_team", "error", count=2)
    await beat(watch)
    await beat(watch)
    again = await make_watch()
    assert again.failed_beats == 2 and again.last_code == Code.EPIPHAN_TOOL_ERROR
    lab.set_fault("get_devices_in_my_team", "error", count=1)
    assert (await beat(again)).posted == ("digest",)
    assert "could not be read for 3 heartbeats" in plain_text(recorder.of("digest")[0])


async def test_old_history_is_pruned_after_ninety_days(make_watch, lab: LabHandle):
    watch = await make_watch()
    await beat(watch)
    assert await watch.store.last_seq() > 0
    lab.advance(timedelta(days=91).total_seconds())
    await beat(watch)
    rows, _ = await watch.store.history_since("2000-01-01T00:00:00.000Z", 1000)
    assert all(row.at >= "2026-12-16" for row in rows)


async def test_answers_that_cannot_be_read_are_reported_once_and_change_no_finding(
    make_watch, recorder: Recorder, lab: LabHandle
):
    """Issue 16: the watch shows what it read and marks what it could not. With the events and
    the system status unreadable, the findings they decide (CPU, heat, a recent restart) stay
    open and the ones a class soon makes Fix first keep that priority: nothing is resolved or
    eased by an answer that could not be read."""
    watch = await make_watch()
    await beat(watch)
    before = await watch.store.open_findings()
    assert {"cpu_high", "temp_high", "recent_reboot"} <= {f.kind for f in before.values()}
    assert any(f.priority is Priority.FIX_FIRST and f.kind == "offline" for f in before.values())
    seq = await watch.store.last_seq()
    recorder.posts.clear()
    lab.set_fault("get_current_or_next_cms_events_for_devices", "malformed_json", count=2)
    lab.set_fault("get_system_status_for_devices", "error", count=2)
    first = await beat(watch)
    assert (first.read, first.changes, first.posted) == (True, 0, ("read_partial",))
    (report,) = recorder.posts
    assert report.console_only and "not all of it: CPU, temperature and uptime: could not be read: " in (
        report.title
    )
    assert "events: could not be read: " in report.title
    assert await watch.store.open_findings() == before
    assert (await beat(watch)).posted == (), "reported once, not every beat"
    whole = await beat(watch)
    assert (whole.changes, whole.posted) == (0, ())
    kinds = [row.kind for row in await watch.store.history_after(seq)]
    assert kinds.count("read_partial") == 1 and kinds[-1] == "read_complete"
    assert watch.unread_parts == "" and (await watch.store.kv())["unread_parts"] == ""


@contextlib.asynccontextmanager
async def reader_of(lab: LabHandle) -> AsyncIterator[EpiphanReadClient]:
    """The guarded read client on the normal team of a lab the test made itself."""
    tools = load_policies(REPO_POLICY_DIR)[1]
    connection = McpConnection(lab.mcp_url, lab.teams["normal"].token)
    async with EpiphanReadClient(connection, tools.read_tools) as reader:
        yield reader


async def test_a_beat_on_250_rooms_reads_every_room_in_calls_of_at_most_100(make_watch, tmp_path):
    """Epiphan's per-call limit on the watch's path: the lab refuses a call naming more than 100
    device IDs, and the watch's beat reads 250 rooms through the one batching client."""
    async with (
        run_lab("campus", clock=LabClock(NOW, frozen=True), devices=250) as big,
        reader_of(big) as reader,
    ):
        watch = await make_watch(reader=reader, store_path=tmp_path / "big.db")
        outcome = await beat(watch)
        assert outcome.read and "read_partial" not in outcome.posted
        assert watch.last is not None and len(watch.last.snapshot.devices) == 250
        assert watch.last.snapshot.unread == () and len(watch.last.snapshot.events) == 250
        assert len(await watch.store.rooms()) == 250
        assert big.rejected() == []


async def test_the_watch_beats_on_a_captured_team_as_on_the_live_one(make_watch, tmp_path):
    """Issue 16: the lab serving a capture runs the whole product, the watch too: the captured
    campus gives the live campus's rooms and findings (times shifted to the lab's clock)."""

    async def one_beat(watch: Watch) -> tuple[list, set]:
        outcome = await beat(watch)
        assert outcome.read and "digest" in outcome.posted and watch.last is not None
        assert watch.last.snapshot.unread == ()
        rooms = [(r.id, r.name, r.online) for r in await watch.store.rooms()]
        return rooms, {(f.device_id, f.kind, f.priority) for f in watch.last.findings}

    live_rooms, live_found = await one_beat(await make_watch())
    async with (
        run_lab("campus", clock=LabClock(NOW, frozen=True), capture=CAPTURED) as captured,
        reader_of(captured) as reader,
    ):
        rooms, found = await one_beat(await make_watch(reader=reader, store_path=tmp_path / "captured.db"))
    assert len(rooms) == 30 and rooms == live_rooms and found == live_found
