"""Silences, pure: what one hides and when, how it reads (hostile names inert), and how a
digest folds a group outage (`compose.Grouping`)."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from services.assistant.watch.compose import Grouping, silence_line
from services.assistant.watch.silences import Silence, ends, holds_at, silencing

ROOM = Silence(
    id=1,
    target_kind="room",
    target="19012340205",
    target_name="ENG 220\u202e<!channel>",
    reason="projector swap",
    include_classes=False,
    set_by=1000,
    set_by_name="ana",
    set_at="2026-09-16T13:00:00.000Z",
    until="2026-09-16T15:00:00.000Z",
)
GROUP = msgspec.structs.replace(
    ROOM,
    id=2,
    target_kind="group",
    target="Engineering",
    target_name="Engineering",
    include_classes=True,
    until="2026-09-16T14:00:00.000Z",
    lifted_at="2026-09-16T13:30:00.000Z",
)


def test_a_silence_holds_from_when_it_was_set_until_it_ends_or_is_lifted() -> None:
    assert not holds_at(ROOM, "2026-09-16T12:59:59.999Z")
    assert holds_at(ROOM, "2026-09-16T13:00:00.000Z") and holds_at(ROOM, "2026-09-16T14:59:59.999Z")
    assert not holds_at(ROOM, "2026-09-16T15:00:00.000Z")
    assert ends(GROUP) == "2026-09-16T13:30:00.000Z" and not holds_at(GROUP, "2026-09-16T13:45:00.000Z")


def test_a_room_silence_hides_its_room_not_a_class_not_recording_and_a_group_one_its_rooms() -> None:
    at = "2026-09-16T13:10:00.000Z"
    hide = {"at": at, "device_id": "19012340205", "group": "Engineering"}
    assert silencing([ROOM], kind="finding_opened", **hide) is ROOM
    assert silencing([ROOM], kind="not_recording_in_event", **hide) is None
    assert silencing([ROOM], kind="missed_recording", **hide) is None
    assert silencing([ROOM], at=at, device_id="19012340206", group="Engineering", kind="offline") is None
    assert silencing([GROUP], at=at, device_id="19012340206", group="Engineering", kind="offline") is GROUP
    assert silencing([GROUP], kind="not_recording_in_event", **hide) is GROUP  # include_classes
    assert silencing([GROUP], at=at, device_id="19012340206", group="", kind="offline") is None


def test_a_silence_reads_with_the_room_name_inert_in_the_operators_time() -> None:
    now = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)
    line = silence_line(ROOM, "en", UTC, now)
    assert line == "“ENG 220⟦U+202E⟧<!channel>”: silenced until 15:00 by ana: projector swap"


def test_an_outage_folds_at_the_policys_size_and_share_of_its_group() -> None:
    groups = {f"d{i}": "ENG" for i in range(10)} | {"x": ""}
    grouping = Grouping(groups=groups, min_rooms=3, min_percent=50)
    assert grouping.size("ENG") == 10
    assert not grouping.folds("ENG", 4) and grouping.folds("ENG", 5)
    assert not grouping.folds("", 5)
    assert Grouping(groups={"a": "G", "b": "G"}, min_rooms=3).folds("G", 2) is False
