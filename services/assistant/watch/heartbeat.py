"""The heartbeat: every ``FLEETWATCH_HEARTBEAT_SECONDS`` the watch reads the fleet, judges it,
records what changed, and posts when something did. Read-only, no model call.

One beat (`Watch.beat`), under one lock (a beat asked for by ``fleetwatch digest`` waits for a
running one):

1. Read the whole team through the guarded read client (`reader.snapshot()`: the read
   sign-in, only tools on the read list). A failed read is reported **once** (a console line,
   one history row); the third failed beat in a row opens the finding ``fleet_unreadable``
   (Fix first), which the digest posts; the next good read resolves it.
2. Judge it with the attention rules (`shared.epiphan.attention.findings`: Fix first / Fix soon /
   When convenient) and diff it against the store (`diff`): rooms offline/online/new/gone,
   findings opened/worse/resolved, each with first seen / last seen / resolved. A read that
   could not read a part (the events, the system status: `FleetSnapshot.unread`) shows what it
   read; what needs the missing part is kept as the store had it (`diff.held_over`), and the
   part is reported **once** (a console line, one history row) until the fleet is read whole.
3. Readiness: each event starting within ``FLEETWATCH_READINESS_MINUTES`` gets one post of
   its own, once (`readiness`), quiet hours or not.
4. The nightly sweep when due (`sweep`): kept, and posted outside quiet hours.
5. The digest, outside quiet hours: the net change since the last posted digest
   (`compose.net_changes`); nothing is posted when nothing changed. During quiet hours the
   changes wait, and the first beat after them posts their net.

Posting never blocks a beat (`destinations.Outbox` queues). Notices of proposals that wait for
a person are `services.assistant.watch.notices`.

The watch holds the read client and nothing that can write: it never reads the sandbox slot,
and what it learns of proposals comes from approval.sock, read-only.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final, Protocol

import msgspec

from services.assistant.watch import captures, compose, readiness, sweep
from services.assistant.watch.destinations import Outbox
from services.assistant.watch.diff import (
    FLEET_ID,
    Change,
    KnownDevice,
    OpenFinding,
    diff_devices,
    diff_findings,
    held_over,
    key_of,
)
from services.assistant.watch.proposals import ProposalSource
from services.assistant.watch.silences import Silence, holds_at
from services.assistant.watch.store import WatchStore
from services.assistant.watch.times import parse_utc, utc_text, zone_name_of
from shared.epiphan.attention import Finding, Thresholds, event_state, findings, thresholds_from_policy
from shared.epiphan.fleet import Device, FleetSnapshot
from shared.errors import Code, FleetwatchError
from shared.policy.loader import Policy
from shared.wire.assistant import MAX_HISTORY_DAYS

log = logging.getLogger(__name__)

FAILED_BEATS_FINDING: Final = 3
"""Failed beats in a row that make a finding of their own."""
ALIVE_BEATS: Final = 3
"""A watch is alive while fewer than this many beats failed in a row and a beat read the fleet
within this many intervals (of its start, before its first read since it started)."""
START_RETRY_SECONDS: Final = 5.0
"""Until the watch has read the fleet once since it started, a failed beat is tried again after
this long, doubling each time up to the interval: a sign-in placed a moment after the start (the
demo's, a ``fleetwatch login`` just made) is read within seconds, not a whole interval later."""
OFFLINE_JUDGED: Final = frozenset({"offline", "not_recording_in_event"})
"""What a read of an offline room still judges; its other findings are kept as they were."""
NOTICE_SECONDS: Final = 5.0
"""How often approval.sock is asked for new pending proposals (cheap, local)."""
DECISIONS_DAYS: Final = 7
"""The weekly digest line: how each person decided over this many days (once a week at most)."""


class SnapshotReader(Protocol):
    """The guarded read client (`shared.epiphan.signed_session.SignedReader`)."""

    async def snapshot(self) -> FleetSnapshot: ...


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """The watch's settings: the beat's interval (seconds), readiness lead (minutes), the
    posts' language, how often proposals are polled (seconds), and the operator's time zone
    (``FLEETWATCH_TIMEZONE``, else the system's: quiet hours and the times people read are in
    it unless the policy names a zone)."""

    interval_seconds: float = 180.0
    readiness_minutes: int = 30
    language: str = "en"
    notice_seconds: float = NOTICE_SECONDS
    timezone: tzinfo = UTC


@dataclass(frozen=True, slots=True)
class LastRead:
    """The last good read: the snapshot, its findings, when (the watch's clock)."""

    snapshot: FleetSnapshot
    findings: tuple[Finding, ...]
    at: datetime


@dataclass(frozen=True, slots=True)
class BeatOutcome:
    """One beat: did it read the fleet (else `code`), how many changes it recorded, what it
    posted (post kinds)."""

    read: bool
    code: Code | None = None
    changes: int = 0
    posted: tuple[str, ...] = field(default_factory=tuple)


class Watch:
    """The watch of one fleet. Every collaborator comes through the constructor.

    Args:
        reader: the guarded read client (read sign-in only).
        store: the watch store (`WatchStore.connect`).
        outbox: where posts go (`Outbox`, already entered).
        proposals: approval.sock's proposals (None: no notices, history without proposals).
        policy: thresholds, quiet hours (and their time zone), sweep time.
        options: interval, readiness lead, language.
        now: UTC time (the lab's clock in tests); clock: monotonic seconds.
    """

    def __init__(
        self,
        *,
        reader: SnapshotReader,
        store: WatchStore,
        outbox: Outbox,
        proposals: ProposalSource | None,
        policy: Policy,
        options: WatchOptions,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reader = reader
        self.store = store
        self.outbox = outbox
        self.proposals = proposals
        self.policy = policy
        self.options = options
        self.now = now
        self._clock = clock
        self.limits: Thresholds = thresholds_from_policy(policy)
        self.rules = policy.watch
        self.where = policy.quiet_hours.zone(options.timezone)
        self.zone_name = zone_name_of(self.where)
        self.offline_beats: dict[str, int] = {}
        """Rooms read offline and not yet confirmed: beats in a row they read offline."""
        self.last: LastRead | None = None
        self.last_beat_at: datetime | None = None
        self.last_read_at: datetime | None = None
        self.started_at = now()
        """When this watch started (the watch's clock): before its first read the three
        intervals of `alive` count from here."""
        self.read_since_start = False
        self.failed_beats = 0
        self.last_code: Code | None = None
        self.unread_parts = ""
        """The parts the last read could not read, comma-separated ("" when it read them all)."""
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        """Take up the store's state (failed beats in a row, last read) after a restart."""
        kv = await self.store.kv()
        self.failed_beats = int(kv.get("failed_beats", "0"))
        self.last_code = _stored_code(kv.get("last_code"))
        self.unread_parts = kv.get("unread_parts", "")
        self.last_read_at = parse_utc(kv["last_read_at"]) if "last_read_at" in kv else None

    # --- the beat -----------------------------------------------------------------------------

    async def beat(self, *, post_digest: bool = True) -> BeatOutcome:
        """One beat (see the module docstring). Never raises for a failed read: that is
        recorded and reported.

        Raises:
            StoreError: the watch store could not record it (``store_busy``).
        """
        async with self._lock:
            return await self.beat_locked(post_digest=post_digest)

    async def beat_locked(self, *, post_digest: bool) -> BeatOutcome:
        """`beat`'s body; the caller holds `lock`."""
        now = self.now()
        started = self._clock()
        try:
            snapshot = await self.reader.snapshot()
        except FleetwatchError as exc:
            outcome = await self._failed(now, exc.code, post_digest=post_digest)
        else:
            outcome = await self._read(now, snapshot, post_digest=post_digest)
        elapsed_ms = int((self._clock() - started) * 1000)
        last = self.last
        await self.store.record_beat(
            utc_text(now),
            utc_text(self.now()),
            ok=outcome.read,
            code=None if outcome.code is None else str(outcome.code),
            elapsed_ms=elapsed_ms,
            devices=len(last.snapshot.devices) if last and outcome.read else 0,
            findings=len(last.findings) if last and outcome.read else 0,
            changes=outcome.changes,
        )
        self.last_beat_at = now
        return outcome

    @property
    def lock(self) -> asyncio.Lock:
        return self._lock

    def alive(self, now: datetime) -> bool:
        """Whether the watch is alive at `now`: fewer than `ALIVE_BEATS` beats failed in a row,
        and a beat read the fleet within `ALIVE_BEATS` intervals; before this watch's first
        read since it started, the intervals count from its start (a read left by an earlier
        run does not make a fresh start "not alive")."""
        if self.failed_beats >= ALIVE_BEATS:
            return False
        since = self.last_read_at if self.read_since_start else self.started_at
        assert since is not None  # read_since_start implies a read
        return now - since <= timedelta(seconds=ALIVE_BEATS * self.options.interval_seconds)

    def next_beat_in(self, outcome: BeatOutcome | None) -> float:
        """Seconds from the start of a beat that ended in `outcome` (None: it could not be
        recorded) to the next: the interval, but after a failed read `START_RETRY_SECONDS`,
        doubling with each failed beat in a row, while the watch has not read the fleet since it
        started."""
        interval = self.options.interval_seconds
        if self.read_since_start or outcome is None or outcome.read:
            return interval
        doublings = max(0, min(self.failed_beats, 16) - 1)
        return min(interval, START_RETRY_SECONDS * 2**doublings)

    async def _failed(self, now: datetime, code: Code, *, post_digest: bool) -> BeatOutcome:
        self.failed_beats += 1
        self.last_code = code
        at = utc_text(now)
        await self.store.set_kv(failed_beats=self.failed_beats, last_code=str(code))
        posted: list[str] = []
        if self.failed_beats == 1:
            log.warning("the heartbeat could not read the fleet (%s); reported once, not every beat", code)
            await self.store.add_history(at, "read_failed", facts={"code": str(code)})
            self.outbox.post(compose.read_failed_post(code, self.options.language))
            posted.append("read_failed")
        else:
            log.debug("heartbeat read failed again (%s), %d in a row", code, self.failed_beats)
        if self.failed_beats == FAILED_BEATS_FINDING:
            finding = compose.fleet_unreadable(str(code), self.failed_beats)
            await self.store.open_fleet_finding(at, _change("finding_opened", finding))
            if post_digest and not self.quiet(now) and await self.post_digest(now):
                posted.append("digest")
        return BeatOutcome(read=False, code=code, posted=tuple(posted))

    async def _read(self, now: datetime, snapshot: FleetSnapshot, *, post_digest: bool) -> BeatOutcome:
        at = utc_text(now)
        if self.failed_beats:
            await self._recovered(at)
        known = await self.store.known_devices()
        open_findings = await self.store.open_findings()
        found = held_over(findings(snapshot, now, self.limits), open_findings, snapshot)
        devices, found = self._confirm_offline(now, snapshot, known, open_findings, found)
        device_changes = diff_devices(known, devices)
        finding_diff = diff_findings(open_findings, found)
        extra = []
        if not known:
            online = sum(d.online for d in snapshot.devices)
            extra.append(("first_read", {"rooms": len(snapshot.devices), "online": online}))
        changes = [*device_changes, *finding_diff.changes]
        await self.store.record_read(at, devices, changes, dict(finding_diff.current), extra)
        previous_read = self.last_read_at
        kv: dict[str, str | int] = {"last_read_at": at, "failed_beats": 0}
        if not known:
            kv["first_read_at"] = at
        await self.store.set_kv(**kv)
        self.last = LastRead(snapshot, tuple(found), now)
        self.last_read_at = now
        self.read_since_start = True
        posted = await self._partial(at, snapshot)
        await self._captures(now, snapshot, previous_read)
        posted += await self._readiness(now, snapshot)
        posted += await self._sweep(now, snapshot)
        if post_digest and not self.quiet(now) and await self.post_digest(now):
            posted.append("digest")
        await self._prune(now)
        return BeatOutcome(read=True, changes=len(changes), posted=tuple(posted))

    async def _recovered(self, at: str) -> None:
        beats, code = self.failed_beats, self.last_code
        self.failed_beats, self.last_code = 0, None
        log.info("the heartbeat reads the fleet again, after %d failed beat(s)", beats)
        await self.store.add_history(at, "read_recovered", facts={"beats": str(beats)})
        finding = compose.fleet_unreadable(str(code or ""), beats)
        await self.store.resolve_fleet_finding(at, _change("finding_resolved", finding))
        await self.store.set_kv(failed_beats=0, last_code="")

    async def _partial(self, at: str, snapshot: FleetSnapshot) -> list[str]:
        """Report, once, that a read left parts out (or that it reads them all again)."""
        parts = ",".join(sorted({u.part for u in snapshot.unread}))
        if parts == self.unread_parts:
            return []
        self.unread_parts = parts
        await self.store.set_kv(unread_parts=parts)
        if not parts:
            log.info("the heartbeat reads the whole fleet again")
            await self.store.add_history(at, "read_complete")
            return []
        log.warning("the heartbeat could not read %s; reported once, what needs it is kept", parts)
        await self.store.add_history(at, "read_partial", facts={"parts": parts})
        self.outbox.post(compose.read_partial_post(snapshot, self.options.language))
        return ["read_partial"]

    def _confirm_offline(
        self,
        now: datetime,
        snapshot: FleetSnapshot,
        known: dict[str, KnownDevice],
        open_findings: dict[str, OpenFinding],
        found: list[Finding],
    ) -> tuple[list[Device], list[Finding]]:
        """The rooms and findings as the watch records them: a room the store knew online that
        reads offline is confirmed only after ``offline_after_beats`` reads in a row, or at
        once when its event is on or within the lead window; until then it is recorded as it
        was (online, its open findings kept), so a flap within one beat posts nothing. A room
        that is offline keeps its other open findings (firmware, disk...) as they were: an
        offline room reads nothing, so nothing of it is resolved but ``offline`` itself when
        it returns (the children of an outage fold under it)."""
        needed = self.rules.offline_after_beats
        lead = max(self.limits.attention_minutes, self.limits.lead_minutes)
        devices = list(snapshot.devices)
        held: set[str] = set()
        for i, device in enumerate(devices):
            before = known.get(device.id)
            if device.online or before is None or before.gone or not before.online:
                self.offline_beats.pop(device.id, None)
                continue
            beats = self.offline_beats.get(device.id, 0) + 1
            urgent = event_state(snapshot.events.get(device.id), now, lead) in ("on_now", "soon")
            if urgent or beats >= needed:
                self.offline_beats.pop(device.id, None)
                continue
            self.offline_beats[device.id] = beats
            held.add(device.id)
            devices[i] = msgspec.structs.replace(device, online=True)
        dark = {d.id for d in devices if not d.online}
        if not held and not dark:
            return devices, found
        kept = [f for f in found if f.device_id not in held]
        current = {key_of(f) for f in kept}
        kept += [
            Finding(o.priority, o.kind, o.device_id, o.room, o.facts)
            for key, o in open_findings.items()
            if o.device_id in held
            or (o.device_id in dark and o.kind not in OFFLINE_JUDGED and key not in current)
        ]
        return devices, kept

    async def _captures(self, now: datetime, snapshot: FleetSnapshot, previous_read: datetime | None) -> None:
        """Keep the events seen coming or on (and whether a recording was seen on their
        channels), and judge those that ended (`captures.judge`): a missed recording, or one
        that may have been missed while the watch was not reading."""
        at = utc_text(now)
        await self.store.see_events(at, captures.seen(snapshot, now, self.options.readiness_minutes))
        ended = await self.store.ended_events(at)
        if ended:
            gap = timedelta(seconds=3 * self.options.interval_seconds)
            await self.store.judge_events(
                at, captures.judge(ended, snapshot, previous_read=previous_read, gap=gap, where=self.where)
            )

    def quiet(self, now: datetime) -> bool:
        """True inside the policy's quiet hours (no digest, no sweep post; readiness posts),
        in the policy's zone or else the operator's."""
        return self.policy.quiet_hours.contains(now, self.where)

    def held_until(self, now: datetime) -> datetime | None:
        """When quiet hours end, if `now` is inside them (digests are held until then)."""
        return self.policy.quiet_hours.ends_after(now, self.where) if self.quiet(now) else None

    async def active_silences(self, now: datetime) -> list[Silence]:
        """The silences that hold at `now`."""
        at = utc_text(now)
        return [s for s in await self.store.silences(at) if holds_at(s, at)]

    def group_of(self, device: Device) -> str:
        """The group a room is counted in: its building (policy ``watch.buildings``), else
        its Epiphan group's name ("" when it has none)."""
        return self.rules.group_of(device.group_name) if device.group_name else ""

    async def notes_by_room(self) -> dict[str, str]:
        return {n.device_id: n.text for n in await self.store.notes()}

    # --- what a beat posts ----------------------------------------------------------------------

    async def _readiness(self, now: datetime, snapshot: FleetSnapshot) -> list[str]:
        minutes = self.options.readiness_minutes
        posted = await self.store.readiness_posted(utc_text(now - timedelta(days=1)))
        items = readiness.due(snapshot, now, minutes, posted, self.limits, self.options.language)
        if not items:
            return []
        notes = await self.notes_by_room()
        for item in items:
            self.outbox.post(
                compose.readiness_post(
                    item,
                    language=self.options.language,
                    where=self.where,
                    zone_name=self.zone_name,
                    now=now,
                    minutes=minutes,
                    notes=notes,
                )
            )
        await self.store.record_readiness(
            utc_text(now),
            [
                (i.device_id, i.event_id, utc_text(i.start), i.verdict, i.reasons, i.room, i.title)
                for i in items
            ],
        )
        return ["readiness"]

    async def _sweep(self, now: datetime, snapshot: FleetSnapshot) -> list[str]:
        kv = await self.store.kv()
        first = parse_utc(kv["first_read_at"]) if "first_read_at" in kv else None
        done = await self.store.sweep_dates()
        date = sweep.sweep_due(now, self.where, self.policy.sweep_at, done, first)
        if date is not None:
            last = await self.store.last_sweep()
            changes = None if last is None else await self.store.count_history(last[1])
            report = sweep.sweep_report(snapshot, now, self.where, self.zone_name, date, changes)
            await self.store.record_sweep(utc_text(now), date, report)
        if self.quiet(now):
            return []
        waiting = await self.store.unposted_sweeps()
        for stale, _ in waiting[:-1]:
            await self.store.mark_sweep_posted(stale, utc_text(now))
        if not waiting:
            return []
        date, report = waiting[-1]
        self.outbox.post(compose.sweep_post(report, language=self.options.language, now=now))
        await self.store.mark_sweep_posted(date, utc_text(now))
        return ["sweep"]

    async def pending_digest(self, now: datetime, language: str) -> tuple[compose.Post | None, int]:
        """The digest of what changed since the last posted one (None: nothing), and the
        history seq it covers up to."""
        kv = await self.store.kv()
        cursor = int(kv.get("digest_seq", "0"))
        rows = await self.store.history_after(cursor)
        since = parse_utc(kv["last_digest_at"]) if "last_digest_at" in kv else None
        last = self.last
        rooms = len(last.snapshot.devices) if last else 0
        online = sum(d.online for d in last.snapshot.devices) if last else 0
        groups = {d.id: self.group_of(d) for d in last.snapshot.devices} if last else {}
        silences = await self.store.silences(rows[0].at) if rows else []
        shown = compose.unsilenced(rows, silences, groups)
        holding = [s for s in silences if holds_at(s, utc_text(now))]
        post = compose.digest_post(
            compose.net_changes(shown),
            language=language,
            where=self.where,
            now=now,
            since=since,
            rooms=rooms,
            online=online,
            notes=await self.notes_by_room(),
            grouping=compose.Grouping(
                groups=groups,
                min_rooms=self.rules.group_min_rooms,
                min_percent=self.rules.group_min_percent,
            ),
            silences=holding,
        )
        return post, rows[-1].seq if rows else cursor

    async def post_digest(self, now: datetime) -> tuple[str, ...]:
        """Post the pending digest, if any, and move the cursor past what it covered (also
        when there was nothing to post); the destinations it was queued for. Nothing is
        retried: a failed post is only counted."""
        post, upto = await self.pending_digest(now, self.options.language)
        if post is None:
            await self.store.set_kv(digest_seq=upto)
            return ()
        post = await self._with_weekly_decisions(post, now)
        at = utc_text(now)
        sent_to = self.outbox.post(post)
        await self.store.add_history(at, "digest", facts={"title": post.title, "to": ",".join(sent_to)})
        await self.store.set_kv(digest_seq=await self.store.last_seq(), last_digest_at=at)
        return sent_to

    async def _with_weekly_decisions(self, post: compose.Post, now: datetime) -> compose.Post:
        """The digest with one line of the approvers' report (approval.sock's
        ``GetApproverReport``, the last `DECISIONS_DAYS` days) when none was posted in that
        time; as it is when approval.sock does not answer (tried again with the next digest)."""
        last = (await self.store.kv()).get("decisions_line_at")
        if self.proposals is None or (last and now - parse_utc(last) < timedelta(days=DECISIONS_DAYS)):
            return post
        try:
            report = await self.proposals.decisions(DECISIONS_DAYS)
        except FleetwatchError:
            return post
        await self.store.set_kv(decisions_line_at=utc_text(now))
        line = compose.decisions_line(report, self.options.language)
        return replace(post, sections=(*post.sections, compose.Section(None, (line,))))

    async def _prune(self, now: datetime) -> None:
        kv = await self.store.kv()
        today = now.date().isoformat()
        if kv.get("pruned_on") != today:
            await self.store.prune(utc_text(now - timedelta(days=MAX_HISTORY_DAYS)))
            await self.store.set_kv(pruned_on=today)

    # --- loops ------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Beat every ``interval_seconds`` (from the start of one beat to the next; sooner
        while nothing was read since the start: `next_beat_in`) until cancelled. A beat that
        fails unexpectedly is logged with its traceback; the next one still runs."""
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            outcome: BeatOutcome | None = None
            try:
                outcome = await self.beat()
            except FleetwatchError as exc:
                log.error("a heartbeat could not be recorded (%s)", exc.code)
            except Exception:  # the top-level handler of the heartbeat task
                log.exception("a heartbeat failed unexpectedly")
            await asyncio.sleep(max(0.0, self.next_beat_in(outcome) - (loop.time() - started)))


def _stored_code(text: str | None) -> Code | None:
    """The code the store kept as text, checked as decoding checks a code from the wire (None:
    none kept, or one this build does not declare)."""
    if not text:
        return None
    try:
        return msgspec.convert(text, Code)
    except msgspec.ValidationError:
        return None


def _change(kind: str, finding: Finding) -> Change:
    return Change(
        kind=kind,
        device_id=FLEET_ID,
        room="",
        key=key_of(Finding(finding.priority, finding.kind, FLEET_ID, "")),
        finding_kind=finding.kind,
        priority=finding.priority,
        facts=finding.facts,
    )
