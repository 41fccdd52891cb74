"""A watch a team can live with (issue 29), against the lab: a group outage is one item and its
rooms come back one by one; a flap within one beat posts nothing; a silence hides a room's
changes until it ends (and is audited); quiet hours in the operator's zone; an event that ends
unrecorded, or while the watch was stopped; a reminder, and the line that follows a notice."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec
import pytest

from services.assistant import AssistantError
from services.assistant.watch import answers
from services.assistant.watch.heartbeat import WatchOptions
from services.assistant.watch.post import plain_text
from services.assistant.watch.runner import wall_for
from services.lab.server import LabHandle
from shared.errors import Code
from tests.assistant.watch.helpers import (
    ENG220,
    NOW,
    MemoryProposals,
    Recorder,
    beat,
    notices_of,
    pending,
    policy_with,
)

ENGINEERING = {
    "19012340202": "ENG 105",
    "19012340203": "ENG 110",
    ENG220: "ENG 220",
    "19012340206": "ENG 301",
    "19012340207": "ENG 305",
}
"""Five of the seven Engineering rooms (ENG 210 is offline already, ENG 101 has a class soon)."""
SCI201 = "19012340103"
"""SCI 201 Lab: "BIO 230 Genetics Lab" is on (12:40 to 13:55 UTC), channel 1 recording."""
MEXICO = ZoneInfo("America/Mexico_City")


def set_online(lab: LabHandle, device_ids, online: bool) -> None:
    for device_id in device_ids:
        device = lab.state.devices[device_id]
        device.online, device.state_time = online, lab.now


def digests(recorder: Recorder) -> list[str]:
    return [plain_text(p) for p in recorder.of("digest")]


async def test_a_group_taken_offline_is_one_item_then_each_room_comes_back_once(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch()
    await beat(watch)
    recorder.posts.clear()
    set_online(lab, ENGINEERING, False)
    assert (await beat(watch)).posted == ()  # not confirmed yet
    assert (await beat(watch)).posted == ("digest",)
    (text,) = digests(recorder)
    lines = text.splitlines()
    assert lines[1:] == [
        "Fix soon",
        "- “Engineering”: 5 of 7 rooms went offline",
        *(f"    - “{name}”" for name in sorted(ENGINEERING.values())),
    ]
    recorder.posts.clear()
    set_online(lab, ENGINEERING, True)
    await beat(watch)
    (back,) = digests(recorder)
    resolved = back.splitlines()[back.splitlines().index("Resolved") + 1 :]
    assert sorted(resolved) == sorted(f"- “{name}”: offline" for name in ENGINEERING.values())
    recorder.posts.clear()
    await beat(watch)
    assert recorder.posts == []


async def test_a_flap_within_one_beat_posts_nothing_and_a_room_in_class_is_posted_at_once(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch()
    await beat(watch)
    recorder.posts.clear()
    set_online(lab, [ENG220], False)
    await beat(watch)
    set_online(lab, [ENG220], True)
    await beat(watch)
    await beat(watch)
    assert recorder.posts == []
    assert [r.kind for r in await watch.store.history_after(0) if r.device_id == ENG220] == []
    set_online(lab, [SCI201], False)  # its class is on: confirmed on the first beat
    assert (await beat(watch)).posted == ("digest",)
    assert "- “SCI 201 Lab”: offline" in digests(recorder)[0]


async def test_a_silence_hides_a_rooms_changes_until_it_expires_and_is_audited(
    make_watch, recorder: Recorder, lab: LabHandle
):
    proposals = MemoryProposals()
    watch = await make_watch(proposals=proposals)
    await beat(watch)
    recorder.posts.clear()
    outcome = await answers.set_silence(
        watch, "eng 220", "projector swap\u202e", minutes=60, until=None, include_classes=False, uid=1000
    )
    assert outcome.status == "silenced"
    (silence,) = outcome.silences
    assert (silence.target_name, silence.reason, silence.until) == (
        "ENG 220",
        "projector swap",
        "2026-09-16T14:00:00.000Z",
    )
    (record,) = proposals.records
    assert (record.action, record.target, record.uid, record.until) == (
        "silence",
        ENG220,
        1000,
        silence.until,
    )
    set_online(lab, [ENG220], False)
    await beat(watch)
    await beat(watch)
    assert recorder.posts == []  # offline, silenced
    set_online(lab, [ENG220], True)
    await beat(watch)
    assert recorder.posts == []  # back to normal, silenced too
    set_online(lab, ["19012340203"], False)
    await beat(watch)
    await beat(watch)
    (other,) = digests(recorder)
    assert "- “ENG 110”: offline" in other and "“ENG 220”: offline" not in other
    assert f"- “ENG 220”: silenced until 14:00 by {answers.user_name(1000)}: projector swap" in other
    view = await wall_for(watch, "es")
    assert view.silenced == (
        f"«ENG 220»: silenciado hasta las 14:00 por {answers.user_name(1000)}: projector swap",
    )
    assert (await answers.list_silences(watch)).silences[0].id == silence.id
    recorder.posts.clear()
    lab.advance(61 * 60)
    assert (await answers.list_silences(watch)).silences == ()
    set_online(lab, [ENG220], False)
    await beat(watch)
    await beat(watch)
    assert any("- “ENG 220”: offline" in d for d in digests(recorder))
    gone = await answers.lift_silence(watch, "ENG 220", uid=1000)
    assert (gone.status, gone.code) == ("not_found", Code.SILENCE_NOT_FOUND)


async def test_a_silence_that_cannot_be_audited_is_not_kept_and_one_is_lifted_with_its_record(
    make_watch, lab: LabHandle
):
    proposals = MemoryProposals(record_reply=Code.SERVICE_UNAVAILABLE)
    watch = await make_watch(proposals=proposals)
    await beat(watch)
    with pytest.raises(AssistantError) as refused:
        await answers.set_silence(
            watch, "Engineering", "network work", minutes=30, until=None, include_classes=False, uid=1000
        )
    assert refused.value.code == Code.SERVICE_UNAVAILABLE
    assert (await answers.list_silences(watch)).silences == ()
    assert [r.kind for r in await watch.store.history_after(0) if r.kind == "silence"] == []
    proposals.record_reply = None
    kept = await answers.set_silence(
        watch, "Engineering", "network work", minutes=30, until=None, include_classes=False, uid=1000
    )
    assert (kept.silences[0].target_kind, kept.silences[0].target) == ("group", "Engineering")
    with pytest.raises(AssistantError) as too_long:
        await answers.set_silence(
            watch, "ENG 220", "x", minutes=None, until=None, include_classes=False, uid=1000
        )
    assert too_long.value.code == Code.INVALID_MESSAGE
    lifted = await answers.lift_silence(watch, "engineering", uid=1001)
    assert lifted.status == "lifted" and lifted.silences[0].lifted_at is not None
    assert [(r.action, r.uid) for r in proposals.records] == [("silence", 1000), ("unsilence", 1001)]
    assert (await answers.list_silences(watch)).silences == ()


async def test_a_silence_never_hides_a_class_not_recording_unless_it_says_so(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch(proposals=MemoryProposals())
    await beat(watch)
    recorder.posts.clear()
    await answers.set_silence(
        watch, "SCI 201 Lab", "lens cleaning", minutes=60, until=None, include_classes=False, uid=1000
    )
    lab.state.devices[SCI201].channels[0].recording = False
    await beat(watch)
    (text,) = digests(recorder)
    assert '- “SCI 201 Lab”: not recording during its event (event "BIO 230 Genetics Lab")' in text
    recorder.posts.clear()
    await answers.set_silence(
        watch, "SCI 201 Lab", "class moved", minutes=60, until=None, include_classes=True, uid=1000
    )
    lab.state.devices[SCI201].channels[0].recording = True
    await beat(watch)
    assert recorder.posts == []  # its return is hidden by the silence that includes classes


async def test_quiet_hours_are_in_the_operators_zone_and_status_and_the_wall_say_until_when(
    make_watch, recorder: Recorder, lab: LabHandle, tmp_path: Path
):
    policy = policy_with(tmp_path, quiet_hours='\n  start: "22:00"\n  end: "06:00"')
    assert policy.quiet_hours.timezone is None
    watch = await make_watch(policy=policy, options=WatchOptions(timezone=MEXICO))
    lab.advance(10 * 3600)  # 23:00 UTC is 17:00 in Mexico City: a teaching afternoon
    await beat(watch)
    assert recorder.of("digest")  # posted, not held
    status = await answers.status(watch)
    assert (status.held_until, status.timezone) == (None, "America/Mexico_City")
    recorder.posts.clear()
    lab.advance(6 * 3600)  # 05:00 UTC is 23:00 there: quiet
    set_online(lab, [ENG220], False)
    await beat(watch)
    await beat(watch)
    assert recorder.of("digest") == []
    status = await answers.status(watch)
    assert status.held_until == "2026-09-17T12:00:00.000Z"  # 06:00 in Mexico City
    view = await wall_for(watch, "en")
    assert view.held == "Quiet hours: posts are held until Thu 17 Sep, 06:00 (America/Mexico_City)."
    lab.advance(7 * 3600)  # 12:00 UTC, 06:00 there
    await beat(watch)
    assert any("“ENG 220”: offline" in d for d in digests(recorder))
    assert (await wall_for(watch, "en")).held is None


async def test_an_event_that_ends_unrecorded_is_one_missed_recording_in_the_digest_and_history(
    make_watch, recorder: Recorder, lab: LabHandle
):
    lab.state.devices[SCI201].channels[0].recording = False
    watch = await make_watch()
    await beat(watch)
    lab.advance(50 * 60)
    await beat(watch)
    recorder.posts.clear()
    lab.advance(6 * 60)  # 13:56: BIO 230 ended at 13:55
    await beat(watch)
    (text,) = digests(recorder)
    fix_first = text.splitlines()[text.splitlines().index("Fix first") :]
    assert (
        '- “SCI 201 Lab”: missed recording: "BIO 230 Genetics Lab" ended at 13:55 (UTC) and no recording was seen on its channels'
        in fix_first
    )
    history = await answers.history(watch, 1, "es")
    missed = [e for e in history.entries if e.kind == "missed_recording"]
    assert len(missed) == 1 and "grabación perdida" in missed[0].text
    recorder.posts.clear()
    await beat(watch)
    assert recorder.posts == []


async def test_an_event_that_ended_while_the_watch_was_stopped_may_have_been_missed(
    make_watch, recorder: Recorder, lab: LabHandle, tmp_path: Path
):
    lab.state.devices[SCI201].channels[0].recording = False
    first = await make_watch(store_path=tmp_path / "w.db")
    await beat(first)
    lab.advance(2 * 3600)  # stopped for two hours; BIO 230 ended at 13:55
    recorder.posts.clear()
    again = await make_watch(store_path=tmp_path / "w.db")
    await beat(again)
    text = "\n".join(digests(recorder))
    assert (
        '- “SCI 201 Lab”: may have been missed: "BIO 230 Genetics Lab" ended at 13:55 (UTC) while the watch was'
        " not reading the fleet; it was seen on, not recording; the recorder now: not recording" in text
    )
    assert "“SCI 101 Lecture Hall”: may have been missed" not in text  # it was never seen on or coming


async def test_a_waiting_proposal_gets_a_reminder_and_its_notice_a_line_when_it_is_denied(
    make_watch, recorder: Recorder, lab: LabHandle
):
    expires = (NOW + timedelta(minutes=15)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    proposals = MemoryProposals(
        items=[pending("p-000000000001", "2026-09-16T12:59:00.000Z", expires_at=expires)]
    )
    watch = await make_watch(proposals=proposals)
    notices = notices_of(watch)
    assert notices.reminder_minutes == 10
    await notices.post_pending()
    lab.advance(4 * 60)
    await notices.post_pending()
    await watch.outbox.drain()
    assert recorder.kinds() == ["notice"]
    lab.advance(2 * 60)  # 13:06, 9 minutes before it expires
    await notices.post_pending()
    await notices.post_pending()
    await watch.outbox.drain()
    assert recorder.kinds() == ["notice", "reminder"]
    reminder = plain_text(recorder.of("reminder")[0])
    assert "expires at 13:15 (in 9 min)" in reminder and "cannot approve anything" in reminder
    proposals.items = [
        msgspec.structs.replace(proposals.items[0], status="denied", decided_at="2026-09-16T13:07:00.000Z")
    ]
    await notices.post_pending()
    await notices.post_pending()
    await watch.outbox.drain()
    (closed,) = recorder.of("notice_closed")
    assert closed.follows and closed.ref == "p-000000000001"
    assert closed.title.startswith("Update: Start recording:") and closed.title.endswith(
        "denied; nothing ran."
    )
