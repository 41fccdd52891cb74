"""The posts in words: the digest's net change, its groups and notes; notices; readiness."""

from __future__ import annotations

from datetime import timedelta

from services.assistant.watch.compose import (
    RoomName,
    change_words,
    closed_post,
    digest_post,
    net_changes,
    notice_post,
    readiness_post,
)
from services.assistant.watch.post import plain_text
from services.assistant.watch.readiness import NOT_READY, READY, ReadinessItem
from services.assistant.watch.store import HistoryRow
from services.assistant.watch.times import zone
from shared.epiphan.attention import Priority
from tests.assistant.watch.helpers import NOW, pending

UTC_ZONE = zone("UTC")
_seq = iter(range(1, 10_000))


def row(
    kind: str,
    key: str,
    room: str = "ENG 210",
    priority=Priority.FIX_SOON,
    old=None,
    finding="offline",
    facts=(),
):
    return HistoryRow(
        next(_seq),
        "2026-09-16T13:00:00.000Z",
        kind,
        key.split("|")[0],
        room,
        key,
        finding,
        priority,
        old,
        facts,
    )


def digest(rows, **kw):
    defaults = dict(
        language="en",
        where=UTC_ZONE,
        now=NOW,
        since=NOW - timedelta(minutes=3),
        rooms=30,
        online=28,
        notes={},
    )
    return digest_post(net_changes(rows), **{**defaults, **kw})


def test_nothing_new_is_no_digest():
    assert digest([]) is None
    came_and_went = [row("finding_opened", "d1|offline|"), row("finding_resolved", "d1|offline|")]
    assert digest(came_and_went) is None


def test_the_digest_groups_new_worse_and_resolved_calmly_with_counts_first():
    rows = [
        row("finding_opened", "d1|offline|", "ENG 210"),
        row(
            "finding_worse",
            "d2|offline|",
            "LIB Room 2",
            Priority.FIX_FIRST,
            Priority.FIX_SOON,
            facts=(("event", "Workshop"),),
        ),
        row(
            "finding_resolved",
            "d3|disk_low|",
            "ART 120",
            finding="disk_low",
            facts=(("free_pct", "8.0"), ("free_bytes", "80000000000"), ("total_bytes", "1000000000000")),
        ),
        row("finding_opened", "d4|offline|", "SCI 105"),
        row("finding_resolved", "d4|offline|", "SCI 105"),
    ]
    text = plain_text(digest(rows, notes={"d2": "lamp replaced"}))
    assert text.splitlines() == [
        "Fleetwatch, what changed since 12:57: 1 new, 1 worse, 1 resolved. 30 rooms, 28 online.",
        "Fix first",
        '- “LIB Room 2”: offline (event "Workshop") (was: Fix soon)',
        "    Note (an operator's): lamp replaced",
        "Fix soon",
        "- “ENG 210”: offline",
        "Resolved",
        "- “ART 120”: disk nearly full: 8.0% (80.0 GB) free",
        "Also: 1 problem came and went since then.",
    ]


def test_a_problem_open_before_that_went_and_came_back_at_the_same_priority_is_not_news():
    rows = [row("finding_resolved", "d1|offline|"), row("finding_opened", "d1|offline|")]
    assert digest(rows) is None


def test_the_first_digest_says_the_watch_started_and_lists_everything_that_needs_attention():
    rows = [
        HistoryRow(
            next(_seq), "2026-09-16T13:00:00.000Z", "first_read", facts=(("rooms", "30"), ("online", "28"))
        ),
        row("finding_opened", "d1|offline|", "ENG 210"),
    ]
    lines = plain_text(digest(rows, since=None)).splitlines()
    assert lines[0] == "Fleetwatch is now watching 30 rooms (28 online). What needs attention:"
    assert lines[1:] == ["Fix soon", "- “ENG 210”: offline"]


def test_the_digest_speaks_spanish():
    text = plain_text(digest([row("finding_opened", "d1|offline|", "Aula 12")], language="es"))
    assert text.splitlines() == [
        "Fleetwatch, qué cambió desde las 12:57: 1 nuevo. 30 salas, 28 conectadas.",
        "Arreglar pronto",
        "- «Aula 12»: desconectada",
    ]


def test_rooms_that_join_or_leave_are_listed_and_a_join_then_leave_cancels_out():
    rows = [
        HistoryRow(next(_seq), "t", "device_new", "d9", "New Hall"),
        HistoryRow(next(_seq), "t", "device_gone", "d8", "Old Hall"),
        HistoryRow(next(_seq), "t", "device_new", "d7", "Brief"),
        HistoryRow(next(_seq), "t", "device_gone", "d7", "Brief"),
    ]
    lines = plain_text(digest(rows)).splitlines()
    assert lines[1:] == ["The fleet", "- “New Hall”: new in the team", "- “Old Hall”: no longer in the team"]


ROOMS = {"29088800004": RoomName("Sandbox Classroom", {"1": "Lecture"})}


def test_a_change_is_named_in_words_with_its_room_and_channel():
    record = pending("p-000000000001", "2026-09-16T12:59:00.000Z")
    assert change_words(record, ROOMS, "en") == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
    assert (
        change_words(record, ROOMS, "es") == "Iniciar la grabación: «Sandbox Classroom», canal 1 («Lecture»)"
    )
    reboot = pending("p-000000000002", "t", tool="batch_reboot", arguments={"device_ids": ["29088800004"]})
    assert change_words(reboot, ROOMS, "en") == "Restart a device: “Sandbox Classroom”"
    stream = pending(
        "p-000000000003",
        "t",
        tool="stop_stream_endpoint",
        arguments={
            "stream_id": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5",
            "device_id": "29088800004",
            "channel_id": "2",
        },
    )
    assert change_words(stream, ROOMS, "en") == "Stop a stream: “Sandbox Classroom”, channel 2"


def test_a_room_whose_name_could_not_be_read_is_named_by_its_id_and_says_so():
    record = pending("p-000000000001", "t", targets=("29088800009",))
    assert change_words(record, {}, "en") == (
        "Start recording: a sandbox room (ID 29088800009; its name could not be read), channel 1"
    )


def test_a_decided_change_is_named_by_the_names_recorded_with_it_not_the_list_of_now():
    recorded = {
        "device 29088800009 name": "Sandbox Classroom",
        "device 29088800009 channel 1 name": "Lecture",
    }
    renamed = {"29088800009": RoomName("Renamed since", {"1": "Other"})}
    for rooms in ({}, renamed):  # gone from the sandbox list, or renamed since it was proposed
        record = pending("p-000000000001", "t", targets=("29088800009",), status="denied", names=recorded)
        assert (
            change_words(record, rooms, "en") == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
        )
        assert "«Sandbox Classroom», canal 1 («Lecture»)" in closed_post(record, rooms, "es").title


def test_a_notice_names_the_room_the_change_and_the_page_and_carries_no_approval_power():
    record = pending("p-0123456789ab", "2026-09-16T12:59:00.000Z", expires_at="2026-09-16T13:14:00.000Z")
    post = notice_post(
        record,
        ROOMS,
        page_url="http://127.0.0.1:8767/",
        expires_at=NOW + timedelta(minutes=14),
        language="en",
        where=UTC_ZONE,
        now=NOW,
    )
    assert plain_text(post).splitlines() == [
        "A change is waiting for a person's approval.",
        "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”).",
        "Proposed by the assistant at 12:59; unless approved or denied it expires at 13:14.",
        "Approve or deny it on the approval page, on the Fleetwatch machine: http://127.0.0.1:8767/",
        "This message cannot approve anything. (proposal p-0123456789ab)",
    ]
    assert "approve?" not in plain_text(post) and "token" not in plain_text(post)


def test_a_notice_without_a_running_page_says_no_one_can_approve_yet():
    record = pending("p-0123456789ab", "2026-09-16T12:59:00.000Z")
    post = notice_post(record, ROOMS, page_url=None, expires_at=None, language="es", where=UTC_ZONE, now=NOW)
    lines = plain_text(post).splitlines()
    assert lines[2] == "Lo propuso el asistente a las 12:59."
    assert (
        lines[3] == "La página de aprobación no está funcionando: nadie puede aprobarlo hasta que funcione."
    )


def test_each_event_gets_a_readiness_post_of_its_own_with_its_verdict_and_why_and_the_rooms_note():
    ready = ReadinessItem("k1", "d1", "ENG 101", "e1", "Statics", NOW + timedelta(minutes=25), READY, ())
    offline = ReadinessItem(
        "k2",
        "d2",
        "LIB Room 2",
        "e2",
        "",
        NOW + timedelta(minutes=28),
        NOT_READY,
        ("offline for 2 h 00 min",),
    )
    notes = {"d2": "IT knows"}

    def lines(item: ReadinessItem, language: str = "en") -> list[str]:
        post = readiness_post(
            item, language=language, where=UTC_ZONE, zone_name="UTC", now=NOW, minutes=30, notes=notes
        )
        return plain_text(post).splitlines()

    assert lines(ready) == [
        "Readiness: an event starts within 30 min (times in UTC).",
        '- “ENG 101”: "Statics" at 13:25 (in 25 min): Ready',
    ]
    assert lines(offline) == [
        "Readiness: an event starts within 30 min (times in UTC).",
        '- “LIB Room 2”: "untitled event" at 13:28 (in 28 min): Not ready: offline for 2 h 00 min',
        "    Note (an operator's): IT knows",
    ]
    assert lines(ready, "es") == [
        "Preparación: un evento empieza en los próximos 30 min (horas en UTC).",
        '- «ENG 101»: "Statics" a las 13:25 (en 25 min): Lista',
    ]
