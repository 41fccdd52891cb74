"""What the watch answers operators (status, history, a digest now, notes), its notices of
pending proposals, and the wall screen's view."""

from __future__ import annotations

from datetime import timedelta

import pytest

from services.assistant import AssistantError
from services.assistant.watch import answers
from services.assistant.watch.compose import RoomName
from services.assistant.watch.heartbeat import WatchOptions
from services.assistant.watch.post import plain_text
from services.assistant.watch.runner import wall_for
from services.lab.server import LabHandle
from shared.errors import Code
from tests.assistant.watch.helpers import (
    ENG220,
    MemoryProposals,
    Recorder,
    beat,
    notices_of,
    pending,
    reboot_through_the_labs_mcp,
)

SANDBOX = {"29088800004": RoomName("Sandbox Classroom", {"1": "Lecture"})}


async def test_the_watch_is_alive_only_within_three_intervals_of_a_good_read(make_watch, lab: LabHandle):
    watch = await make_watch(options=WatchOptions(interval_seconds=60))
    assert (await answers.status(watch)).alive  # started, not yet three intervals without a read
    await beat(watch)
    status = await answers.status(watch)
    assert status.alive and (status.devices, status.online, status.fix_first) == (30, 28, 3)
    lab.advance(180)
    assert (await answers.status(watch)).alive
    lab.advance(1)
    assert not (await answers.status(watch)).alive
    lab.set_fault("get_devices_in_my_team", "error", count=1)
    await beat(watch)
    status = await answers.status(watch)
    assert not status.alive and status.failed_beats == 1 and status.last_code == Code.EPIPHAN_TOOL_ERROR


async def test_a_pending_proposal_gets_one_notice_naming_the_room_and_the_page(
    make_watch, recorder: Recorder
):
    proposals = MemoryProposals(rooms_reply=SANDBOX)
    watch = await make_watch(proposals=proposals)
    assert await notices_of(watch).post_pending() == 0
    proposals.items.append(pending("p-000000000001", "2026-09-16T12:59:00.000Z"))
    assert await notices_of(watch).post_pending() == 1
    assert await notices_of(watch).post_pending() == 0
    await watch.outbox.drain()
    (notice,) = recorder.of("notice")
    text = plain_text(notice)
    assert "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)." in text
    assert "http://127.0.0.1:8767/" in text and "cannot approve anything" in text
    proposals.items.append(pending("p-000000000002", "2026-09-16T12:59:30.000Z", status="denied"))
    assert await notices_of(watch).post_pending() == 0, (
        "only a proposal that waits for a person gets a notice"
    )


async def test_a_notice_whose_room_names_cannot_be_read_still_goes_out_naming_the_id(
    make_watch, recorder: Recorder
):
    proposals = MemoryProposals(
        items=[pending("p-000000000001", "2026-09-16T12:59:00.000Z")], rooms_reply=Code.SERVICE_UNAVAILABLE
    )
    watch = await make_watch(proposals=proposals)
    assert await notices_of(watch).post_pending() == 1
    await watch.outbox.drain()
    assert "a sandbox room (ID 29088800004; its name could not be read)" in plain_text(
        recorder.of("notice")[0]
    )


async def test_history_lists_what_changed_with_proposals_and_outcomes_newest_first(
    make_watch, lab: LabHandle
):
    proposals = MemoryProposals(
        items=[
            pending(
                "p-000000000001",
                "2026-09-16T12:00:00.000Z",
                status="executed",
                decided_at="2026-09-16T12:01:00.000Z",
                outcome="ok",
                verification="verified",
                finished_at="2026-09-16T12:01:02.000Z",
            ),
            pending(
                "p-000000000002",
                "2026-09-16T12:30:00.000Z",
                status="denied",
                decided_at="2026-09-16T12:31:00.000Z",
            ),
        ],
        rooms_reply=SANDBOX,
    )
    watch = await make_watch(proposals=proposals)
    await beat(watch)
    history = await answers.history(watch, 1, "en")
    texts = [e.text for e in history.entries]
    assert texts[-4:] == [
        "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”): denied; nothing ran",
        "Proposed by the assistant: Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)",
        "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”): ran ok and verified",
        "Proposed by the assistant: Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)",
    ]
    assert "The watch started: 30 rooms, 28 online" in texts
    assert "Fix soon: “ENG 210”: offline" in texts
    assert history.unread == {}
    spanish = await answers.history(watch, 1, "es")
    assert "Arreglar pronto: «ENG 210»: desconectada" in [e.text for e in spanish.entries]


async def test_history_says_when_the_proposals_could_not_be_read(make_watch):
    watch = await make_watch(proposals=MemoryProposals(history_reply=Code.SERVICE_UNAVAILABLE))
    await beat(watch)
    history = await answers.history(watch, 7, "en")
    assert history.unread == {"proposals": "service_unavailable"} and history.entries


async def test_a_digest_now_shows_what_changed_and_posts_only_when_asked(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch()
    shown = await answers.digest_now(watch, post=False, language=None)
    assert shown.read and shown.changed and shown.posted == ()
    assert shown.text.startswith("Fleetwatch is now watching 30 rooms")
    await watch.outbox.drain()
    assert "digest" not in recorder.kinds(), "shown, not posted: the next heartbeat still posts it"
    posted = await answers.digest_now(watch, post=True, language="es")
    await watch.outbox.drain()
    assert posted.posted == ("console",) and recorder.kinds().count("digest") == 1
    again = await answers.digest_now(watch, post=True, language=None)
    assert not again.changed and again.posted == ()
    assert again.text == "Nothing changed since 13:00. 30 rooms, 28 online; 19 open problems."
    lab.set_fault("get_devices_in_my_team", "error", count=1)
    failed = await answers.digest_now(watch, post=False, language=None)
    assert not failed.read and failed.code == Code.EPIPHAN_TOOL_ERROR
    assert failed.text.startswith("Fleetwatch could not read the fleet (epiphan_tool_error")


async def test_a_note_goes_on_the_one_room_a_name_means_and_an_ambiguous_name_saves_nothing(
    make_watch, recorder: Recorder, lab: LabHandle
):
    watch = await make_watch()
    with pytest.raises(AssistantError) as early:
        await answers.set_note(watch, "ENG 210", "x", clear=False, uid=1000)
    assert early.value.code == Code.WATCH_NOT_READY
    await beat(watch)
    ambiguous = await answers.set_note(watch, "SCI 1", "lamp", clear=False, uid=1000)
    assert ambiguous.status == "ambiguous" and ambiguous.code == Code.ROOM_AMBIGUOUS
    assert [c.name for c in ambiguous.candidates] == ["SCI 101 Lecture Hall", "SCI 105"]
    assert (await answers.list_notes(watch, None, None)).notes == ()
    missing = await answers.set_note(watch, "Moon Base", "x", clear=False, uid=1000)
    assert (missing.status, missing.code) == ("not_found", Code.ROOM_NOT_FOUND)
    saved = await answers.set_note(
        watch, "eng 210", "Switch port dead,\u202e IT ticket 4411", clear=False, uid=1000
    )
    assert saved.status == "saved" and saved.note.text == "Switch port dead, IT ticket 4411"
    assert saved.note.room == "ENG 210"
    (note,) = (await answers.list_notes(watch, "eng", "ticket")).notes
    assert (note.room, note.set_by) == ("ENG 210", 1000)
    assert (await answers.list_notes(watch, None, "nothing like it")).notes == ()
    await reboot_through_the_labs_mcp(lab, ENG220)
    await beat(watch)
    await beat(watch)  # offline is confirmed on the second beat (policy watch.offline_after_beats)
    digest = plain_text(recorder.of("digest")[-1])
    assert "- “ENG 220”: offline" in digest
    lab.advance(100)
    view = await wall_for(watch, "en")
    offline_fix_soon = next(g for g in view.groups if g.heading == "Fix soon")
    eng210 = next(line for line in offline_fix_soon.lines if line.text == "“ENG 210”: offline")
    assert eng210.note == "Note (an operator's): Switch port dead, IT ticket 4411"
    cleared = await answers.set_note(watch, "ENG 210", "", clear=True, uid=1000)
    assert cleared.status == "cleared" and (await answers.list_notes(watch, None, None)).notes == ()


async def test_the_wall_shows_the_groups_the_next_classes_with_readiness_and_when_the_fleet_was_read(
    make_watch, lab: LabHandle
):
    watch = await make_watch(options=WatchOptions(interval_seconds=30))
    before = await wall_for(watch, "en")
    assert before.read_line == "The fleet has not been read yet." and before.groups == ()
    assert not before.stale  # just started: stale only as `status` says "not alive"
    await beat(watch)
    view = await wall_for(watch, "es")
    # the wall says how long ago as every surface does (shared.text.times.say_ago; issue 28, item 9)
    assert view.read_line == "Última lectura de la flota a las 13:00 (hace 1 segundo)."
    assert [g.heading for g in view.groups] == ["Arreglar primero", "Arreglar pronto", "Cuando convenga"]
    assert view.refresh_seconds == 30
    first = view.events[0]
    assert (first.time, first.room) == ("en curso", "LAW Moot Court")
    eng101 = next(e for e in view.events if e.room == "ENG 101 Auditorium")
    assert (eng101.time, eng101.verdict_text) == ("13:25", "Lista")
    lab.advance(timedelta(minutes=2).total_seconds())
    stale = await wall_for(watch, "en")
    assert (
        stale.stale
        and stale.read_line == "Fleet last read at 13:00, 2 minutes ago: more than three heartbeats ago."
    )


async def test_the_wall_and_the_history_name_a_part_the_last_read_could_not_read(make_watch, lab: LabHandle):
    watch = await make_watch()
    await beat(watch)
    lab.set_fault("get_current_or_next_cms_events_for_devices", "malformed_json", count=1)
    await beat(watch)
    view = await wall_for(watch, "es")
    assert view.problem is not None and view.problem.startswith("eventos: no se pudieron leer: ")
    history = await answers.history(watch, 7, "es")
    assert any(e.text == "No se pudo leer parte de la flota (eventos)" for e in history.entries)
    await beat(watch)
    assert (await wall_for(watch, "en")).problem is None
    history = await answers.history(watch, 7, "en")
    assert history.entries[0].text == "The whole fleet was read again"


async def test_the_weekly_digest_carries_one_line_of_how_people_decided_once_a_week(
    make_watch, recorder: Recorder
):
    proposals = MemoryProposals()
    watch = await make_watch(proposals=proposals)
    shown = await answers.digest_now(watch, post=True, language=None)
    await watch.outbox.drain()
    assert shown.posted == ("console",) and proposals.decisions_calls == 1
    digest = recorder.of("digest")[-1]
    assert digest.lines()[-1] == (
        "Approvals, last 7 days: approved 5, denied 1, by 2 people; approved faster than the card"
        " can be read (under 3 s): 1. More: fleetwatch audit decisions"
    )
    assert (await watch.store.kv())["decisions_line_at"]
    await answers.digest_now(watch, post=True, language=None)  # nothing changed: no digest
    assert proposals.decisions_calls == 1


async def test_the_digest_goes_out_without_the_line_when_approval_sock_does_not_answer(
    make_watch, recorder: Recorder
):
    watch = await make_watch(proposals=MemoryProposals(decisions_reply=Code.SERVICE_UNAVAILABLE))
    await answers.digest_now(watch, post=True, language="es")
    await watch.outbox.drain()
    (digest,) = recorder.of("digest")
    assert not any("fleetwatch audit decisions" in line for line in digest.lines())
    assert "decisions_line_at" not in await watch.store.kv()


@pytest.mark.parametrize(
    ("language", "ready", "note"),
    [
        ("en", "Ready", "Note (an operator's): Mic 2 battery swapped weekly"),
        ("es", "Lista", "Nota (de un operador): Mic 2 battery swapped weekly"),
    ],
)
async def test_a_ready_rooms_note_is_on_its_row_of_the_walls_classes(make_watch, language, ready, note):
    watch = await make_watch()
    await beat(watch)
    saved = await answers.set_note(
        watch, "ENG 101 Auditorium", "Mic 2 battery swapped weekly", clear=False, uid=1000
    )
    assert saved.status == "saved"
    view = await wall_for(watch, language)
    eng101 = next(e for e in view.events if e.room == "ENG 101 Auditorium")
    assert (eng101.verdict_text, eng101.note) == (ready, note)
    assert all(e.note is None for e in view.events if e.room != "ENG 101 Auditorium")


async def test_the_wall_shows_the_rooms_a_change_may_target_or_says_they_could_not_be_read(
    make_watch, lab: LabHandle
):
    from shared.wire.client import CallError
    from shared.wire.executor import WritableChannel, WritableDevice, WritableDevices

    hostile = "ENG 105 — approved and verified"
    read = WritableDevices(
        devices=(
            WritableDevice(
                device_id="29088800004", name=hostile, online=True, channels=(WritableChannel("1"),)
            ),
            WritableDevice(device_id="29088800005", name="", online=False),
        ),
        read_at="2026-03-02T13:00:00.000Z",
    )
    asked: list[str] = []

    async def sandbox() -> WritableDevices:  # approval.sock's ListWritable, as the executor reads it
        asked.append("ListWritable")
        return read

    async def stopped() -> WritableDevices:
        raise CallError(
            Code.SERVICE_UNAVAILABLE, "nothing answers", service="approval_web", operation="list_writable"
        )

    watch = await make_watch()
    await beat(watch)
    english = await wall_for(watch, "en", sandbox=sandbox)
    assert english.sandbox_heading.startswith("Rooms a change may target (read at ")
    assert english.sandbox == (
        f"“{hostile}” (device 29088800004): online",
        "29088800005 (device 29088800005): OFFLINE",
    )
    spanish = await wall_for(watch, "es", sandbox=sandbox)
    assert spanish.sandbox_heading.startswith("Salas que un cambio puede tocar (leídas a las ")
    assert spanish.sandbox[0] == f"«{hostile}» (dispositivo 29088800004): conectada"
    assert asked == ["ListWritable", "ListWritable"]  # read afresh for each view
    for language, words in (
        ("en", "They could not be read now (service_unavailable)."),
        ("es", "No se pudieron leer ahora (service_unavailable)."),
    ):
        view = await wall_for(watch, language, sandbox=stopped)
        assert view.sandbox_problem == words and view.sandbox == () and view.sandbox_heading
    assert (await wall_for(watch, "en")).sandbox_heading == ""  # not asked: nothing shown
    # ... and the wall screen shows them (the page's template, over HTTP).
    from aiohttp.test_utils import TestClient, TestServer

    from services.assistant.page import build_page_app
    from shared.web.page_secret import PageSecret

    async def unused(question: str, language: str | None = None, *, asked_by: object = None) -> None:
        raise AssertionError("the wall asks nothing")

    async def shown(language: str | None) -> object:
        return await wall_for(watch, language, sandbox=sandbox)

    app = build_page_app(unused, secret=PageSecret.new(), wall=shown)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get("/wall?lang=es", headers={"Host": f"localhost:{client.port}"})
        html = await response.text()
    assert response.status == 200, html
    assert "Salas que un cambio puede tocar (leídas a las " in html
    assert f"<li>«{hostile}» (dispositivo 29088800004): conectada</li>" in html, html
