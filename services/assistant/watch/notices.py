"""Notices of proposals that wait for a person.

Every ``notice_seconds`` (a few seconds: asking approval.sock is cheap and local) `Notices.run`
asks approval.sock for the proposals of the last hours (``ListProposalHistory``, read-only);
each one still pending that has had no notice gets one (`Notices.post_pending`): the change and
its room in words (the room names from the sandbox list, ``ListWritable``; a room whose name
cannot be read is named by its ID, said so), who proposed it and when, until when it waits, and
the approval page's address as text. A notice carries no approval power: no button, no token, no
link that acts on the proposal. Each proposal gets one notice (the watch store remembers it,
also across a restart). Quiet hours do not hold a notice back: a person asked for a change.

Follow-ups (`Notices.follow_up`), each once per proposal: a **reminder** when a noticed
proposal still waits ``reminder_minutes`` before it expires (the policy's
``watch.reminder_minutes``; 0: none), and, once it was approved, denied or expired, **one line
saying so** that follows its notice (Slack edits the notice with ``chat.update``; Teams and the
console get it as a post of its own). Neither carries approval power.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from typing import Final

from services.assistant.watch import compose
from services.assistant.watch.compose import RoomName
from services.assistant.watch.destinations import Outbox
from services.assistant.watch.proposals import ProposalSource
from services.assistant.watch.store import WatchStore
from services.assistant.watch.times import parse_utc, utc_text
from shared.errors import Code, FleetwatchError
from shared.wire.approval import ProposalEvent

log = logging.getLogger(__name__)

LOOKBACK: Final = timedelta(hours=2)
"""How far back a poll looks (a proposal waits an hour at most)."""
DOWN_AFTER: Final = timedelta(seconds=60)
"""How long approval.sock may not answer before the watch says so (``approval_down``): longer
than a restart of approval_web takes, so a restart says nothing."""


class Notices:
    """Posts one notice per pending proposal. Every collaborator comes through the constructor.

    Args:
        store: the watch store (which proposals had a notice).
        outbox: where notices go.
        proposals: approval.sock's proposals and the sandbox rooms' names.
        language: the notices' language; where: the team's time zone; now: UTC time.
        interval_seconds: how often `run` polls.
        reminder_minutes: a reminder this long before a waiting proposal expires (0: none).
    """

    def __init__(
        self,
        *,
        store: WatchStore,
        outbox: Outbox,
        proposals: ProposalSource,
        language: str,
        where: tzinfo,
        now: Callable[[], datetime],
        interval_seconds: float,
        reminder_minutes: int = 0,
    ) -> None:
        self.store = store
        self.outbox = outbox
        self.proposals = proposals
        self.language = language
        self.where = where
        self.now = now
        self.interval_seconds = interval_seconds
        self.reminder_minutes = reminder_minutes
        self._failing: Code | None = None
        self._failing_since: datetime | None = None
        self._said_down = False

    async def run(self) -> None:
        """`poll` every ``interval_seconds`` until cancelled."""
        while True:
            await self.poll()
            await asyncio.sleep(self.interval_seconds)

    async def poll(self) -> None:
        """One `post_pending`. approval.sock not answering is logged once until its code
        changes, and, once it has not answered for `DOWN_AFTER` (approval_web down, not
        restarting: nothing can be approved or run), posted once to every destination
        (``approval_down``), and its return likewise (``approval_back``). An unexpected failure
        is logged with its traceback; the next poll still runs."""
        try:
            await self.post_pending()
        except FleetwatchError as exc:
            now = self.now()
            if exc.code != self._failing:
                log.warning("pending proposals could not be read (%s); said once until it changes", exc.code)
            self._failing = exc.code
            self._failing_since = self._failing_since or now
            if not self._said_down and now - self._failing_since >= DOWN_AFTER:
                self._said_down = True
                self.outbox.post(
                    compose.approval_down_post(exc.code, now - self._failing_since, self.language)
                )
        except Exception:  # the top-level handler of the notice task
            log.exception("the notice poll failed unexpectedly")
        else:
            if self._said_down:
                self.outbox.post(compose.approval_back_post(self.language))
            self._failing, self._failing_since, self._said_down = None, None, False

    async def post_pending(self) -> int:
        """Post one notice per pending proposal that had none; how many were posted.

        Raises:
            FleetwatchError: approval.sock did not answer (the rooms' names not being readable
                does not raise: the notice names the room by its ID and says so).
        """
        now = self.now()
        history = await self.proposals.history(utc_text(now - LOOKBACK))
        pending = [p for p in history.items if p.status == "pending"]
        noticed = await self.store.noticed(p.proposal_id for p in pending)
        fresh = [p for p in pending if p.proposal_id not in noticed]
        follow = await self.store.followups(p.proposal_id for p in history.items)
        due = [
            p for p in history.items if p.proposal_id in follow and self._due(p, follow[p.proposal_id], now)
        ]
        if not fresh and not due:
            return 0
        rooms = await self._rooms()
        count = await self.follow_up(due, rooms, page_url=history.page_url, now=now)
        for event in sorted(fresh, key=lambda p: p.created_at):
            if not await self.store.record_notice(utc_text(now), event.proposal_id):
                continue
            self.outbox.post(
                compose.notice_post(
                    event,
                    rooms,
                    page_url=history.page_url,
                    expires_at=parse_utc(event.expires_at) if event.expires_at else None,
                    language=self.language,
                    where=self.where,
                    now=now,
                )
            )
            count += 1
        return count

    def _due(self, event: ProposalEvent, done: tuple[str | None, str | None], now: datetime) -> bool:
        """Whether a noticed proposal needs its reminder or its closing line now."""
        reminded, closed = done
        if event.status != "pending":
            return closed is None
        if reminded is not None or self.reminder_minutes <= 0 or not event.expires_at:
            return False
        return parse_utc(event.expires_at) - now <= timedelta(minutes=self.reminder_minutes)

    async def _rooms(self) -> dict[str, RoomName]:
        try:
            return await self.proposals.rooms()
        except FleetwatchError as exc:
            log.warning(
                "the names of the sandbox rooms could not be read (%s); the notice names IDs", exc.code
            )
            return {}

    async def follow_up(
        self, due: list[ProposalEvent], rooms: dict[str, RoomName], *, page_url: str | None, now: datetime
    ) -> int:
        """Post the reminders and closing lines `due` (see the module docstring); how many."""
        count = 0
        at = utc_text(now)
        for event in due:
            if event.status == "pending" and event.expires_at:
                if await self.store.record_followup(at, event.proposal_id):
                    self.outbox.post(
                        compose.reminder_post(
                            event,
                            rooms,
                            page_url=page_url,
                            expires_at=parse_utc(event.expires_at),
                            language=self.language,
                            where=self.where,
                            now=now,
                        )
                    )
                    count += 1
            elif await self.store.record_followup(at, event.proposal_id, closed_as=event.status):
                self.outbox.post(compose.closed_post(event, rooms, self.language))
                count += 1
        return count
