"""Asks from Slack against the lab's Socket Mode stand-in: the real Slack SDK (Socket Mode over
aiohttp, the Web API client) to the lab, the read-only `Assistant` on the lab's fleet, a real
watch store for the dedupe, a fake sink for the audit rows and proposals."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from services.assistant.slack import SlackApi, SlackAsks, SlackOptions, SocketModeListener
from services.assistant.slack_rules import RateLimit
from services.assistant.watch.store import WatchStore
from services.lab.model_standin import Reply, ToolUse, say
from services.lab.notices import LAB_SLACK_BOT, slack_base_url
from services.lab.server import LabHandle, run_lab
from services.lab.slack_board import (
    LAB_ASK_CHANNEL,
    LAB_SLACK_APP,
    LAB_SLACK_APP_WITHOUT_SCOPE,
    LAB_SLACK_TEAM,
    LAB_SLACK_USERGROUP,
)
from services.lab.state import LabClock
from shared.config import Secret
from shared.errors import Code, FleetwatchError
from shared.wire.approval import RecordAsk, RecordRefusal
from tests.assistant.conftest import START
from tests.assistant.helpers import FakeSink, sequence
from tests.assistant.hostile import hostile_scenario

OPS, AV, GUEST = "U0LABOPS", "U0LABAV", "U0LABGUEST"
LOOKING = ("Looking…", "Buscando…")


@contextlib.asynccontextmanager
async def listening(
    lab: LabHandle,
    assistant: Any,
    sink: FakeSink,
    store: WatchStore,
    *,
    watchdog: float = 30.0,
    rate: RateLimit | None = None,
    **options: Any,
) -> AsyncIterator[SocketModeListener]:
    """A listener connected to the lab's stand-in for the block."""
    client = AsyncWebClient(
        token=LAB_SLACK_BOT, base_url=slack_base_url(lab.url), timeout=5, retry_handlers=[]
    )
    settings = {"team_id": LAB_SLACK_TEAM, "allowed_users": (OPS,), "ask_channels": (LAB_ASK_CHANNEL,)}
    settings.update(options)
    asks = SlackAsks(
        assistant=assistant,
        api=SlackApi(client),
        seen=store,
        sink=sink,
        options=SlackOptions(api_url=slack_base_url(lab.url), **settings),
        rate=rate,
    )
    listener = SocketModeListener(
        app_token=Secret(LAB_SLACK_APP), web_client=client, asks=asks, watchdog_seconds=watchdog
    )
    task = asyncio.create_task(listener.run())
    try:
        await lab.slack_until(lambda board: board.live() is not None, 10)
        yield listener
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def post(lab: LabHandle, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{lab.url}{path}", json=body or {}) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.json()


async def ask(lab: LabHandle, user: str, channel: str, text: str, **extra: Any) -> dict[str, Any]:
    """Ask through the stand-in's control endpoint; the envelope was acked within 3 s."""
    sent = await post(lab, "/_lab/slack/ask", {"user": user, "channel": channel, "text": text, **extra})
    assert sent["acked"] is True and sent["ack_ms"] < 3000
    return sent


class WaitingSink(FakeSink):
    """A `FakeSink` a test can wait on until it holds `count` audit rows."""

    async def record(self, record: RecordAsk | RecordRefusal) -> None:
        await super().record(record)
        self.arrived().set()

    def arrived(self) -> asyncio.Event:
        if not hasattr(self, "_arrived"):
            self._arrived = asyncio.Event()
        return self._arrived

    async def records_until(self, count: int, seconds: float = 10) -> None:
        async with asyncio.timeout(seconds):
            while len(self.records) < count:
                self.arrived().clear()
                await self.arrived().wait()


def outcomes(sink: FakeSink) -> list[str]:
    """Each audit row's outcome: ``answered`` (an ask row) or the refusal's code."""
    return [str(r.code) if isinstance(r, RecordRefusal) else "answered" for r in sink.records]


def answers(notices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for n in notices if n["destination"] == "slack" and n["text"] not in LOOKING]


async def answered(lab: LabHandle, count: int = 1) -> list[dict[str, Any]]:
    return answers(await lab.notices_until(lambda ns: len(answers(ns)) >= count, 20))


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[WatchStore]:
    store = await WatchStore.connect(tmp_path / "watch.db")
    yield store
    await store.close()


@pytest.fixture
def keyword_assistant(make_assistant) -> Callable[..., Any]:
    """The read-only assistant (no propose_change), answering with the keyword answer."""
    return lambda sink: make_assistant(sink=sink, model_client=None, read_only=True)


async def test_an_allowlisted_users_question_is_answered_in_the_thread_with_the_offline_rooms(
    lab, store, keyword_assistant
):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        sent = await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?")
        (reply,) = await answered(lab)
    looking = [n for n in lab.lab.notices.notices if n["text"] in LOOKING]
    assert looking and looking[0]["thread"] == reply["thread"]
    assert reply["channel"] == LAB_ASK_CHANNEL and reply["thread"]
    assert "ENG 210" in reply["text"] and "LIB Room 2" in reply["text"]
    assert reply["body"]["parse"] == "none" and reply["body"]["mrkdwn"] is False
    assert reply["body"]["link_names"] is False
    (record,) = sink.records
    assert isinstance(record, RecordAsk) and record.slack_user == OPS and record.slack_channel == "channel"
    assert record.question_chars == len("what's offline?") and record.asker_uid is None
    assert sent["kind"] == "app_mention"


async def test_a_direct_message_and_a_slash_command_are_answered_and_the_slash_one_ephemerally(
    lab, store, keyword_assistant
):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        await ask(lab, OPS, "D0LABOPS", "what's offline?")
        await answered(lab, 1)
        await ask(lab, OPS, LAB_ASK_CHANNEL, "/fleetwatch what is offline")
        replies = await answered(lab, 2)
    dm, slash = replies
    assert dm["channel"] == "D0LABOPS" and "ENG 210" in dm["text"] and not dm.get("ephemeral")
    assert slash["ephemeral"] is True and slash["user"] == OPS and "ENG 210" in slash["text"]
    assert [r.slack_channel for r in sink.records] == ["dm", "channel"]


async def test_the_answer_is_in_the_askers_slack_language_else_the_questions(lab, store, keyword_assistant):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store, allowed_users=(OPS, AV)):
        await ask(lab, AV, LAB_ASK_CHANNEL, "what's offline?")  # U0LABAV's Slack locale is es-LA
        (spanish,) = await answered(lab, 1)
    assert "Buscando…" in [n["text"] for n in lab.lab.notices.notices]
    assert "Respuesta por palabras clave" in spanish["text"]
    assert [r.language for r in sink.records] == ["es"]


async def test_a_user_not_on_the_list_and_a_foreign_workspace_are_refused_and_audited(
    lab, store, keyword_assistant
):
    sink = WaitingSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        await ask(lab, GUEST, LAB_ASK_CHANNEL, "what's offline?")
        (polite,) = await answered(lab)
        await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?", team="T0ELSEWHERE")
        await sink.records_until(2)
    assert "only answer the people" in polite["text"] and "ENG 210" not in polite["text"]
    assert len(answers(lab.lab.notices.notices)) == 1  # the foreign workspace got no reply
    guest, foreign = sink.records
    assert isinstance(guest, RecordRefusal) and isinstance(foreign, RecordRefusal)
    assert (guest.code, guest.slack_user, guest.surface) == ("slack_not_allowed", GUEST, "slack")
    assert (foreign.code, foreign.slack_user) == ("slack_wrong_team", OPS)
    assert lab.calls() == []  # nothing of the fleet was read for either


async def test_an_empty_allowlist_answers_nobody(lab, store, keyword_assistant):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store, allowed_users=()):
        await ask(lab, OPS, "D0LABOPS", "what's offline?")
        (polite,) = await answered(lab)
    assert "only answer the people" in polite["text"]
    assert [r.code for r in sink.records] == ["slack_not_allowed"]


async def test_a_user_group_admits_its_members_and_a_failed_lookup_admits_nobody(
    lab, store, keyword_assistant
):
    sink = FakeSink()
    async with listening(
        lab, keyword_assistant(sink), sink, store, allowed_users=(), usergroup=LAB_SLACK_USERGROUP
    ):
        await post(lab, "/_lab/slack/faults", {"usergroup_fails": True})
        await ask(lab, AV, "D0LABAV", "what's offline?")
        (refused,) = await answered(lab, 1)
        await post(lab, "/_lab/slack/faults", {"usergroup_fails": False})
        await ask(lab, AV, "D0LABAV", "what's offline?")
        replies = await answered(lab, 2)
    assert "ENG 210" not in refused["text"] and "ENG 210" in replies[1]["text"]
    assert outcomes(sink) == ["slack_not_allowed", "answered"]


async def test_the_same_event_twice_is_answered_once(lab, store, keyword_assistant):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        first = await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?", event_id="Ev0SAME")
        await answered(lab)
        again = await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?", event_id="Ev0SAME")
        await ask(lab, OPS, "D0LABOPS", "what's recording?")  # a later ask shows the repeat was done
        replies = await answered(lab, 2)
    assert first["envelope_id"] != again["envelope_id"] and again["acked"] is True
    assert len(replies) == 2 and "ENG 210" in replies[0]["text"] and replies[1]["channel"] == "D0LABOPS"
    assert len(sink.records) == 2


async def test_a_disconnect_envelope_and_a_silent_stall_each_reconnect(lab, store, keyword_assistant):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store, watchdog=0.4):
        await post(lab, "/_lab/slack/disconnect")
        await lab.slack_until(lambda board: board.opened >= 2 and board.live() is not None, 10)
        await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?")
        await answered(lab, 1)
        started = time.monotonic()
        await post(lab, "/_lab/slack/stall")
        await lab.slack_until(lambda board: board.opened >= 3 and board.live() is not None, 10)
        reconnected = time.monotonic() - started
        await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?")
        await answered(lab, 2)
    assert reconnected < 5


async def test_reboot_eng_105_is_answered_without_any_proposal(lab, store, standin, make_assistant):
    sink = FakeSink()
    reboot = {"tool": "batch_reboot", "arguments": {"device_ids": ["19012340202"]}, "reason": "hot"}
    standin.set_script(
        sequence(Reply((ToolUse("propose_change", reboot),)), say("I asked for a reboot of ENG 105."))
    )
    assistant = make_assistant(sink=sink, read_only=True)
    async with listening(lab, assistant, sink, store):
        await ask(lab, OPS, LAB_ASK_CHANNEL, "reboot ENG 105")
        (reply,) = await answered(lab)
    assert sink.submissions == [] and lab.writes() == []
    assert "never proposed from Slack" in reply["text"] and "fleetwatch ask" in reply["text"]
    offered = [tool["name"] for tool in standin.requests[0].body["tools"]]
    assert "propose_change" not in offered
    (record,) = sink.records
    assert isinstance(record, RecordAsk) and record.proposal_ids == ()


async def test_a_change_asked_from_slack_gets_slacks_own_reason_never_a_false_one(
    lab, store, keyword_assistant
):
    """The read-only assistant Slack asks get adds no "Not proposed" line: its code would be a
    reason that is not the one (the policy may well propose; Slack never does), and the reply
    already says why and where to ask (walk, issue 28)."""
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        await ask(lab, OPS, LAB_ASK_CHANNEL, "reinicia ENG 105")
        (reply,) = await answered(lab)
    text = reply["text"]
    assert "Desde Slack nunca se proponen cambios" in text or "never proposed from Slack" in text, text
    for false_reason in ("observ", "No se propuso", "Not proposed", "fence", "cerca"):
        assert false_reason not in text, text
    assert sink.submissions == [] and lab.writes() == []


async def test_hostile_room_names_are_inert_in_the_reply(store, policies, make_assistant):
    async with run_lab(hostile_scenario(), clock=LabClock(START, frozen=True)) as hostile:
        sink = FakeSink()
        from shared.epiphan.mcp_session import McpConnection
        from shared.epiphan.read_client import EpiphanReadClient

        connection = McpConnection(hostile.mcp_url, hostile.teams["normal"].token)
        async with EpiphanReadClient(connection, policies[1].model_read_tools) as reader:
            assistant = make_assistant(sink=sink, reader=reader, model_client=None, read_only=True)
            async with listening(hostile, assistant, sink, store):
                await ask(hostile, OPS, LAB_ASK_CHANNEL, "what needs attention?")
                (reply,) = await answered(hostile)
    text = reply["text"]
    assert "h0" in text or "h1" in text  # the hostile names are there, as text
    assert "<" not in text and ">" not in text  # no <!channel>, <@U…>, <http…|…>
    assert "@here" not in text and "@channel" not in text
    assert "\u202e" not in text and "\u200b" not in text


async def test_a_member_asking_too_often_is_told_once_then_only_audited(lab, store, keyword_assistant):
    sink = WaitingSink()
    async with listening(lab, keyword_assistant(sink), sink, store, rate=RateLimit(per_window=1)):
        await ask(lab, OPS, "D0LABOPS", "what's offline?")
        await answered(lab, 1)
        await ask(lab, OPS, "D0LABOPS", "what's recording?")
        await answered(lab, 2)
        await ask(lab, OPS, "D0LABOPS", "and now?")
        await ask(lab, GUEST, "D0LABGUEST", "me too")  # a stranger's polite line comes after
        replies = await answered(lab, 3)
        await sink.records_until(4)
    assert "wait a moment" in replies[1]["text"] and replies[2]["channel"] == "D0LABGUEST"
    said = outcomes(sink)  # the last two ran side by side: their rows come in either order
    assert said[:2] == ["answered", "slack_rate_limited"]
    assert sorted(said[2:]) == ["slack_not_allowed", "slack_rate_limited"]


async def test_a_question_over_the_cap_is_refused_in_words(lab, store, keyword_assistant):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        await ask(lab, OPS, "D0LABOPS", "x" * 2001)
        (reply,) = await answered(lab)
    assert "longer than 2000 characters" in reply["text"] and outcomes(sink) == ["slack_question_too_long"]


async def test_an_answer_the_channel_refuses_goes_to_a_direct_message_that_says_so(
    lab, store, keyword_assistant
):
    sink = FakeSink()
    async with listening(lab, keyword_assistant(sink), sink, store):
        await post(lab, "/_lab/slack/faults", {"not_in_channel": [LAB_ASK_CHANNEL]})
        await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?")
        replies = await lab.notices_until(lambda ns: any("ENG 210" in n["text"] for n in ns), 20)
    (reply,) = [n for n in replies if "ENG 210" in n["text"]]
    assert reply["channel"] == "D0LABOPS" and "could not post in that channel" in reply["text"]


async def test_an_app_token_slack_refuses_stops_the_listener_with_one_logged_reason(lab, store, caplog):
    client = AsyncWebClient(
        token=LAB_SLACK_BOT, base_url=slack_base_url(lab.url), timeout=5, retry_handlers=[]
    )
    asks = SlackAsks(
        assistant=None,
        api=SlackApi(client),
        seen=store,
        sink=FakeSink(),
        options=SlackOptions(team_id=LAB_SLACK_TEAM),
    )
    listener = SocketModeListener(
        app_token=Secret(LAB_SLACK_APP_WITHOUT_SCOPE), web_client=client, asks=asks, watchdog_seconds=30
    )
    async with asyncio.timeout(10):
        await listener.run()
    assert lab.slack.opened == 0
    assert "Slack refused the app-level token (missing_scope)" in caplog.text


def test_the_assistant_slack_asks_get_is_read_only_whatever_the_fence(policies):
    from services.assistant.server import build_assistant
    from shared.config import load_settings

    settings = load_settings(
        {"FLEETWATCH_HOME": "/nonexistent", "FLEETWATCH_WRITE_DEVICE_IDS": "29088800004"}
    )
    reader: Any = object()
    read_only, _ = build_assistant(settings, *policies, reader=reader, read_only=True)
    usual, _ = build_assistant(settings, *policies, reader=reader)
    assert usual.may_propose and not read_only.may_propose
    assert "propose_change" not in [t["name"] for t in read_only.tools]


class FailingAsker:
    """An assistant whose ask fails as one whose approval.sock is down does (the audit row)."""

    async def ask(self, question: str, language: str | None = None, *, asked_by: Any = None) -> Any:
        raise FleetwatchError(Code.SERVICE_UNAVAILABLE, "approval.sock did not answer")


async def test_an_ask_that_fails_tells_the_asker_to_try_again(lab, store):
    sink = FakeSink()
    async with listening(lab, FailingAsker(), sink, store):
        await ask(lab, OPS, LAB_ASK_CHANNEL, "what's offline?")
        (reply,) = await answered(lab)
    assert reply["text"] == "I could not answer just now; please try again, or use the ask page."
    assert reply["thread"] and sink.records == []


async def test_the_watchdog_alone_reconnects_a_connection_that_went_silent(lab, store, keyword_assistant):
    """The SDK's own pings are set far apart, so only the watchdog can notice the silence."""
    sink = FakeSink()
    client = AsyncWebClient(
        token=LAB_SLACK_BOT, base_url=slack_base_url(lab.url), timeout=5, retry_handlers=[]
    )
    asks = SlackAsks(
        assistant=keyword_assistant(sink),
        api=SlackApi(client),
        seen=store,
        sink=sink,
        options=SlackOptions(team_id=LAB_SLACK_TEAM, allowed_users=(OPS,), api_url=slack_base_url(lab.url)),
    )
    listener = SocketModeListener(
        app_token=Secret(LAB_SLACK_APP), web_client=client, asks=asks, watchdog_seconds=0.5, ping_seconds=60
    )
    task = asyncio.create_task(listener.run())
    try:
        await lab.slack_until(lambda board: board.live() is not None, 10)
        await post(lab, "/_lab/slack/stall")
        await lab.slack_until(lambda board: board.opened >= 2 and board.live() is not None, 10)
        await ask(lab, OPS, "D0LABOPS", "what's offline?")
        await answered(lab)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert listener.reconnects >= 1


@pytest.mark.parametrize(
    ("user", "heading", "line"),
    [
        (OPS, "Room notes (operators' words):", "- “ENG 210”: Switch port dead"),
        (AV, "Notas de las salas (palabras de los operadores):", "- «ENG 210»: Switch port dead"),
    ],
)
async def test_a_rooms_note_stands_under_the_answer_that_names_it(
    lab, store, make_assistant, user, heading, line
):
    await store.set_note("2026-09-16T12:00:00.000Z", "19012340204", "ENG 210", "Switch port dead", 1000)
    sink = FakeSink()
    assistant = make_assistant(sink=sink, model_client=None, read_only=True, notes=store)
    async with listening(lab, assistant, sink, store, allowed_users=(OPS, AV)):
        await ask(lab, user, LAB_ASK_CHANNEL, "what's offline?")
        (reply,) = await answered(lab)
    lines = reply["text"].split("\n")
    assert lines[lines.index(heading) + 1] == line
