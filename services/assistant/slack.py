"""Asks from Slack over Socket Mode: ``/fleetwatch``, an app mention in an ask channel, or a
direct message, answered read-only with the same answer as ``fleetwatch ask``.

The assistant is the only process holding the Slack tokens: the bot token
(``FLEETWATCH_SLACK_BOT_TOKEN``, for the Web API) and the app-level token
(``FLEETWATCH_SLACK_APP_TOKEN``, for ``apps.connections.open``). `SocketModeListener` holds one
outbound websocket through the Slack SDK (``slack_sdk.socket_mode.aiohttp``): every envelope is
acked at once (Slack wants it within 3 s), then `SlackAsks.answer` runs as its own task:

1. the envelope is read (`slack_rules.read_envelope`); anything but an ask is ignored;
2. its key (``event_id``, or a slash command's ``envelope_id``) is claimed in the watch store: a
   redelivered ask is answered once;
3. the gate (`slack_rules.refusal`, the per-member `slack_rules.RateLimit`): another workspace
   gets no reply; anyone else refused gets one polite line (over the rate limit: once, then
   nothing); each refusal is one ``refusal`` audit row (surface ``slack``, the member ID, the
   channel kind, the code), never the text;
4. "Looking…", then the answer of the **read-only** `Assistant` the caller gives (built without
   ``propose_change``: nothing is ever proposed from Slack; a change request is told where to
   ask), in the asker's language (Slack's locale from ``users.info``, else the question's); its
   ``ask`` audit row names the member ID and the channel kind; the model's words quoted by the
   one rule of every surface (`shared.text.model_text.model_lines`: each line starts ``│ ``, a
   line imitating the product marked), the code-built lines apart under Fleetwatch's heading;
5. the reply goes in the thread (a slash command's ephemerally, to its ``response_url`` when
   that is Slack's, else ``chat.postEphemeral``), escaped and with markup parsing off
   (`slack_rules.reply`, `services.assistant.watch.post.SLACK_PLAIN`); a channel the app is not
   in gets the answer as a direct message instead, which says so.

Robustness: the SDK reconnects on a ``disconnect`` envelope and on a closed socket; a watchdog
opens a new connection when no frame (an envelope, a pong) came for ``FLEETWATCH_SLACK_WATCHDOG_
SECONDS``. The user group's members are looked up with ``usergroups.users.list`` and kept
`GROUP_CACHE_SECONDS`; a failed lookup admits nobody through the group. No interactive
component exists: there is nothing to approve in Slack.

Errors: `slack_side` raises `shared.config.ConfigError` when the Slack settings do not fit
together; nothing else leaves: a failed answer or post is logged (and the asker told, when
possible).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from services.assistant.language import choose
from services.assistant.proposals import ProposalSink, write_record
from services.assistant.service import AskedBy
from services.assistant.slack_rules import (
    RateLimit,
    SlackAsk,
    asks_for_change,
    language_of,
    read_envelope,
    refusal,
    reply,
    say,
)
from services.assistant.watch.post import SLACK_PLAIN
from services.assistant.watch.times import utc_text
from shared.config import ConfigError, Secret, Settings
from shared.errors import Code, FleetwatchError
from shared.text.catalogue import translate
from shared.text.languages import language_of as shared_language_of
from shared.text.model_text import MODEL_HEADING, NOTES_HEADING, RECORDED_HEADING, model_lines
from shared.wire.approval import RecordRefusal
from shared.wire.assistant import Answer

if TYPE_CHECKING:
    from slack_sdk.socket_mode.aiohttp import SocketModeClient
    from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

GROUP_CACHE_SECONDS: Final = 300.0
"""How long the user group's members (and a member's locale) are kept."""
SLACK_HOOKS_HOST: Final = "hooks.slack.com"
"""The only host (over https) a slash command's ``response_url`` is followed to, besides the
Web API's own (the lab's stand-in)."""
CALL_TIMEOUT_SECONDS: Final = 10
UNDELIVERABLE: Final = frozenset({"not_in_channel", "channel_not_found", "is_archived"})
"""Slack's errors for a channel the answer cannot go to: it goes to a direct message instead."""
TOKEN_REFUSED: Final = frozenset(
    {
        "not_allowed_token_type",
        "missing_scope",
        "invalid_auth",
        "not_authed",
        "token_revoked",
        "account_inactive",
    }
)
"""Slack's answers to ``apps.connections.open`` that retrying cannot mend."""


class Asker(Protocol):
    """`services.assistant.service.Assistant.ask` (the read-only one)."""

    async def ask(
        self, question: str, language: str | None = None, *, asked_by: AskedBy | None = None
    ) -> Answer: ...


class SeenAsks(Protocol):
    """`services.assistant.watch.store.WatchStore.claim_slack_ask`."""

    async def claim_slack_ask(self, key: str, at: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class SlackOptions:
    """Who may ask and where (the settings of the same names); `api_url` is the Web API's base
    (a ``response_url`` on its host is followed too)."""

    team_id: str | None
    allowed_users: tuple[str, ...] = ()
    usergroup: str | None = None
    ask_channels: tuple[str, ...] = ()
    api_url: str = "https://slack.com/api/"


class SlackCallFailed(Exception):
    """A Web API call answered ``ok: false`` or did not answer; ``error`` is Slack's word."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


class SlackApi:
    """The Web API calls an ask needs, through the Slack SDK's `AsyncWebClient` (bot token).

    Each call raises `SlackCallFailed` (Slack's error word, or the exception's type name)."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def _call(self, method: str, **arguments: Any) -> Mapping[str, Any]:
        import aiohttp
        from slack_sdk.errors import SlackApiError, SlackClientError

        try:
            response = await getattr(self.client, method)(**arguments)
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            raise SlackCallFailed(str(error or "error")) from exc
        except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise SlackCallFailed(type(exc).__name__) from exc
        return response.data if isinstance(response.data, Mapping) else {}

    async def locale(self, user: str) -> str | None:
        data = await self._call("users_info", user=user, include_locale=True)
        found = data.get("user", {}).get("locale")
        return found if isinstance(found, str) else None

    async def group_members(self, usergroup: str) -> frozenset[str]:
        data = await self._call("usergroups_users_list", usergroup=usergroup)
        users = data.get("users")
        if not isinstance(users, list):
            raise SlackCallFailed("invalid_response")
        return frozenset(u for u in users if isinstance(u, str))

    async def post(self, channel: str, text: str, thread: str | None) -> None:
        extra = {"thread_ts": thread} if thread else {}
        await self._call("chat_postMessage", channel=channel, text=text, **SLACK_PLAIN, **extra)

    async def ephemeral(self, channel: str, user: str, text: str) -> None:
        await self._call("chat_postEphemeral", channel=channel, user=user, text=text, **SLACK_PLAIN)

    async def open_dm(self, user: str) -> str:
        data = await self._call("conversations_open", users=user)
        channel = data.get("channel", {}).get("id")
        if not isinstance(channel, str):
            raise SlackCallFailed("invalid_response")
        return channel

    async def respond(self, response_url: str, text: str) -> None:
        import aiohttp

        body = {"response_type": "ephemeral", "text": text, "replace_original": False, **SLACK_PLAIN}
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=CALL_TIMEOUT_SECONDS)) as session,
                session.post(response_url, json=body, allow_redirects=False) as answered,
            ):
                status = answered.status
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise SlackCallFailed(type(exc).__name__) from exc
        if not 200 <= status < 300:
            raise SlackCallFailed(f"http_{status}")


class SlackAsks:
    """Answers the ask in one envelope (see the module docstring). Every collaborator comes
    through the constructor; `clock` is monotonic seconds (the rate limit and the caches)."""

    def __init__(
        self,
        *,
        assistant: Asker,
        api: SlackApi,
        seen: SeenAsks,
        sink: ProposalSink,
        options: SlackOptions,
        rate: RateLimit | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._assistant = assistant
        self._api = api
        self._seen = seen
        self._sink = sink
        self._options = options
        self._rate = rate or RateLimit()
        self._clock = clock
        self._group: tuple[float, frozenset[str]] | None = None
        self._locales: dict[str, tuple[float, str | None]] = {}

    async def answer(self, envelope: Mapping[str, Any]) -> str:
        """Answer the envelope's ask; what became of it: ``ignored`` (not an ask),
        ``duplicate`` (answered before), ``refused:<code>``, ``answered`` or ``failed`` (the
        assistant raised: the asker was told to try again)."""
        ask = read_envelope(envelope)
        if ask is None:
            return "ignored"
        if not await self._seen.claim_slack_ask(ask.key, utc_text(datetime.now(UTC))):
            log.info("a Slack ask delivered again (%s) was answered before; not answered twice", ask.via)
            return "duplicate"
        if self._options.team_id is None or ask.team != self._options.team_id:
            await self._refused(ask, Code.SLACK_WRONG_TEAM)  # another workspace: the app cannot speak there
            return f"refused:{Code.SLACK_WRONG_TEAM}"
        pace = self._rate.pace(ask.user, self._clock())  # before any lookup: strangers count too
        group = await self._group_members() if self._options.usergroup and pace != "over" else None
        code = refusal(
            ask,
            team_id=self._options.team_id,
            allowed_users=self._options.allowed_users,
            group_members=group,
            ask_channels=self._options.ask_channels,
        )
        if code is None and pace != "ok":
            code = Code.SLACK_RATE_LIMITED
        if code is None and not ask.text:
            code = Code.INVALID_MESSAGE
        if pace == "over" or (pace == "first_over" and code is not Code.SLACK_RATE_LIMITED):
            await self._refused(ask, code or Code.SLACK_RATE_LIMITED)  # over the limit: said once
            return f"refused:{code}"
        slack_language = await self._language(ask)
        lang = choose(ask.text, slack_language)
        if code is not None:
            await self._refused(ask, code)
            await self._deliver(ask, reply([say("blank" if code is Code.INVALID_MESSAGE else code, lang)]))
            return f"refused:{code}"
        await self._deliver(ask, reply([say("looking", lang)]))
        asked_by = AskedBy(slack_user=ask.member, slack_channel=ask.channel_kind)
        try:
            answer = await self._assistant.ask(ask.text, slack_language, asked_by=asked_by)
        except FleetwatchError as exc:
            log.warning("a Slack ask could not be answered (%s)", exc.code)
            await self._deliver(ask, reply([say("failed", lang)]))
            return "failed"
        said = shared_language_of(answer.language)
        lines = [translate(said, MODEL_HEADING), *model_lines(answer.text, said)]
        code_built = [*(line.text for line in answer.refusals), *(line.text for line in answer.proposals)]
        if code_built:
            lines += ["", translate(said, RECORDED_HEADING), *(f"- {line}" for line in code_built)]
        if answer.notes:
            lines += ["", translate(said, NOTES_HEADING), *(f"- {line.text}" for line in answer.notes)]
        if answer.proposals or answer.refusals or asks_for_change(ask.text):
            lines += ["", say("no_change", answer.language)]
        await self._deliver(ask, reply(lines))
        return "answered"

    async def _group_members(self) -> frozenset[str] | None:
        """The user group's members (kept `GROUP_CACHE_SECONDS`), or None when the lookup
        failed: a failed lookup admits nobody, and is tried again at the next ask."""
        now = self._clock()
        if self._group is not None and now - self._group[0] < GROUP_CACHE_SECONDS:
            return self._group[1]
        assert self._options.usergroup is not None
        try:
            members = await self._api.group_members(self._options.usergroup)
        except SlackCallFailed as exc:
            log.warning("the Slack user group could not be read (%s): it admits nobody now", exc.error)
            return None
        self._group = (now, members)
        return members

    async def _language(self, ask: SlackAsk) -> str | None:
        """The asker's language from Slack's locale (kept `GROUP_CACHE_SECONDS`), or None."""
        now = self._clock()
        kept = self._locales.get(ask.user)
        if kept is not None and now - kept[0] < GROUP_CACHE_SECONDS:
            return kept[1]
        try:
            found = language_of(await self._api.locale(ask.user))
        except SlackCallFailed as exc:
            log.info(
                "the asker's Slack locale could not be read (%s); the question's language is used", exc.error
            )
            found = None
        self._locales[ask.user] = (now, found)
        return found

    async def _refused(self, ask: SlackAsk, code: Code) -> None:
        log.warning("refused a Slack ask (%s, %s)", ask.channel_kind, code)
        record = RecordRefusal(
            operation="ask",
            code=code,
            uid=-1,
            gid=-1,
            pid=-1,
            surface="slack",
            slack_user=ask.member,
            slack_channel=ask.channel_kind,
        )
        await write_record(self._sink, record)

    async def _deliver(self, ask: SlackAsk, text: str) -> None:
        """`text` (already escaped) to the asker: see the module docstring, step 5."""
        try:
            if ask.via == "slash":
                await self._ephemeral(ask, text)
                return
            try:
                await self._api.post(ask.channel, text, ask.thread)
            except SlackCallFailed as exc:
                if exc.error not in UNDELIVERABLE:
                    raise
                log.warning(
                    "a Slack answer could not go to its channel (%s); sent as a direct message", exc.error
                )
                dm = await self._api.open_dm(ask.user)
                await self._api.post(
                    dm, f"{reply([say('dm_fallback', choose(ask.text, None))])}\n\n{text}", None
                )
        except SlackCallFailed as exc:
            log.warning("a Slack answer was not delivered (%s: %s)", Code.POST_FAILED, exc.error)

    async def _ephemeral(self, ask: SlackAsk, text: str) -> None:
        if ask.response_url and self._followable(ask.response_url):
            try:
                await self._api.respond(ask.response_url, text)
                return
            except SlackCallFailed as exc:
                log.info("a slash command's response_url failed (%s); using chat.postEphemeral", exc.error)
        await self._api.ephemeral(ask.channel, ask.user, text)

    def _followable(self, url: str) -> bool:
        parts, api = urlsplit(url), urlsplit(self._options.api_url)
        if parts.scheme == "https" and parts.hostname == SLACK_HOOKS_HOST:
            return True
        return (parts.scheme, parts.hostname, parts.port) == (api.scheme, api.hostname, api.port)


class SocketModeListener:
    """One Socket Mode connection kept open for `asks` (see the module docstring). `run` until
    cancelled; `reconnects` counts the watchdog's new connections, `hellos` the connections
    Slack greeted. The SDK pings every `ping_seconds` (default a quarter of the watchdog's
    interval, so a live connection always has a fresh pong)."""

    def __init__(
        self,
        *,
        app_token: Secret,
        web_client: AsyncWebClient,
        asks: SlackAsks,
        watchdog_seconds: float,
        ping_seconds: float | None = None,
    ) -> None:
        self._app_token = app_token
        self._web_client = web_client
        self._asks = asks
        self._watchdog = watchdog_seconds
        self._ping = ping_seconds if ping_seconds is not None else max(watchdog_seconds / 4, 0.05)
        self._last_frame = time.time()
        self._tasks: set[asyncio.Task[str]] = set()
        self.reconnects = 0
        self.hellos = 0

    async def run(self) -> None:
        """Connect, and keep connected until cancelled (the tasks answering are cancelled too).
        Returns at once, logging why, when Slack refuses the app-level token (a wrong token
        type, a missing scope, a revoked token): no amount of retrying mends that."""
        from slack_sdk.socket_mode.aiohttp import SocketModeClient

        refused = await self._refused_token()
        if refused is not None:
            log.error(
                "asks from Slack are off: Slack refused the app-level token (%s); fleetwatch doctor says more",
                refused,
            )
            return
        client = SocketModeClient(
            self._app_token.reveal(),
            web_client=self._web_client,
            ping_interval=self._ping,
            logger=logging.getLogger("services.assistant.slack.sdk"),
        )
        client.message_listeners.append(self._on_message)
        try:
            await client.connect()
            await self._watch(client)
        finally:
            for task in self._tasks:
                task.cancel()
            await client.close()

    async def _refused_token(self) -> str | None:
        """Slack's word when it refuses the app-level token for good, else None (it took it, or
        could not be reached: then the SDK keeps trying)."""
        import aiohttp
        from slack_sdk.errors import SlackApiError, SlackClientError

        try:
            await self._web_client.apps_connections_open(app_token=self._app_token.reveal())
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            return str(error) if error in TOKEN_REFUSED else None
        except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError):
            return None
        return None

    async def _on_message(self, client: SocketModeClient, message: dict[str, Any], raw: str | None) -> None:
        self._last_frame = time.time()
        if message.get("type") == "hello":
            self.hellos += 1
        envelope_id = message.get("envelope_id")
        if not isinstance(envelope_id, str):
            return
        await client.send_socket_mode_response({"envelope_id": envelope_id})
        task = asyncio.create_task(self._answer(message), name="slack-ask")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, envelope: dict[str, Any]) -> str:
        try:
            outcome = await self._asks.answer(envelope)
        except Exception:  # the top of one ask's task: logged with its traceback, the listener goes on
            log.exception("a Slack ask failed")
            return "failed"
        log.info("Slack ask: %s", outcome)
        return outcome

    async def _watch(self, client: SocketModeClient) -> None:
        """Open a new connection when no frame came for the watchdog's interval."""
        while True:
            await asyncio.sleep(self._watchdog / 4)
            last = max(self._last_frame, client.last_ping_pong_time or 0.0)
            if time.time() - last > self._watchdog:
                log.warning(
                    "no frame from Slack for %g s: opening a new Socket Mode connection", self._watchdog
                )
                self.reconnects += 1
                self._last_frame = time.time()
                await client.connect_to_new_endpoint(force=True)


def web_client(settings: Settings) -> AsyncWebClient:
    """The Slack SDK's Web API client with the bot token, at ``FLEETWATCH_SLACK_API_URL``."""
    from slack_sdk.web.async_client import AsyncWebClient

    assert settings.slack_bot_token is not None
    return AsyncWebClient(
        token=settings.slack_bot_token.reveal(),
        base_url=settings.slack_api_url,
        timeout=CALL_TIMEOUT_SECONDS,
        retry_handlers=[],
    )


@contextlib.asynccontextmanager
async def slack_side(
    settings: Settings, assistant: Asker, seen: SeenAsks, sink: ProposalSink
) -> AsyncIterator[SocketModeListener]:
    """Listen for asks from Slack for the ``async with`` block (when ``FLEETWATCH_SLACK_APP_TOKEN``
    is set); yields the listener.

    Raises:
        ConfigError: the app token without the bot token or the team ID.
    """
    if settings.slack_app_token is None:
        raise ConfigError("FLEETWATCH_SLACK_APP_TOKEN", "not set: nobody can ask from Slack")
    for name, value in (
        ("FLEETWATCH_SLACK_BOT_TOKEN", settings.slack_bot_token),
        ("FLEETWATCH_SLACK_TEAM_ID", settings.slack_team_id),
    ):
        if value is None:
            raise ConfigError(name, "asks from Slack need it beside FLEETWATCH_SLACK_APP_TOKEN")
    client = web_client(settings)
    options = SlackOptions(
        team_id=settings.slack_team_id,
        allowed_users=settings.slack_allowed_users,
        usergroup=settings.slack_allowed_usergroup,
        ask_channels=settings.slack_ask_channels,
        api_url=settings.slack_api_url,
    )
    if not options.allowed_users and options.usergroup is None:
        log.warning("asks from Slack: no member and no user group is allowed, so nobody is answered")
    asks = SlackAsks(assistant=assistant, api=SlackApi(client), seen=seen, sink=sink, options=options)
    listener = SocketModeListener(
        app_token=settings.slack_app_token,
        web_client=client,
        asks=asks,
        watchdog_seconds=settings.slack_watchdog_seconds,
    )
    task = asyncio.create_task(listener.run(), name="slack-socket-mode")
    try:
        yield listener
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
