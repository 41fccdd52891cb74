"""What the watch answers operators on assistant.sock: its status, the history, a digest now,
room notes. Each function takes the running `Watch`.

- `status`: ``alive`` when a beat read the fleet within three intervals (what ``fleetwatch
  status --check`` exits on).
- `history`: the watch store's history (rooms, findings, reads, posts, notes) merged with the
  proposals and their outcomes read from approval.sock, newest first, in words. When
  approval.sock does not answer the history says so (``unread``), it is never silently short.
- `digest_now`: one beat now (it waits for a running beat) and the digest of what changed since
  the last posted one; posted with ``post`` (and the cursor moved), else only shown.
- `set_note` / `list_notes`: an operator's note on the one room a name matches.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import Final

from services.assistant import AssistantError
from services.assistant.watch import compose
from services.assistant.watch.heartbeat import Watch
from services.assistant.watch.notes import clean_note, fold, match_room
from services.assistant.watch.post import plain_text
from services.assistant.watch.store import HistoryRow, NoteRow
from services.assistant.watch.times import clock, utc_text
from services.assistant.watch.words import word
from shared.epiphan.attention import Priority
from shared.errors import MEANINGS, Code, FleetwatchError
from shared.text.display import visible
from shared.text.languages import language_of
from shared.text.wording import PRIORITY_WORDS, part_words
from shared.wire.approval import ProposalEvent
from shared.wire.assistant import (
    MAX_HISTORY_ENTRIES,
    DigestReport,
    History,
    HistoryEntry,
    NoteOutcome,
    Notes,
    RoomNote,
    RoomRef,
    WatchStatus,
)

log = logging.getLogger(__name__)

ALIVE_INTERVALS: Final = 3
"""A watch is alive when a beat read the fleet within this many intervals."""
NAME_CAP: Final = 80


def status(watch: Watch) -> WatchStatus:
    """The watch's status now (see the module docstring)."""
    now = watch.now()
    interval = watch.options.interval_seconds
    read_at = watch.last_read_at
    alive = read_at is not None and now - read_at <= timedelta(seconds=ALIVE_INTERVALS * interval)
    last = watch.last
    counts = {p: 0 for p in Priority}
    for finding in last.findings if last else ():
        counts[finding.priority] += 1
    devices = last.snapshot.devices if last else ()
    return WatchStatus(
        alive=alive,
        now=utc_text(now),
        interval_seconds=interval,
        last_read_at=None if read_at is None else utc_text(read_at),
        last_beat_at=None if watch.last_beat_at is None else utc_text(watch.last_beat_at),
        failed_beats=watch.failed_beats,
        last_code=watch.last_code,
        devices=len(devices),
        online=sum(d.online for d in devices),
        fix_first=counts[Priority.FIX_FIRST],
        fix_soon=counts[Priority.FIX_SOON],
        when_convenient=counts[Priority.WHEN_CONVENIENT],
        posts=watch.outbox.counts(),
    )


# --- history ----------------------------------------------------------------------------------


def _room(row: HistoryRow) -> str:
    return visible(row.room or row.device_id or "?", NAME_CAP)


def history_text(row: HistoryRow, language: str) -> str:
    """One history row in words."""
    facts = dict(row.facts)
    if row.kind in ("finding_opened", "finding_worse", "finding_resolved"):
        what = compose.describe(row.finding(), language)
        priority = PRIORITY_WORDS[language_of(language)][row.priority or Priority.WHEN_CONVENIENT]
        return word(language, f"h_{row.kind}", priority=priority, what=what)
    if row.kind in ("device_offline", "device_online", "device_new", "device_gone", "note_cleared"):
        return word(language, f"h_{row.kind}", room=_room(row))
    if row.kind == "note":
        return word(language, "h_note", room=_room(row), text=visible(facts.get("text", ""), 280))
    if row.kind == "readiness":
        verdict = word(language, compose.VERDICT_KEYS.get(facts.get("verdict", ""), "ready"))
        title = visible(facts.get("title", ""), NAME_CAP) or word(language, "untitled")
        return word(language, "h_readiness", room=_room(row), title=title, verdict=verdict)
    if row.kind == "digest":
        return word(language, "h_digest", counts=visible(facts.get("title", ""), 300))
    if row.kind == "sweep":
        return word(language, "h_sweep", rooms=facts.get("rooms", "?"), online=facts.get("online", "?"))
    if row.kind == "first_read":
        return word(language, "h_first_read", rooms=facts.get("rooms", "?"), online=facts.get("online", "?"))
    if row.kind == "read_failed":
        return word(language, "h_read_failed", code=visible(facts.get("code", "?"), 64))
    if row.kind == "read_recovered":
        return word(language, "h_read_recovered", beats=facts.get("beats", "?"))
    if row.kind == "read_partial":
        parts = [part_words(p, language) for p in facts.get("parts", "?").split(",")]
        return word(language, "h_read_partial", parts=visible("; ".join(parts), 200))
    if row.kind == "read_complete":
        return word(language, "h_read_complete")
    return visible(row.kind, 64)


STATUS_KEYS: Final = {
    "denied": "status_denied",
    "expired": "status_expired",
    "approved": "status_approved",
    "pending": "status_pending",
}
OUTCOME_KEYS: Final = {
    "error": "status_error",
    "unknown": "status_unknown",
    "refused": "status_refused",
    "running": "status_running",
}


def proposal_entries(event: ProposalEvent, rooms: dict, language: str) -> list[HistoryEntry]:
    """A proposal's entries: made; decided (denied, expired...); ran (its outcome)."""
    change = compose.change_words(event, rooms, language)
    facts = {"proposal_id": event.proposal_id, "tool": event.tool, "status": event.status}
    made = word(language, "h_proposal", who=compose.author(event.proposed_by, language), change=change)
    out = [HistoryEntry(at=event.created_at, kind="proposal", text=made, facts=facts)]
    if event.outcome is not None:
        if event.outcome == "ok":
            key = "status_verified" if event.verification == "verified" else "status_ok"
            key = "status_contradicted" if event.verification == "contradicted" else key
        else:
            key = OUTCOME_KEYS.get(event.outcome, "status_unknown")
        words = word(language, key)
        at = event.finished_at or event.decided_at or event.created_at
        out.append(
            HistoryEntry(
                at=at,
                kind="proposal_outcome",
                text=word(language, "h_proposal_status", change=change, status=words),
                facts={**facts, "outcome": event.outcome, "verification": event.verification or ""},
            )
        )
    elif event.status in STATUS_KEYS or event.status == "not_run":
        words = (
            word(language, "status_not_run", code=visible(event.status_code or "?", 64))
            if event.status == "not_run"
            else word(language, STATUS_KEYS[event.status])
        )
        if event.status != "pending":
            out.append(
                HistoryEntry(
                    at=event.decided_at or event.created_at,
                    kind="proposal_decided",
                    text=word(language, "h_proposal_status", change=change, status=words),
                    facts=facts,
                )
            )
    return out


async def history(watch: Watch, days: int, language: str) -> History:
    """What changed in the last `days` days, newest first (see the module docstring)."""
    since = utc_text(watch.now() - timedelta(days=days))
    rows, more = await watch.store.history_since(since, MAX_HISTORY_ENTRIES)
    entries = [
        HistoryEntry(
            at=row.at,
            kind=row.kind,
            text=history_text(row, language),
            room=None if row.room is None else visible(row.room, NAME_CAP),
            device_id=row.device_id,
            facts={k: v for k, v in row.facts},
        )
        for row in rows
    ]
    unread: dict[str, Code] = {}
    if watch.proposals is not None:
        try:
            proposals = await watch.proposals.history(since)
        except FleetwatchError as exc:
            unread["proposals"] = exc.code
        else:
            rooms = {}
            if proposals.items:
                try:
                    rooms = await watch.proposals.rooms()
                except FleetwatchError as exc:
                    log.info(
                        "history names proposals' rooms by ID: the sandbox list could not be read (%s)",
                        exc.code,
                    )
            for event in proposals.items:
                entries += proposal_entries(event, rooms, language)
            more += proposals.more
    entries.sort(key=lambda e: e.at, reverse=True)
    kept = entries[:MAX_HISTORY_ENTRIES]
    return History(since=since, entries=tuple(kept), more=more + len(entries) - len(kept), unread=unread)


# --- a digest now -------------------------------------------------------------------------------


async def digest_now(watch: Watch, *, post: bool, language: str | None) -> DigestReport:
    """One beat now and its digest (see the module docstring)."""
    shown = language or watch.options.language
    async with watch.lock:
        outcome = await watch.beat_locked(post_digest=False)
        now = watch.now()
        pending, _ = await watch.pending_digest(now, shown)
        posted: tuple[str, ...] = ()
        if post and pending is not None:
            posted = await watch.post_digest(now)
    if pending is not None:
        text = plain_text(pending)
    elif watch.last is None:
        text = word(shown, "digest_not_read")
    else:
        last = watch.last
        text = word(
            shown,
            "digest_nothing",
            since=clock(last.at, watch.where, now),
            rooms=len(last.snapshot.devices),
            online=sum(d.online for d in last.snapshot.devices),
            open=len(last.findings),
        )
    if not outcome.read and outcome.code is not None:
        text = f"{word(shown, 'read_failed', code=outcome.code, meaning=MEANINGS[outcome.code])}\n{text}"
    return DigestReport(
        read=outcome.read,
        changed=pending is not None,
        text=text,
        code=outcome.code,
        posted=posted,
    )


# --- notes ----------------------------------------------------------------------------------------


def _note(row: NoteRow) -> RoomNote:
    return RoomNote(
        device_id=row.device_id, room=row.room, text=row.text, set_at=row.set_at, set_by=row.set_by
    )


async def set_note(watch: Watch, room: str, text: str, *, clear: bool, uid: int) -> NoteOutcome:
    """Keep (or with `clear` remove) the note of the one room `room` names.

    Raises:
        AssistantError: ``watch_not_ready`` (no room known yet: the watch has not read the
            fleet), ``invalid_message`` (an empty note that is not a clear).
    """
    rooms = await watch.store.rooms()
    if not rooms:
        raise AssistantError(Code.WATCH_NOT_READY)
    cleaned = "" if clear else clean_note(text)
    if not clear and not cleaned:
        raise AssistantError(Code.INVALID_MESSAGE, "a note needs some text (use --clear to remove one)")
    found = match_room(room, [(r.id, r.name, r) for r in rooms])
    if not found:
        return NoteOutcome(status="not_found", code=Code.ROOM_NOT_FOUND)
    if len(found) > 1:
        candidates = tuple(RoomRef(device_id=r.id, name=r.name) for r in found)
        return NoteOutcome(status="ambiguous", candidates=candidates, code=Code.ROOM_AMBIGUOUS)
    (target,) = found
    at = utc_text(watch.now())
    if clear:
        await watch.store.clear_note(at, target.id, target.name)
        return NoteOutcome(status="cleared", note=RoomNote(target.id, target.name, "", at, uid))
    await watch.store.set_note(at, target.id, target.name, cleaned, uid)
    return NoteOutcome(status="saved", note=RoomNote(target.id, target.name, cleaned, at, uid))


async def list_notes(watch: Watch, room: str | None, search: str | None) -> Notes:
    """The notes, by room; `room` and `search` narrow them (case and accents ignored)."""
    rows: Iterable[NoteRow] = await watch.store.notes()
    if room:
        rows = [r for r in rows if fold(room) in fold(r.room) or r.device_id == room.strip()]
    if search:
        rows = [r for r in rows if fold(search) in fold(r.text)]
    return Notes(notes=tuple(_note(r) for r in rows))
