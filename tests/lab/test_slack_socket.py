"""The lab's Slack Socket Mode stand-in: ``apps.connections.open``, the websocket and its
envelopes and acks, the Web API methods an ask calls, and ``/_lab/slack``."""

from __future__ import annotations

import asyncio

import aiohttp
import httpx2
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from services.lab.notices import LAB_SLACK_BOT, slack_base_url
from services.lab.server import LabHandle
from services.lab.slack_board import (
    LAB_ASK_CHANNEL,
    LAB_SLACK_APP,
    LAB_SLACK_APP_WITHOUT_SCOPE,
    LAB_SLACK_TEAM,
)


def client(lab: LabHandle, token: str | None = LAB_SLACK_BOT) -> AsyncWebClient:
    return AsyncWebClient(token=token, base_url=slack_base_url(lab.url), retry_handlers=[])


@pytest.mark.parametrize(
    ("token", "error"),
    [
        (LAB_SLACK_BOT, "not_allowed_token_type"),
        (LAB_SLACK_APP_WITHOUT_SCOPE, "missing_scope"),
        ("xapp-wrong", "invalid_auth"),
    ],
)
async def test_apps_connections_open_refuses_a_bot_token_a_token_without_the_scope_and_a_wrong_one(
    lab: LabHandle, token: str, error: str
):
    with pytest.raises(SlackApiError) as raised:
        await client(lab, None).apps_connections_open(app_token=token)
    assert raised.value.response["error"] == error


async def test_a_connection_is_greeted_and_an_ask_is_an_envelope_whose_ack_is_timed(lab: LabHandle):
    opened = await client(lab, None).apps_connections_open(app_token=LAB_SLACK_APP)
    async with aiohttp.ClientSession() as session, session.ws_connect(opened["url"]) as socket:
        hello = await socket.receive_json()
        assert hello["type"] == "hello"
        async with httpx2.AsyncClient(base_url=lab.url) as http:
            lab.slack.ack_seconds = 0.2
            unanswered = (
                await http.post(
                    "/_lab/slack/ask", json={"user": "U0LABOPS", "channel": "D0LABOPS", "text": "hola"}
                )
            ).json()
            envelope = await socket.receive_json()
            assert envelope["type"] == "events_api" and envelope["payload"]["event"]["channel_type"] == "im"
            assert envelope["payload"]["team_id"] == LAB_SLACK_TEAM
            assert unanswered["acked"] is False
            lab.slack.ack_seconds = 3.0
            asking = http.post(
                "/_lab/slack/ask",
                json={"user": "U0LABOPS", "channel": LAB_ASK_CHANNEL, "text": "/fleetwatch hi"},
            )
            pending = asyncio.ensure_future(asking)
            slash = await socket.receive_json()
            await socket.send_json({"envelope_id": slash["envelope_id"]})
            acked = (await pending).json()
    assert slash["type"] == "slash_commands" and slash["payload"]["text"] == "hi"
    assert acked["acked"] is True and acked["ack_ms"] < 3000 and acked["kind"] == "slash"
    assert [e["acked"] for e in lab.slack.view()["envelopes"]] == [False, True]


async def test_an_ask_with_no_app_connected_is_refused(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        answer = await http.post(
            "/_lab/slack/ask", json={"user": "U0LABOPS", "channel": "D0LABOPS", "text": "x"}
        )
        bad = await http.post("/_lab/slack/ask", json={"user": "U0LABOPS"})
    assert answer.status_code == 409 and bad.status_code == 400


async def test_the_web_api_methods_an_ask_calls_answer_as_slack_does(lab: LabHandle):
    web = client(lab)
    user = await web.users_info(user="U0LABAV", include_locale=True)
    assert user["user"]["locale"] == "es-LA"
    assert (await web.usergroups_users_list(usergroup="S0LABAV"))["users"] == ["U0LABAV"]
    assert (await web.conversations_open(users="U0LABOPS"))["channel"]["id"] == "D0LABOPS"
    await web.chat_postEphemeral(channel=LAB_ASK_CHANNEL, user="U0LABOPS", text="only you")
    await web.chat_postMessage(channel=LAB_ASK_CHANNEL, text="in the thread", thread_ts="1.2")
    lab.lab.notices.not_in_channel.add(LAB_ASK_CHANNEL)
    with pytest.raises(SlackApiError) as raised:
        await web.chat_postMessage(channel=LAB_ASK_CHANNEL, text="refused")
    assert raised.value.response["error"] == "not_in_channel"
    lab.lab.slack.usergroup_fails = True
    with pytest.raises(SlackApiError) as raised:
        await web.usergroups_users_list(usergroup="S0LABAV")
    assert raised.value.response["error"] == "missing_scope"
    ephemeral, threaded = lab.lab.notices.notices
    assert ephemeral["ephemeral"] is True and ephemeral["user"] == "U0LABOPS"
    assert threaded["thread"] == "1.2" and threaded["channel"] == LAB_ASK_CHANNEL
