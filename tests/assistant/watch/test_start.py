"""The watch started before its sign-in is placed (the demo's ``up`` placed the lab's sign-ins
a moment after the assistant started, walk report item 1): the first beat's failed read is tried
again within seconds, not a whole interval later; the watch is not called stopped before three
beats failed or three intervals passed; the failed read's post is wholly in the watch's
language; and the wall says the fleet has not been read yet, not that no class is coming."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.assistant.watch import answers
from services.assistant.watch.heartbeat import START_RETRY_SECONDS, WatchOptions
from services.assistant.watch.wall import wall_view
from services.lab.server import LabHandle
from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.read_client import EpiphanReadClient
from shared.errors import MEANINGS, Code, FleetwatchError
from tests.assistant.watch.helpers import Recorder, beat


class SlotNotYetPlaced:
    """The read slot before ``up`` placed the demo's sign-in (``no_sign_in``), then, once
    `placed`, the lab's real read client."""

    def __init__(self, reader: EpiphanReadClient) -> None:
        self.reader = reader
        self.placed = False

    async def snapshot(self) -> FleetSnapshot:
        if not self.placed:
            raise FleetwatchError(Code.NO_SIGN_IN)
        return await self.reader.snapshot()


async def test_a_first_beat_before_the_sign_in_is_placed_is_tried_again_within_seconds_then_reads(
    make_watch, reader: EpiphanReadClient, recorder: Recorder, lab: LabHandle
):
    slot = SlotNotYetPlaced(reader)
    watch = await make_watch(reader=slot, options=WatchOptions(interval_seconds=180))
    first = await beat(watch)
    assert (first.read, first.code) == (False, Code.NO_SIGN_IN)
    assert watch.next_beat_in(first) == START_RETRY_SECONDS
    lab.advance(START_RETRY_SECONDS)
    second = await beat(watch)
    assert watch.next_beat_in(second) == 2 * START_RETRY_SECONDS  # doubling, up to the interval
    slot.placed = True
    lab.advance(2 * START_RETRY_SECONDS)
    third = await beat(watch)
    assert third.read and {"digest", "readiness"} <= set(third.posted)
    assert watch.next_beat_in(third) == 180
    lab.set_fault("get_devices_in_my_team", "error", count=1)
    later = await beat(watch)  # once the watch has read, a failed read waits the interval
    assert not later.read and watch.next_beat_in(later) == 180


async def test_the_retries_grow_to_the_interval_and_never_past_it(make_watch, reader: EpiphanReadClient):
    watch = await make_watch(reader=SlotNotYetPlaced(reader), options=WatchOptions(interval_seconds=30))
    waits = []
    for _ in range(5):
        waits.append(watch.next_beat_in(await beat(watch)))
    assert waits == [5.0, 10.0, 20.0, 30.0, 30.0]
    assert watch.next_beat_in(None) == 30  # a beat that could not be recorded: the interval


async def test_a_started_watch_is_alive_until_three_beats_failed_or_three_intervals_passed(
    make_watch, reader: EpiphanReadClient, lab: LabHandle, tmp_path: Path
):
    watch = await make_watch(reader=SlotNotYetPlaced(reader), options=WatchOptions(interval_seconds=60))
    status = await answers.status(watch)
    assert status.alive and status.last_read_at is None
    await beat(watch)
    assert (await answers.status(watch)).alive  # one failed beat is not "no read in three"
    lab.advance(180)
    assert (await answers.status(watch)).alive
    lab.advance(1)
    assert not (await answers.status(watch)).alive
    counted = await make_watch(
        reader=SlotNotYetPlaced(reader),
        options=WatchOptions(interval_seconds=60),
        store_path=tmp_path / "counted.db",
    )
    for beats in (1, 2):
        await beat(counted)
        assert (await answers.status(counted)).alive, beats
    await beat(counted)
    status = await answers.status(counted)
    assert not status.alive and status.failed_beats == 3 and status.last_code == Code.NO_SIGN_IN


@pytest.mark.parametrize(
    ("language", "meaning"),
    [
        ("en", "there is no usable sign-in for this (see 'fleetwatch doctor')"),
        ("es", "no hay un inicio de sesión utilizable para esto (vea 'fleetwatch doctor')"),
    ],
)
async def test_a_failed_read_is_posted_wholly_in_the_watchs_language(
    make_watch, reader: EpiphanReadClient, recorder: Recorder, language: str, meaning: str
):
    watch = await make_watch(reader=SlotNotYetPlaced(reader), options=WatchOptions(language=language))
    await beat(watch)
    (post,) = recorder.of("read_failed")
    assert f"(no_sign_in: {meaning})" in post.title
    assert MEANINGS[Code.NO_SIGN_IN] not in post.title
    report = await answers.digest_now(watch, post=False, language=language)
    assert f"(no_sign_in: {meaning})" in report.text and MEANINGS[Code.NO_SIGN_IN] not in report.text


@pytest.mark.parametrize(
    ("language", "not_read"),
    [("en", "The fleet has not been read yet."), ("es", "Todavía no se leyó la flota.")],
)
async def test_the_wall_before_the_first_read_says_so_and_not_that_no_class_is_coming(
    make_watch, reader: EpiphanReadClient, lab: LabHandle, language: str, not_read: str
):
    slot = SlotNotYetPlaced(reader)
    watch = await make_watch(reader=slot)
    await beat(watch)
    view = wall_view(watch, {}, language, lab.now)
    assert view.read_line == not_read and view.no_events == "" and not view.stale
    slot.placed = True
    await beat(watch)
    assert wall_view(watch, {}, language, lab.now).events  # the campus has classes today
