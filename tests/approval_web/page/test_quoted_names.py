"""Issue 28, item 12: code-built lines quote names. A room or channel named like a state
(``ENG 105 — approved and verified``) stands in the reader's quote marks on every surface that
builds a line around it (`shared.text.changes.quoted_name`): the card's title over HTTP, the
outcome page, ``fleetwatch pending list``, the watch's digest, notice, readiness, sweep and
history lines, and the finding lines of ``fleetwatch fleet`` and the keyword answer, in English
and in Spanish."""

from __future__ import annotations

import dataclasses
import html
import re
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec
import pytest

from services.assistant.watch.answers import history_text
from services.assistant.watch.compose import (
    Grouping,
    RoomName,
    change_words,
    digest_post,
    net_changes,
    notice_post,
    readiness_post,
    silence_line,
    sweep_post,
)
from services.assistant.watch.post import plain_text
from services.assistant.watch.readiness import NOT_READY, ReadinessItem
from services.assistant.watch.store import HistoryRow
from services.assistant.watch.times import zone
from services.ctl.admin_words import View, render_pending
from services.ctl.commands_watch import note_words, notes_words, silence_words
from shared.epiphan.attention import Finding, Priority
from shared.text.wording import describe_finding
from shared.wire.approval import ProposalSummary
from shared.wire.assistant import NoteOutcome, RoomNote
from shared.wire.executor import Inspection
from tests.approval_web.page.helpers import DEVICE, add_proposal, facts_for, page
from tests.assistant.watch.helpers import NOW, pending
from tests.assistant.watch.test_silences import ROOM as ROOM_SILENCE
from tests.ctl.test_printed_commands import HOSTILE, QUOTES, unquoted

LANGUAGES = ("en", "es")
ROOM = "29088800004"


def _lines(text: str) -> str:
    """What a person reads as lines on a page: its text without tags, entities decoded, up to
    the devices' table (each name there is a cell of its own under the heading "Name")."""
    return html.unescape(re.sub(r"<[^>]+>", "\n", text.split('<table class="targets">')[0]))


def _hostile_facts(proposal_id: str, targets: tuple[str, ...]) -> Inspection:
    """The helpers' Inspection with every room and channel named `HOSTILE`."""
    base = facts_for(proposal_id, targets)
    named = {k: HOSTILE for k in base.facts}
    return msgspec.structs.replace(
        base,
        targets=tuple(msgspec.structs.replace(t, name=HOSTILE, channel_name=HOSTILE) for t in base.targets),
        facts=named,
    )


async def test_the_card_title_and_the_outcome_page_quote_a_room_named_like_a_state(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await h.login()
        await add_proposal(h.db)
        h.executor.inspection_for = _hostile_facts
        for language in LANGUAGES:
            text, _ = await h.card_at(f"/?lang={language}")
            title = re.search(r'<h1 id="card-title">(.*?)</h1>', text, re.S)
            assert title is not None and HOSTILE in html.unescape(title.group(1)), text
            assert unquoted(html.unescape(title.group(1)), language) == [], language
            assert unquoted(_lines(text), language) == [], language
        _, forms = await h.card()
        location, _ = await h.decide("/approve", forms.forms["/approve"])
        outcomes = {}
        for language in LANGUAGES:
            async with h.client.get(f"{location}?lang={language}") as response:
                outcomes[language] = await response.text()
    for language, text in outcomes.items():
        assert HOSTILE in _lines(text), language
        assert unquoted(_lines(text), language) == [], language


@pytest.mark.parametrize("language", LANGUAGES)
def test_pending_list_quotes_a_room_named_like_a_state(language: str) -> None:
    summary = ProposalSummary(
        proposal_id="p-0123456789ab",
        tool="batch_recording",
        targets=(DEVICE,),
        created_at="2026-09-16T11:58:00.000Z",
        expires_at=None,
        proposed_by="assistant",
        status="pending",
        action="start",
        names={f"device {DEVICE} name": HOSTILE},
    )
    view = View(language, ZoneInfo("UTC"), NOW)
    for text in (render_pending(view, [summary]), render_pending(view, [], names={})):
        assert unquoted(text, language) == []
    text = render_pending(view, [summary])
    assert HOSTILE in text and unquoted(text, language) == [], text


def _row(kind: str, finding: str = "offline", facts: tuple[tuple[str, str], ...] = ()) -> HistoryRow:
    return HistoryRow(
        1,
        "2026-09-16T11:59:00.000Z",
        kind,
        ROOM,
        HOSTILE,
        f"{ROOM}|{finding}|",
        finding,
        Priority.FIX_SOON,
        None,
        facts,
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_watchs_lines_quote_a_room_named_like_a_state(language: str) -> None:
    utc = zone("UTC")
    texts: dict[str, str] = {}
    rows = [_row("finding_opened"), _row("device_new"), _row("finding_resolved", "disk_low")]
    digest = digest_post(
        net_changes(rows), language=language, where=utc, now=NOW, since=None, rooms=3, online=2, notes={}
    )
    assert digest is not None
    texts["digest"] = plain_text(digest)
    folded = [
        dataclasses.replace(_row("finding_opened"), seq=n, device_id=f"2908880000{n}") for n in range(1, 4)
    ]
    outage = digest_post(
        net_changes(folded),
        language=language,
        where=utc,
        now=NOW,
        since=None,
        rooms=3,
        online=0,
        notes={},
        grouping=Grouping({f"2908880000{n}": HOSTILE for n in range(1, 4)}),
    )
    assert outage is not None
    texts["outage"] = plain_text(outage)
    record = pending("p-0123456789ab", "2026-09-16T11:59:00.000Z")
    rooms = {ROOM: RoomName(HOSTILE, {"1": HOSTILE})}
    texts["change"] = change_words(record, rooms, language)
    texts["notice"] = plain_text(
        notice_post(record, rooms, page_url=None, expires_at=None, language=language, where=utc, now=NOW)
    )
    item = ReadinessItem("k1", ROOM, HOSTILE, "e1", "Statics", NOW + timedelta(minutes=25), NOT_READY, ())
    texts["readiness"] = plain_text(
        readiness_post(item, language=language, where=utc, zone_name="UTC", now=NOW, minutes=30, notes={})
    )
    silence = msgspec.structs.replace(ROOM_SILENCE, target_name=HOSTILE)
    texts["silence"] = silence_line(silence, language, utc, NOW)
    report = {
        "label": "2026-09-16",
        "rooms": 1,
        "online": 0,
        "offline": [{"room": HOSTILE, "seconds": 600}],
        "behind": [{"room": HOSTILE, "model": "Pearl-2", "firmware": "4.1", "newest": "4.2"}],
    }
    texts["sweep"] = plain_text(sweep_post(report, language=language, now=NOW))
    texts["history"] = history_text(_row("device_offline"), language)
    finding = Finding(Priority.FIX_SOON, "offline", ROOM, HOSTILE, ())
    texts["finding"] = describe_finding(finding, language)
    for where, text in texts.items():
        assert HOSTILE in text, (where, text)
        assert unquoted(text, language) == [], (where, text)
    start, end = QUOTES[language]
    assert texts["finding"].startswith(f"{start}{HOSTILE}{end}: ")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_watch_commands_lines_quote_a_room_named_like_a_state(language: str) -> None:
    view = View(language, ZoneInfo("UTC"), NOW)
    note = RoomNote(
        device_id=ROOM, room=HOSTILE, text="lamp dim", set_at="2026-09-16T11:00:00.000Z", set_by=7
    )
    texts = {
        "silence": silence_words(view, msgspec.structs.replace(ROOM_SILENCE, target_name=HOSTILE)),
        "note saved": note_words(view, NoteOutcome(status="saved", note=note)),
        "note cleared": note_words(view, NoteOutcome(status="cleared", note=note)),
        "notes": notes_words(view, (note,), 0),
    }
    for where, text in texts.items():
        assert HOSTILE in text, (where, text)
        assert unquoted(text, language) == [], (where, text)
