"""The watch's posts, in words: the digest, readiness, a notice of a pending proposal, the
nightly sweep, a failed read. Pure (pass ``now`` and the team's time zone).

The **digest** reports the net change since the last posted digest (`net_changes` over the
history rows after the cursor): findings new since then (at their priority now), worse (their
priority rose), resolved, and rooms that joined or left the team; a finding that appeared and
went away in between is only counted. It is grouped Fix first / Fix soon / When convenient /
Resolved, calm: counts in the first line, one line per room and problem, an operator's room
note under its room. An empty net change is no digest (`digest_post` returns None).

An outage of at least ``min_rooms`` rooms and ``min_percent`` of one group (an Epiphan group,
or a building of the policy's map: `Grouping`) reads as **one item** ("Engineering: 5 of 7 rooms
offline") with its rooms folded under it; their return is posted per room, once each. A change
in a silenced room or group (`unsilenced`) is left out, its return to normal too, and each
silence that holds is named at the end ("silenced until 14:00 by ana: projector swap"). An event
that ended unrecorded is a **missed recording** under Fix first.

Every name passes through `shared.text.display.visible` (here or in `shared.text.wording`); a
room's, a channel's or a group's name stands in the reader's quote marks
(`shared.text.changes.quoted`), so it cannot carry state-like words ahead of the real
state; each destination escapes the lines for its own markup (`services.assistant.watch.post`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any, Final

from services.assistant.watch.post import Post, Section, capped
from services.assistant.watch.readiness import NOT_READY, READY_NOTES, ReadinessItem
from services.assistant.watch.silences import Silence, silencing
from services.assistant.watch.store import HistoryRow
from services.assistant.watch.times import clock, parse_utc
from services.assistant.watch.words import word
from shared.epiphan.attention import Finding, Priority
from shared.epiphan.fleet import FleetSnapshot
from shared.errors import Code
from shared.text.change_words import why
from shared.text.changes import quoted
from shared.text.display import visible
from shared.text.languages import language_of
from shared.text.wording import PRIORITY_WORDS, describe_finding, minutes_text, unread_text
from shared.wire.approval import ApproverReport, ProposalEvent

NAME_CAP: Final = 80
NOTE_CAP: Final = 280
FINDING_KINDS: Final = frozenset({"finding_opened", "finding_worse", "finding_resolved"})
ROOM_KINDS: Final = frozenset({"device_new", "device_gone"})
MISSED_KINDS: Final = frozenset({"missed_recording", "missed_recording_maybe"})


@dataclass(frozen=True, slots=True)
class Grouping:
    """How rooms group in a digest: ``groups`` maps each room (device ID) to its group (its
    building, else its Epiphan group; "" for none); an outage of at least ``min_rooms`` rooms
    and ``min_percent`` % of a group is one item."""

    groups: Mapping[str, str] = field(default_factory=dict)
    min_rooms: int = 3
    min_percent: int = 50

    def size(self, group: str) -> int:
        return sum(1 for g in self.groups.values() if g == group)

    def folds(self, group: str, count: int) -> bool:
        """True when `count` rooms of `group` make one item."""
        size = self.size(group)
        return bool(group) and count >= self.min_rooms and count * 100 >= self.min_percent * size


def unsilenced(
    rows: Sequence[HistoryRow], silences: Sequence[Silence], groups: Mapping[str, str]
) -> list[HistoryRow]:
    """`rows` without the changes a silence hid when they happened (`silences.silencing`)."""
    if not silences:
        return list(rows)
    return [
        r
        for r in rows
        if not r.device_id
        or silencing(
            silences,
            at=r.at,
            device_id=r.device_id,
            group=groups.get(r.device_id, ""),
            kind=r.finding_kind or r.kind,
        )
        is None
    ]


@dataclass
class Net:
    """The net change over a run of history rows (see the module docstring)."""

    new: list[HistoryRow] = field(default_factory=list)
    worse: list[tuple[HistoryRow, Priority]] = field(default_factory=list)
    resolved: list[HistoryRow] = field(default_factory=list)
    rooms: list[HistoryRow] = field(default_factory=list)
    missed: list[HistoryRow] = field(default_factory=list)
    came_and_went: int = 0
    first: HistoryRow | None = None

    @property
    def empty(self) -> bool:
        """Nothing a digest reports (a problem that came and went alone is not news)."""
        return not (self.new or self.worse or self.resolved or self.rooms or self.missed)


def net_changes(rows: Sequence[HistoryRow]) -> Net:
    """The net change of `rows` (oldest first)."""
    net = Net()
    by_key: dict[str, list[HistoryRow]] = {}
    by_room: dict[str, list[HistoryRow]] = {}
    for row in rows:
        if row.kind == "first_read" and net.first is None:
            net.first = row
        elif row.kind in FINDING_KINDS and row.key:
            by_key.setdefault(row.key, []).append(row)
        elif row.kind in ROOM_KINDS and row.device_id:
            by_room.setdefault(row.device_id, []).append(row)
        elif row.kind in MISSED_KINDS:
            net.missed.append(row)
    for runs in by_key.values():
        first, last = runs[0], runs[-1]
        open_at_start = first.kind != "finding_opened"
        open_at_end = last.kind != "finding_resolved"
        latest = next((r for r in reversed(runs) if r.kind != "finding_resolved"), last)
        if not open_at_start and open_at_end:
            net.new.append(latest)
        elif open_at_start and not open_at_end:
            net.resolved.append(last)
        elif not open_at_start:
            net.came_and_went += 1
        else:
            start = first.old_priority if first.kind == "finding_worse" else first.priority
            if start is not None and latest.priority is not None and latest.priority < start:
                net.worse.append((latest, start))
    for runs in by_room.values():
        if len(runs) % 2 == 1:  # joined then left (or the reverse) nets to nothing
            net.rooms.append(runs[-1])
    return net


def _counts(net: Net, language: str) -> str:
    parts = [
        word(language, key, n=n)
        for key, n in (
            ("count_new", len(net.new)),
            ("count_worse", len(net.worse)),
            ("count_resolved", len(net.resolved)),
            ("count_rooms", len(net.rooms)),
            ("count_missed", len(net.missed)),
        )
        if n
    ]
    return ", ".join(parts)


def _room_name(row: HistoryRow, language: str) -> str:
    return quoted(row.room or row.device_id or "?", language)


def describe(finding: Finding, language: str) -> str:
    """One finding in words (`shared.text.wording.describe_finding`, and the whole-fleet one)."""
    if finding.kind in MISSED_KINDS:
        return missed_words(finding, language)
    if finding.kind == "fleet_unreadable":
        facts = dict(finding.facts)
        what = word(language, "fleet_unreadable", beats=facts.get("beats", "3"), code=facts.get("code", "?"))
        return f"{word(language, 'whole_fleet')}: {what}"
    return describe_finding(finding, language)


def missed_words(finding: Finding, language: str) -> str:
    """A missed recording (or one that may have been missed) in words, with what is known."""
    facts = dict(finding.facts)
    title = visible(facts.get("event", ""), NAME_CAP) or word(language, "untitled")
    room = quoted(finding.device_name or finding.device_id, language)
    ended = facts.get("ended", "?")
    if finding.kind == "missed_recording":
        return word(language, "missed_recording", room=room, title=title, ended=ended)
    recorder = word(language, f"recorder_{facts.get('recorder', 'not_read')}")
    seen = word(language, "seen_on_yes" if facts.get("seen_on") == "yes" else "seen_on_no")
    return word(language, "missed_maybe", room=room, title=title, ended=ended, seen=seen, recorder=recorder)


def silence_line(silence: Silence, language: str, where: tzinfo, now: datetime) -> str:
    """``“ENG 220”: silenced until 14:00 by ana: projector swap``."""
    return word(
        language,
        "silenced_line",
        target=quoted(silence.target_name, language),
        until=clock(parse_utc(silence.until), where, now, language),
        who=visible(silence.set_by_name, 40),
        reason=visible(silence.reason, NOTE_CAP),
    )


def _fold_outages(
    rows: list[HistoryRow], grouping: Grouping, language: str
) -> tuple[list[HistoryRow], list[tuple[Priority, list[str]]]]:
    """`rows` without the offline rooms of a group outage, and each outage as (priority, its
    lines: the item, then its rooms indented)."""
    by_group: dict[str, list[HistoryRow]] = {}
    for row in rows:
        if row.finding_kind == "offline" and row.device_id:
            by_group.setdefault(grouping.groups.get(row.device_id, ""), []).append(row)
    folded: set[int] = set()
    items: list[tuple[Priority, list[str]]] = []
    for group, members in sorted(by_group.items()):
        if not grouping.folds(group, len(members)):
            continue
        folded.update(r.seq for r in members)
        priority = min(r.priority or Priority.WHEN_CONVENIENT for r in members)
        head = word(
            language,
            "group_offline",
            group=quoted(group, language),
            n=len(members),
            of=grouping.size(group),
        )
        rooms = sorted((_room_name(r, language) for r in members), key=str.casefold)
        items.append((priority, [f"- {head}", *(f"    - {name}" for name in rooms)]))
    return [r for r in rows if r.seq not in folded], items


def _with_notes(lines: list[tuple[str, str | None]], notes: Mapping[str, str], language: str) -> list[str]:
    """Each line, and under the first line of a room with a note, the note."""
    out: list[str] = []
    shown: set[str] = set()
    for text, device_id in lines:
        out.append(f"- {text}")
        if device_id and device_id in notes and device_id not in shown:
            shown.add(device_id)
            out.append(f"    {word(language, 'note', text=visible(notes[device_id], NOTE_CAP))}")
    return out


def digest_post(
    net: Net,
    *,
    language: str,
    where: tzinfo,
    now: datetime,
    since: datetime | None,
    rooms: int,
    online: int,
    notes: Mapping[str, str],
    grouping: Grouping | None = None,
    silences: Sequence[Silence] = (),
) -> Post | None:
    """The digest of `net` (None when `net` is empty). `since`: the last posted digest;
    `rooms`/`online`: the fleet now; `notes`: room notes by device ID; `grouping`: how
    outages fold (None: never); `silences`: those holding now, named at the end."""
    if net.empty:
        return None
    counts = _counts(net, language)
    if net.first is not None:
        title = word(language, "digest_first", rooms=rooms, online=online)
    elif since is not None:
        title = word(
            language,
            "digest_head",
            since=clock(since, where, now, language),
            counts=counts,
            rooms=rooms,
            online=online,
        )
    else:
        title = word(language, "digest_head_start", counts=counts, rooms=rooms, online=online)
    more = word(language, "more", n="%(n)s")
    grouped: dict[Priority, list[tuple[str, str | None]]] = {p: [] for p in Priority}
    for row in net.missed:
        grouped[Priority.FIX_FIRST].append((describe(row.finding(), language), row.device_id))
    new, outages = _fold_outages(net.new, grouping, language) if grouping else (net.new, [])
    for row in new:
        grouped[row.priority or Priority.WHEN_CONVENIENT].append(
            (describe(row.finding(), language), row.device_id)
        )
    for row, start in net.worse:
        was = word(language, "was", priority=PRIORITY_WORDS[_lang(language)][start])
        grouped[row.priority or Priority.WHEN_CONVENIENT].append(
            (f"{describe(row.finding(), language)} {was}", row.device_id)
        )
    sections = [
        Section(
            PRIORITY_WORDS[_lang(language)][p],
            capped(
                [line for prio, lines in outages if prio is p for line in lines]
                + _with_notes(grouped[p], notes, language),
                more,
            ),
        )
        for p in Priority
        if grouped[p] or any(prio is p for prio, _ in outages)
    ]
    if net.resolved:
        lines = [(describe(row.finding(), language), None) for row in net.resolved]
        sections.append(Section(word(language, "resolved"), capped(_with_notes(lines, {}, language), more)))
    if net.rooms:
        lines = [
            (
                word(
                    language,
                    "device_new" if r.kind == "device_new" else "device_gone",
                    room=_room_name(r, language),
                ),
                None,
            )
            for r in net.rooms
        ]
        sections.append(Section(word(language, "fleet"), capped(_with_notes(lines, {}, language), more)))
    if net.came_and_went:
        sections.append(Section(None, (word(language, "came_and_went", n=net.came_and_went),)))
    if silences:
        lines = [f"- {silence_line(s, language, where, now)}" for s in silences]
        sections.append(Section(word(language, "silenced_head"), capped(lines, more)))
    return Post("digest", title, tuple(sections))


def decisions_line(report: ApproverReport, language: str) -> str:
    """One line of the approvers' report for the weekly digest: approvals and denials, by how
    many people, and how many approvals were decided faster than the card can be read."""
    people = report.people
    return word(
        language,
        "decisions_week",
        days=report.days,
        approved=sum(p.approved for p in people),
        denied=sum(p.denied for p in people),
        people=word(language, "people_count", n=len(people)),
        fast=sum(p.fast for p in people),
        seconds=report.threshold_seconds,
    )


def _lang(language: str) -> str:
    return language_of(language)


VERDICT_KEYS: Final = {"ready": "ready", READY_NOTES: "ready_notes", NOT_READY: "not_ready"}


def readiness_post(
    item: ReadinessItem,
    *,
    language: str,
    where: tzinfo,
    zone_name: str,
    now: datetime,
    minutes: int,
    notes: Mapping[str, str],
) -> Post:
    """The one post for the event of `item` (each event is posted once): the room, the event,
    its time and the verdict with its reasons, and the room's note under it."""
    verdict = word(language, VERDICT_KEYS[item.verdict])
    if item.reasons:
        verdict = f"{verdict}: {'; '.join(item.reasons)}"
    title = visible(item.title, NAME_CAP) if item.title else word(language, "untitled")
    line = word(
        language,
        "readiness_line",
        room=quoted(item.room, language),
        title=title,
        time=clock(item.start, where, now, language),
        minutes=minutes_text((item.start - now).total_seconds()),
        verdict=verdict,
    )
    head = word(language, "readiness_head", minutes=minutes, zone=zone_name)
    return Post(
        "readiness", head, (Section(None, tuple(_with_notes([(line, item.device_id)], notes, language))),)
    )


CHANGE_KEYS: Final = {
    "batch_recording:start": "change_start_recording",
    "batch_recording:stop": "change_stop_recording",
    "start_stream_endpoint": "change_start_stream",
    "stop_stream_endpoint": "change_stop_stream",
    "confirm_cms_event_on_device": "change_confirm_event",
    "batch_reboot": "change_reboot",
    "batch_firmware_update": "change_firmware",
}


@dataclass(frozen=True, slots=True)
class RoomName:
    """What the sandbox list (``ListWritable``) says of a target: its name, its channels' names."""

    name: str
    channels: Mapping[str, str] = field(default_factory=dict)


def change_words(event: ProposalEvent, rooms: Mapping[str, RoomName], language: str) -> str:
    """``Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)``: the change and its room in
    words, from the tool, its arguments and the names recorded with the proposal at Prepare
    (``event.names``), else those the sandbox list gives now (names are display data only; a
    target named by neither is named by its ID, said so)."""
    action = event.arguments.get("action")
    key = f"{event.tool}:{action}" if isinstance(action, str) else event.tool
    what = (
        word(language, CHANGE_KEYS[key])
        if key in CHANGE_KEYS
        else word(language, "change_other", tool=visible(event.tool, 64))
    )
    places = []
    for target in event.targets:
        room = rooms.get(target)
        name = event.names.get(f"device {target} name") or (room.name if room else "")
        place = quoted(name, language) if name else word(language, "unknown_room", device=target)
        channel = _channel_of(event, target)
        if channel is not None:
            named = event.names.get(f"device {target} channel {channel} name") or (
                room.channels.get(channel) if room else None
            )
            place += ", " + (
                word(language, "channel_named", channel=channel, name=quoted(visible(named, 40), language))
                if named
                else word(language, "channel", channel=channel)
            )
        places.append(place)
    return f"{what}: {'; '.join(places)}" if places else what


def _channel_of(event: ProposalEvent, target: str) -> str | None:
    channel = event.arguments.get("channel_id")
    if isinstance(channel, str):
        return visible(channel, 8)
    for item in event.arguments.get("device_ids") or ():
        if isinstance(item, str) and item.startswith(f"{target}-"):
            return visible(item.removeprefix(f"{target}-"), 8)
    return None


def author(proposed_by: str, language: str) -> str:
    """Who proposed, in words."""
    if proposed_by == "assistant":
        return word(language, "by_assistant")
    if proposed_by == "operator":
        return word(language, "by_operator")
    return word(language, "by_other", who=visible(proposed_by, 40))


def notice_post(
    event: ProposalEvent,
    rooms: Mapping[str, RoomName],
    *,
    page_url: str | None,
    expires_at: datetime | None,
    language: str,
    where: tzinfo,
    now: datetime,
) -> Post:
    """The notice of one pending proposal: the change and its room in words, who proposed it
    and when, until when it waits, and the approval page's address (text only: no button,
    no token, no link to this proposal). It says it cannot approve anything."""
    made = _utc(event.created_at)
    who = author(event.proposed_by, language)
    made_at = clock(made, where, now, language) if made else "?"
    lines = [change_words(event, rooms, language) + "."]
    if expires_at is not None:
        lines.append(
            word(
                language, "notice_who", who=who, time=made_at, expires=clock(expires_at, where, now, language)
            )
        )
    else:
        lines.append(word(language, "notice_who_no_expiry", who=who, time=made_at))
    lines.append(
        word(language, "notice_page", url=page_url) if page_url else word(language, "notice_no_page")
    )
    lines.append(word(language, "notice_inert", proposal=visible(event.proposal_id, 40)))
    return Post(
        "notice", word(language, "notice_head"), (Section(None, tuple(lines)),), ref=event.proposal_id
    )


def reminder_post(
    event: ProposalEvent,
    rooms: Mapping[str, RoomName],
    *,
    page_url: str | None,
    expires_at: datetime,
    language: str,
    where: tzinfo,
    now: datetime,
) -> Post:
    """The one reminder of a proposal still waiting shortly before it expires: the change, until
    when, the approval page's address (text only; no approval power)."""
    lines = [
        change_words(event, rooms, language) + ".",
        word(
            language,
            "reminder_line",
            expires=clock(expires_at, where, now, language),
            minutes=minutes_text((expires_at - now).total_seconds()),
        ),
        word(language, "notice_page", url=page_url) if page_url else word(language, "notice_no_page"),
        word(language, "notice_inert", proposal=visible(event.proposal_id, 40)),
    ]
    return Post(
        "reminder", word(language, "reminder_head"), (Section(None, tuple(lines)),), ref=event.proposal_id
    )


CLOSED_KEYS: Final = {
    "denied": "closed_denied",
    "expired": "closed_expired",
    "approved": "closed_approved",
    "executed": "closed_approved",
    "not_run": "closed_approved",
}
"""A decided proposal's status → the line that follows its notice."""


def closed_post(event: ProposalEvent, rooms: Mapping[str, RoomName], language: str) -> Post:
    """The one line that follows a proposal's notice once it was decided or expired (Slack
    edits the notice with it; elsewhere it is a post of its own)."""
    key = CLOSED_KEYS.get(event.status, "closed_expired")
    return Post(
        "notice_closed",
        word(language, key, change=change_words(event, rooms, language)),
        ref=event.proposal_id,
        follows=True,
    )


def _utc(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def sweep_post(report: Mapping[str, Any], *, language: str, now: datetime) -> Post:
    """The nightly sweep (`services.assistant.watch.sweep.sweep_report`) in words."""
    more = word(language, "more", n="%(n)s")
    title = word(language, "sweep_head", date=report["label"], rooms=report["rooms"], online=report["online"])
    offline = [
        word(language, "why_offline_for", time=minutes_text(r["seconds"]))
        if r.get("seconds") is not None
        else word(language, "why_offline")
        for r in report["offline"]
    ]
    sections = [
        Section(
            word(language, "sweep_offline", n=len(report["offline"])),
            capped(
                [
                    f"- {quoted(r['room'], language)}: {why}"
                    for r, why in zip(report["offline"], offline, strict=True)
                ],
                more,
            ),
        )
        if report["offline"]
        else Section(None, (word(language, "sweep_offline_none"),)),
        Section(
            word(language, "sweep_behind", n=len(report["behind"])),
            capped(
                [
                    "- "
                    + word(
                        language,
                        "sweep_behind_line",
                        room=quoted(r["room"], language),
                        model=visible(r["model"], 20),
                        firmware=visible(r["firmware"], 20),
                        newest=visible(r["newest"], 20),
                    )
                    for r in report["behind"]
                ],
                more,
            ),
        )
        if report["behind"]
        else Section(None, (word(language, "sweep_behind_none"),)),
    ]
    since = report.get("since_last")
    sections.append(
        Section(None, (_sweep_since(since, language) if since else word(language, "sweep_first"),))
    )
    return Post("sweep", title, tuple(sections))


def _sweep_since(since: Mapping[str, int], language: str) -> str:
    """What changed since the last sweep (`sweep.since_last`'s counts), each count in words."""
    return word(
        language,
        "sweep_since",
        opened=word(language, "problems_found", n=since["opened"]),
        resolved=word(language, "count_resolved", n=since["resolved"]),
        offline=word(language, "times_offline", n=since["offline"]),
        online=word(language, "came_back", n=since["online"]),
    )


def read_failed_post(code: Code, language: str) -> Post:
    """The one report of a failed read (the console only; three in a row become a finding)."""
    return Post("read_failed", read_failed_text(code, language), console_only=True)


def read_failed_text(code: Code, language: str) -> str:
    """A failed read in words, wholly in `language` ("Fleetwatch could not read the fleet
    (no_sign_in: there is no usable sign-in …)"): the code's meaning from the catalogue's ``why`` entry (never
    `shared.errors.MEANINGS`' English)."""
    return word(language, "read_failed", code=code, meaning=why(code, language))


def approval_down_post(code: Code, silent: timedelta, language: str) -> Post:
    """approval.sock has not answered for `silent` (approval_web down: nothing can be approved
    or run): to every destination, once (`services.assistant.watch.notices.Notices.poll`)."""
    minutes = max(1, int(silent.total_seconds() // 60))
    return Post(
        "approval_down",
        word(language, "approval_down", code=code, meaning=why(code, language), minutes=minutes),
    )


def approval_back_post(language: str) -> Post:
    """approval.sock answers again after an ``approval_down`` post."""
    return Post("approval_back", word(language, "approval_back"))


def read_partial_post(snapshot: FleetSnapshot, language: str) -> Post:
    """The one report of a read that left parts out (the console only): each part in words
    (`shared.text.wording.unread_text`)."""
    parts = "; ".join(unread_text(u, len(snapshot.devices), language) for u in snapshot.unread)
    return Post("read_partial", word(language, "read_partial", parts=parts), console_only=True)


def fleet_unreadable(code: str, beats: int) -> Finding:
    """The finding opened after three failed reads in a row (Fix first, about the whole fleet)."""
    return Finding(
        Priority.FIX_FIRST, "fleet_unreadable", "fleet", "", (("code", code), ("beats", str(beats)))
    )
