"""What the watch answers operators on assistant.sock: its status, the history, a digest now,
room notes. Each function takes the running `Watch`.

- `status`: ``alive`` while fewer than three beats failed in a row and a beat read the fleet
  within three intervals, of the watch's start before its first read (`Watch.alive`: what
  ``fleetwatch status --check`` exits on).
- `history`: the watch store's history (rooms, findings, reads, posts, notes) merged with the
  proposals and their outcomes read from approval.sock, newest first, in words. When
  approval.sock does not answer the history says so (``unread``), it is never silently short.
- `digest_now`: one beat now (it waits for a running beat) and the digest of what changed since
  the last posted one; posted with ``post`` (and the cursor moved), else only shown.
- `set_note` / `list_notes`: an operator's note on the one room a name matches.
- `set_silence` / `list_silences` / `lift_silence`: an operator's silence of the one room a
  name matches, or of a group (an Epiphan group's name, or a building of the policy's map),
  until a time (always: at most `services.assistant.watch.silences.MAX_SILENCE`), with a
  reason; who set it is the peer's uid. Each is audited through approval.sock *before* it is
  kept or lifted: when that record cannot be written nothing is kept (the code says why).
"""

from __future__ import annotations

import logging
import pwd
from collections.abc import Awaitable, Iterable
from datetime import timedelta
from typing import Final, Literal, TypeVar

from services.assistant import AssistantError
from services.assistant.watch import compose
from services.assistant.watch.heartbeat import Watch
from services.assistant.watch.notes import clean_note, fold, match_room
from services.assistant.watch.post import plain_text
from services.assistant.watch.silences import MAX_SILENCE, Silence, ends
from services.assistant.watch.store import HistoryRow, NoteRow
from services.assistant.watch.times import clock, parse_utc, utc_text
from services.assistant.watch.words import word
from shared.epiphan.attention import Priority
from shared.errors import Code, FleetwatchError
from shared.sqlite import StoreError
from shared.text.changes import quoted
from shared.text.display import visible
from shared.text.languages import language_of
from shared.text.wording import PRIORITY_WORDS, part_words
from shared.wire.approval import ProposalEvent, RecordSilence
from shared.wire.assistant import (
    MAX_HISTORY_ENTRIES,
    DigestReport,
    History,
    HistoryEntry,
    NoteOutcome,
    Notes,
    RoomNote,
    RoomRef,
    SilenceOutcome,
    Silences,
    WatchStatus,
)

log = logging.getLogger(__name__)

NAME_CAP: Final = 80


async def status(watch: Watch) -> WatchStatus:
    """The watch's status now (see the module docstring)."""
    now = watch.now()
    silences = len(await watch.active_silences(now))
    interval = watch.options.interval_seconds
    read_at = watch.last_read_at
    alive = watch.alive(now)
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
        held_until=None if (held := watch.held_until(now)) is None else utc_text(held),
        timezone=watch.zone_name,
        silences=silences,
    )


# --- history ----------------------------------------------------------------------------------


def _room(row: HistoryRow, language: str) -> str:
    """The row's room in the reader's quote marks (`shared.text.changes.quoted`)."""
    return quoted(row.room or row.device_id or "?", language)


def history_text(row: HistoryRow, language: str) -> str:
    """One history row in words."""
    facts = dict(row.facts)
    if row.kind in ("finding_opened", "finding_worse", "finding_resolved"):
        what = compose.describe(row.finding(), language)
        priority = PRIORITY_WORDS[language_of(language)][row.priority or Priority.WHEN_CONVENIENT]
        return word(language, f"h_{row.kind}", priority=priority, what=what)
    if row.kind in ("device_offline", "device_online", "device_new", "device_gone", "note_cleared"):
        return word(language, f"h_{row.kind}", room=_room(row, language))
    if row.kind == "note":
        return word(language, "h_note", room=_room(row, language), text=visible(facts.get("text", ""), 280))
    if row.kind == "readiness":
        verdict = word(language, compose.VERDICT_KEYS.get(facts.get("verdict", ""), "ready"))
        title = visible(facts.get("title", ""), NAME_CAP) or word(language, "untitled")
        return word(language, "h_readiness", room=_room(row, language), title=title, verdict=verdict)
    if row.kind == "digest":
        return word(language, "h_digest", counts=visible(facts.get("title", ""), 300))
    if row.kind == "sweep":
        return word(language, "h_sweep", rooms=facts.get("rooms", "?"), online=facts.get("online", "?"))
    if row.kind == "first_read":
        return word(language, "h_first_read", rooms=facts.get("rooms", "?"), online=facts.get("online", "?"))
    if row.kind == "read_failed":
        return word(language, "h_read_failed", code=visible(facts.get("code", "?"), 64))
    if row.kind == "read_recovered":
        return word(language, "h_read_recovered", n=facts.get("beats", "?"))
    if row.kind == "read_partial":
        parts = [part_words(p, language) for p in facts.get("parts", "?").split(",")]
        return word(language, "h_read_partial", parts=visible("; ".join(parts), 200))
    if row.kind == "read_complete":
        return word(language, "h_read_complete")
    if row.kind == "silence":
        return word(
            language,
            "h_silence",
            room=_room(row, language),
            until=visible(facts.get("until", "?"), 32),
            who=visible(facts.get("by", "?"), 40),
            reason=visible(facts.get("reason", ""), 200),
        )
    if row.kind == "unsilence":
        return word(language, "h_unsilence", room=_room(row, language))
    if row.kind in compose.MISSED_KINDS:
        return word(language, f"h_{row.kind}", what=compose.describe(row.finding(), language))
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
            since=clock(last.at, watch.where, now, shown),
            rooms=word(shown, "rooms_count", n=len(last.snapshot.devices)),
            online=word(shown, "online_count", n=sum(d.online for d in last.snapshot.devices)),
            open=word(shown, "open_problems", n=len(last.findings)),
        )
    if not outcome.read and outcome.code is not None:
        text = f"{compose.read_failed_text(outcome.code, shown)}\n{text}"
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


# --- silences -------------------------------------------------------------------------------------


def user_name(uid: int) -> str:
    """The user name of `uid` on this machine (``uid 1234`` when it has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _record(silence: Silence, action: Literal["silence", "unsilence"], uid: int) -> RecordSilence:
    kind: Literal["room", "group"] = "room" if silence.target_kind == "room" else "group"
    return RecordSilence(
        action=action,
        silence_id=silence.id,
        target_kind=kind,
        target=silence.target[:200],
        reason=silence.reason[:200],
        until=silence.until,
        uid=uid,
        user=user_name(uid)[:64],
        include_classes=silence.include_classes,
    )


AUDIT_CODES: Final = frozenset(
    {Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER, Code.OPERATION_NOT_ALLOWED, Code.STORE_BUSY}
)
"""What approval.sock may answer a silence's audit record with (relayed; anything else is
``service_unavailable``): the silence is then not kept, or not lifted."""

T = TypeVar("T")


async def _audited(change: Awaitable[T]) -> T:
    """`change` (a store write that commits only once approval.sock recorded it), its audit
    failure translated to an `AssistantError` with one of `AUDIT_CODES`."""
    try:
        return await change
    except StoreError:
        raise
    except FleetwatchError as exc:
        code = exc.code if exc.code in AUDIT_CODES else Code.SERVICE_UNAVAILABLE
        raise AssistantError(code, "approval.sock could not record it; nothing was changed") from exc


def groups_known(watch: Watch) -> dict[str, str]:
    """``{folded name: name}`` of the groups and buildings of the last read."""
    last = watch.last
    names = {watch.group_of(d) for d in last.snapshot.devices} if last else set()
    names |= set(watch.rules.buildings)
    return {fold(n): n for n in names if n}


async def set_silence(
    watch: Watch,
    target: str,
    reason: str,
    *,
    minutes: int | None,
    until: str | None,
    include_classes: bool,
    uid: int,
) -> SilenceOutcome:
    """Silence the one room `target` names, else the group it names (see the module
    docstring).

    Raises:
        AssistantError: ``watch_not_ready`` (no room known yet), ``invalid_message`` (neither or
            both of `minutes` and `until`, an end not in the future or past `MAX_SILENCE`, an
            empty reason); one of `AUDIT_CODES`: approval.sock could not write the audit row
            (nothing was kept).
        StoreError: the watch store could not keep it (``store_busy``).
    """
    rooms = await watch.store.rooms()
    if not rooms:
        raise AssistantError(Code.WATCH_NOT_READY)
    now = watch.now()
    if (minutes is None) == (until is None):
        raise AssistantError(Code.INVALID_MESSAGE, "give --for or --until, not both")
    end = now + timedelta(minutes=minutes) if minutes is not None else parse_utc(until or "")
    if end <= now or end - now > MAX_SILENCE:
        raise AssistantError(Code.INVALID_MESSAGE, "a silence ends in the future, within 14 days")
    cleaned = clean_note(reason)
    if not cleaned:
        raise AssistantError(Code.INVALID_MESSAGE, "a silence needs a reason")
    group = groups_known(watch).get(fold(target))
    found = [] if group is not None else match_room(target, [(r.id, r.name, r) for r in rooms])
    if group is None and not found:
        return SilenceOutcome(status="not_found", code=Code.ROOM_NOT_FOUND)
    if len(found) > 1:
        candidates = tuple(RoomRef(device_id=r.id, name=r.name) for r in found)
        return SilenceOutcome(status="ambiguous", candidates=candidates, code=Code.ROOM_AMBIGUOUS)
    kind, key, name = ("group", group, group) if group is not None else ("room", found[0].id, found[0].name)
    silence = Silence(
        id=0,
        target_kind=kind,
        target=key,
        target_name=name,
        reason=cleaned,
        include_classes=include_classes,
        set_by=uid,
        set_by_name=user_name(uid),
        set_at=utc_text(now),
        until=utc_text(end),
    )
    if watch.proposals is None:
        raise AssistantError(Code.SERVICE_UNAVAILABLE, "no approval.sock to audit the silence through")
    proposals = watch.proposals

    async def audit(kept: Silence) -> None:
        await proposals.record(_record(kept, "silence", uid))

    kept = await _audited(watch.store.add_silence(silence, audit))
    return SilenceOutcome(status="silenced", silences=(kept,))


async def list_silences(watch: Watch) -> Silences:
    """The silences that hold now, soonest to end first."""
    holding = sorted(await watch.active_silences(watch.now()), key=lambda s: (ends(s), s.id))
    return Silences(silences=tuple(holding), timezone=watch.zone_name)


async def lift_silence(watch: Watch, target: str, *, uid: int) -> SilenceOutcome:
    """Lift the silences that hold on `target` (a silence's number, a device ID, or the name a
    silence shows), each audited first.

    Raises:
        AssistantError: one of `AUDIT_CODES`: approval.sock could not write the audit row
            (nothing was lifted).
        StoreError: the watch store could not record it (``store_busy``).
    """
    now = watch.now()
    wanted = fold(target)
    matches = [
        s
        for s in await watch.active_silences(now)
        if target.strip() in (str(s.id), s.target) or fold(s.target_name) == wanted
    ]
    if not matches:
        return SilenceOutcome(status="not_found", code=Code.SILENCE_NOT_FOUND)
    if watch.proposals is None:
        raise AssistantError(Code.SERVICE_UNAVAILABLE, "no approval.sock to audit the lifting through")
    proposals = watch.proposals

    async def audit(silence: Silence) -> None:
        await proposals.record(_record(silence, "unsilence", uid))

    lifted = []
    for silence in matches:
        done = await _audited(watch.store.lift_silence(utc_text(now), silence.id, uid, audit))
        if done is not None:
            lifted.append(done)
    return SilenceOutcome(status="lifted", silences=tuple(lifted))
