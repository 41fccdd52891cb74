"""Where the watch posts: the console (the log), Slack, Microsoft Teams; and the outbox.

- `ConsoleDestination`: each line of the post as one log line (INFO), logger
  ``services.assistant.watch.posts``.
- `SlackDestination`: ``chat.postMessage`` through the Slack SDK's Web API client
  (``slack_sdk.web.async_client.AsyncWebClient``) with the bot token
  (``FLEETWATCH_SLACK_BOT_TOKEN``) to ``FLEETWATCH_SLACK_CHANNEL``, built by
  `services.assistant.watch.post.slack_message`. The SDK's own retries are off
  (``retry_handlers=[]``). A post that ``follows`` an earlier one (a notice's "approved" line)
  edits that message with ``chat.update`` (its text, then the line) when this process sent it;
  otherwise it is a message of its own.
- `TeamsDestination`: one POST of an Adaptive Card message to the Workflows webhook
  (``FLEETWATCH_TEAMS_WEBHOOK_URL``, a secret: never logged), through aiohttp.

`Outbox` decouples posting from the heartbeat: `Outbox.post` only queues (it never waits on a
network), one worker per destination sends, each send bounded by ``timeout_seconds``. A failed
send (refused, an error status, a timeout, no connection) is logged once with its code
(``post_failed``, ``post_timeout``) and counted, **never retried**; a queue that is full drops
the post (``post_dropped``, logged and counted). Nothing it logs holds a token or the webhook's
address.

The Slack SDK and aiohttp load with the first post that goes to Slack or Teams, not while the
assistant waits (issue 14: idle memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol

import msgspec

from services.assistant import AssistantError
from services.assistant.watch.post import Post, plain_text, slack_message, teams_message
from shared.config import Secret
from shared.errors import Code
from shared.text.display import visible
from shared.wire.assistant import PostCounts

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)
posts_log = logging.getLogger("services.assistant.watch.posts")

QUEUE_SIZE: Final = 100
"""Posts waiting per destination before new ones are dropped."""
DEFAULT_TIMEOUT_SECONDS: Final = 10.0


class PostError(AssistantError):
    """A post did not go out: ``post_failed`` or ``post_timeout``. The message never holds a
    token or an address."""


class Destination(Protocol):
    """One place posts go."""

    name: str
    to: str
    """Where in it, said to an operator (`PostCounts.to`): the Slack channel; "" for the others
    (the Teams webhook is a secret)."""

    async def send(self, post: Post) -> None:
        """Send one post.

        Raises:
            PostError: it did not go out.
        """
        ...


class ConsoleDestination:
    """The log: one INFO line per line of the post (names already made visible)."""

    name = "console"
    to = ""

    async def send(self, post: Post) -> None:
        for line in plain_text(post).splitlines():
            posts_log.info("%s", visible(line, 2000))


class SlackDestination:
    """Slack's ``chat.postMessage`` (see the module docstring). `base_url` is the Web API's
    (``https://slack.com/api/``, or the lab's stand-in)."""

    name = "slack"

    def __init__(self, token: Secret, channel: str, base_url: str, *, timeout_seconds: float) -> None:
        self._token = token
        self._channel = channel
        self.to = visible(channel, 80)
        self._base_url = base_url
        self._timeout = max(1, int(timeout_seconds))
        self._client: AsyncWebClient | None = None
        self._sent: dict[str, tuple[str, str, str]] = {}
        """``{ref: (channel, ts, text)}`` of the posts with a ``ref`` sent (the newest `QUEUE_SIZE`)."""

    async def send(self, post: Post) -> None:
        import aiohttp
        from slack_sdk.errors import SlackApiError, SlackClientError
        from slack_sdk.web.async_client import AsyncWebClient

        if self._client is None:
            self._client = AsyncWebClient(
                token=self._token.reveal(), base_url=self._base_url, timeout=self._timeout, retry_handlers=[]
            )
        message = slack_message(post, self._channel)
        try:
            earlier = self._sent.get(post.ref) if post.follows and post.ref else None
            if earlier is not None:
                channel, ts, text = earlier
                message |= {"channel": channel, "ts": ts, "text": f"{text}\n{message['text']}"}
                del message["unfurl_links"], message["unfurl_media"]
                await self._client.chat_update(**message)
                self._sent[post.ref or ""] = (channel, ts, message["text"])
            else:
                reply = await self._client.chat_postMessage(**message)
                if post.ref:
                    self._remember(post.ref, str(reply.get("channel")), str(reply.get("ts")), message["text"])
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            raise PostError(Code.POST_FAILED, f"Slack answered {visible(str(error), 60)}") from exc
        except (SlackClientError, aiohttp.ClientError, OSError) as exc:
            raise PostError(Code.POST_FAILED, f"Slack could not be reached ({type(exc).__name__})") from exc

    def _remember(self, ref: str, channel: str, ts: str, text: str) -> None:
        self._sent[ref] = (channel, ts, text)
        while len(self._sent) > QUEUE_SIZE:
            del self._sent[next(iter(self._sent))]


class TeamsDestination:
    """A Teams Workflows webhook (see the module docstring)."""

    name = "teams"
    to = ""

    def __init__(self, webhook_url: Secret, *, timeout_seconds: float) -> None:
        self._url = webhook_url
        self._timeout_seconds = timeout_seconds

    async def send(self, post: Post) -> None:
        import aiohttp

        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self._timeout_seconds)) as session,
                session.post(self._url.reveal(), json=teams_message(post), allow_redirects=False) as response,
            ):
                status = response.status
        except TimeoutError as exc:
            raise PostError(Code.POST_TIMEOUT, "Teams did not answer in time") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise PostError(Code.POST_FAILED, f"Teams could not be reached ({type(exc).__name__})") from exc
        if not 200 <= status < 300:
            raise PostError(Code.POST_FAILED, f"Teams answered HTTP {status}")


class Outbox:
    """Queues posts for each destination and sends them in the background (see the module
    docstring). Use as ``async with Outbox(...) as outbox``; the workers stop at its end.

    Args:
        destinations: where posts go (the console is always one of them in production).
        timeout_seconds: bound on one send.
    """

    def __init__(
        self,
        destinations: Sequence[Destination],
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        self._destinations = tuple(destinations)
        self._timeout = timeout_seconds
        self._queues: dict[str, asyncio.Queue[Post]] = {
            d.name: asyncio.Queue(maxsize=queue_size) for d in self._destinations
        }
        self._counts: dict[str, PostCounts] = {
            d.name: PostCounts(destination=d.name, to=d.to) for d in self._destinations
        }
        self._workers: list[asyncio.Task[None]] = []

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self._destinations)

    async def __aenter__(self) -> Outbox:
        self._workers = [
            asyncio.create_task(self._work(d), name=f"post-{d.name}") for d in self._destinations
        ]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for task in self._workers:
            task.cancel()
        for task in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def post(self, post: Post) -> tuple[str, ...]:
        """Queue `post` for every destination (only the console for a console-only post);
        the destinations it was queued for. Never waits."""
        queued = []
        for destination in self._destinations:
            if post.console_only and destination.name != "console":
                continue
            try:
                self._queues[destination.name].put_nowait(post)
            except asyncio.QueueFull:
                self._count(destination.name, Code.POST_DROPPED)
                log.warning(
                    "%s post dropped: %s posts already waiting (%s)", post.kind, QUEUE_SIZE, Code.POST_DROPPED
                )
                continue
            queued.append(destination.name)
        return tuple(queued)

    async def drain(self) -> None:
        """Wait until every queued post was sent or failed (tests, and a clean stop)."""
        for queue in self._queues.values():
            await queue.join()

    def counts(self) -> tuple[PostCounts, ...]:
        """Sent and failed posts per destination since start."""
        return tuple(self._counts[d.name] for d in self._destinations)

    def _count(self, name: str, code: Code | None) -> None:
        old = self._counts[name]
        if code is None:
            self._counts[name] = msgspec.structs.replace(old, sent=old.sent + 1)
        else:
            self._counts[name] = msgspec.structs.replace(old, failed=old.failed + 1, last_code=code)

    async def _work(self, destination: Destination) -> None:
        queue = self._queues[destination.name]
        while True:
            post = await queue.get()
            try:
                async with asyncio.timeout(self._timeout):
                    await destination.send(post)
            except TimeoutError:
                self._count(destination.name, Code.POST_TIMEOUT)
                log.warning(
                    "%s post to %s timed out (%s); not retried",
                    post.kind,
                    destination.name,
                    Code.POST_TIMEOUT,
                )
            except PostError as exc:
                self._count(destination.name, exc.code)
                log.warning(
                    "%s post to %s failed (%s: %s); not retried",
                    post.kind,
                    destination.name,
                    exc.code,
                    exc.message,
                )
            except Exception:  # a top-level handler: one destination's bug must not stop the others
                self._count(destination.name, Code.INTERNAL_ERROR)
                log.exception("%s post to %s failed unexpectedly; not retried", post.kind, destination.name)
            else:
                self._count(destination.name, None)
            finally:
                queue.task_done()
