"""The watch's production wiring: `watch_side` runs it inside the assistant process.

From the settings: the watch store (``FLEETWATCH_WATCH_DB``, the assistant's own file), the
destinations (the console always; Slack when ``FLEETWATCH_SLACK_BOT_TOKEN`` and
``FLEETWATCH_SLACK_CHANNEL`` are set, at ``FLEETWATCH_SLACK_API_URL``; Teams when
``FLEETWATCH_TEAMS_WEBHOOK_URL`` is set), the interval (``FLEETWATCH_HEARTBEAT_SECONDS``), the
readiness lead (``FLEETWATCH_READINESS_MINUTES``), the language (``FLEETWATCH_WATCH_LANGUAGE``)
and approval.sock for proposals. The reader is the assistant's own read client (the read
slot): the watch never reads the sandbox slot and holds nothing that can write.

Two tasks run for the ``async with`` block: the heartbeat (`Watch.run`) and the notice poll
(`services.assistant.watch.notices.Notices.run`). At the end both stop, queued posts get a short, bounded chance to
go out, and the store is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

from services.assistant.watch.destinations import (
    ConsoleDestination,
    Destination,
    Outbox,
    SlackDestination,
    TeamsDestination,
)
from services.assistant.watch.heartbeat import SnapshotReader, Watch, WatchOptions
from services.assistant.watch.notices import Notices
from services.assistant.watch.proposals import ApprovalSocketProposals
from services.assistant.watch.store import WatchStore
from services.assistant.watch.wall import WallView, wall_view
from shared.config import ConfigError, Settings
from shared.errors import FleetwatchError
from shared.policy.loader import Policy
from shared.wire.executor import WritableDevices

log = logging.getLogger(__name__)

POST_TIMEOUT_SECONDS: Final = 10.0
DRAIN_SECONDS: Final = 3.0
"""How long a stopping assistant lets queued posts go out."""


def destinations(settings: Settings) -> list[Destination]:
    """Where the watch posts, from the settings (see the module docstring).

    Raises:
        ConfigError: a Slack token without a channel, or a channel without a token.
    """
    out: list[Destination] = [ConsoleDestination()]
    token, channel = settings.slack_bot_token, settings.slack_channel
    if (token is None) != (channel is None):
        missing = "FLEETWATCH_SLACK_CHANNEL" if channel is None else "FLEETWATCH_SLACK_BOT_TOKEN"
        raise ConfigError(missing, "Slack needs both a bot token and a channel (or neither)")
    if token is not None and channel is not None:
        out.append(
            SlackDestination(token, channel, settings.slack_api_url, timeout_seconds=POST_TIMEOUT_SECONDS)
        )
    if settings.teams_webhook_url is not None:
        out.append(TeamsDestination(settings.teams_webhook_url, timeout_seconds=POST_TIMEOUT_SECONDS))
    return out


def options(settings: Settings) -> WatchOptions:
    """The watch's options from the settings."""
    return WatchOptions(
        interval_seconds=settings.heartbeat_seconds,
        readiness_minutes=settings.readiness_minutes,
        language=settings.watch_language,
        timezone=settings.timezone,
    )


@contextlib.asynccontextmanager
async def watch_side(settings: Settings, policy: Policy, reader: SnapshotReader) -> AsyncIterator[Watch]:
    """Run the watch for the ``async with`` block (see the module docstring); yields it.

    Raises:
        ConfigError: the destinations' settings do not fit together.
        StoreError: the watch store could not be opened (e.g. the approval store's file).
    """
    targets = destinations(settings)
    store = await WatchStore.connect(settings.watch_db)
    try:
        async with Outbox(targets, timeout_seconds=POST_TIMEOUT_SECONDS) as outbox:
            proposals = ApprovalSocketProposals(settings.approval_socket)
            watch = Watch(
                reader=reader,
                store=store,
                outbox=outbox,
                proposals=proposals,
                policy=policy,
                options=options(settings),
            )
            await watch.load()
            notices = Notices(
                store=store,
                outbox=outbox,
                proposals=proposals,
                language=watch.options.language,
                where=watch.where,
                now=watch.now,
                interval_seconds=watch.options.notice_seconds,
                reminder_minutes=watch.rules.reminder_minutes,
            )
            tasks = [
                asyncio.create_task(watch.run(), name="heartbeat"),
                asyncio.create_task(notices.run(), name="notices"),
            ]
            log.info(
                "watch: a heartbeat every %g s, readiness %d min ahead, posting to %s",
                settings.heartbeat_seconds,
                settings.readiness_minutes,
                ", ".join(outbox.names),
            )
            try:
                yield watch
            finally:
                for task in tasks:
                    task.cancel()
                for task in tasks:
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(DRAIN_SECONDS):
                        await outbox.drain()
    finally:
        await store.close()


async def wall_for(
    watch: Watch, language: str | None, sandbox: Callable[[], Awaitable[WritableDevices]] | None = None
) -> WallView:
    """The wall screen's view now, in `language` (None: the watch's); with the rooms a change
    may target as `sandbox` reads them now (`ApprovalSocketProposals.writable`: approval.sock,
    the executor behind it), or why it could not (None: not shown)."""
    notes = await watch.notes_by_room()
    now = watch.now()
    silences = await watch.active_silences(now)
    rooms: WritableDevices | FleetwatchError | None = None
    if sandbox is not None:
        try:
            rooms = await sandbox()
        except FleetwatchError as exc:
            rooms = exc
    return wall_view(watch, notes, language or watch.options.language, now, silences, rooms)
