"""The lab's Slack Web API stand-in and Teams webhook receiver, and ``/_lab/notices``."""

from __future__ import annotations

import httpx2
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from services.lab.notices import LAB_SLACK_BOT, card_text, slack_base_url, teams_webhook_url
from services.lab.server import LabHandle, build_app, make_lab

CARD = {
    "type": "message",
    "attachments": [
        {
            "contentType": "application/vnd.microsoft.card.adaptive",
            "content": {
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": [
                    {"type": "TextBlock", "text": "Title"},
                    {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": "a line"}, "and more"]},
                    {
                        "type": "Container",
                        "items": [{"type": "FactSet", "facts": [{"title": "Room", "value": "A"}]}],
                    },
                ],
            },
        }
    ],
}


def client(lab: LabHandle, token: str = LAB_SLACK_BOT) -> AsyncWebClient:
    return AsyncWebClient(token=token, base_url=slack_base_url(lab.url), retry_handlers=[])


async def test_the_slack_sdk_posts_to_the_stand_in_and_the_lab_lists_what_it_got(lab: LabHandle):
    reply = await client(lab).chat_postMessage(channel="#av-watch", text="Digest &lt;ok&gt;", mrkdwn=False)
    assert reply["ok"] is True and reply["channel"] and reply["ts"]
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        listing = (await http.get("/_lab/notices")).json()
    (notice,) = listing["notices"]
    assert (notice["destination"], notice["text"], notice["channel"]) == (
        "slack",
        "Digest &lt;ok&gt;",
        "#av-watch",
    )
    assert notice["at"] == "2026-09-16T13:00:00Z" and notice["body"]["mrkdwn"] is False
    assert listing["attempts"] == {"slack": 1, "teams": 0}


@pytest.mark.parametrize(
    ("token", "arguments", "error"),
    [
        ("xoxb-wrong", {"channel": "#c", "text": "x"}, "invalid_auth"),
        (LAB_SLACK_BOT, {"channel": "", "text": "x"}, "channel_not_found"),
        (LAB_SLACK_BOT, {"channel": "#c"}, "no_text"),
    ],
)
async def test_the_slack_stand_in_answers_like_slack_when_it_refuses(lab: LabHandle, token, arguments, error):
    with pytest.raises(SlackApiError) as refused:
        await client(lab, token).api_call("chat.postMessage", json=arguments)
    assert refused.value.response["error"] == error
    with pytest.raises(SlackApiError) as unknown:
        await client(lab).api_call("users.list")
    assert unknown.value.response["error"] == "unknown_method"
    assert lab.lab.notices.notices == []


async def test_the_teams_receiver_takes_an_adaptive_card_message_and_answers_202(lab: LabHandle):
    async with httpx2.AsyncClient() as http:
        accepted = await http.post(teams_webhook_url(lab.url), json=CARD)
        wrong_key = await http.post(f"{lab.url}/teams/webhook/guess", json=CARD)
        not_a_card = await http.post(teams_webhook_url(lab.url), json={"text": "plain"})
    assert (accepted.status_code, accepted.content) == (202, b"")
    assert wrong_key.status_code == 404 and not_a_card.status_code == 400
    (notice,) = lab.lab.notices.notices
    assert notice["destination"] == "teams" and notice["text"] == "Title\na lineand more\nRoom: A"


def test_a_cards_text_is_read_in_order_from_every_text_element():
    assert card_text(CARD["attachments"][0]["content"]) == "Title\na lineand more\nRoom: A"
    assert card_text({"body": "not a list"}) == ""


async def test_a_fault_fails_the_next_posts_and_every_attempt_is_counted(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        set_fault = await http.post(
            "/_lab/notices/faults", json={"destination": "teams", "kind": "error", "count": 1}
        )
        assert set_fault.status_code == 200
        bad = await http.post("/_lab/notices/faults", json={"destination": "fax", "kind": "error"})
        assert bad.status_code == 400
        failed = await http.post(teams_webhook_url(lab.url), json=CARD)
        ok = await http.post(teams_webhook_url(lab.url), json=CARD)
        listing = (await http.get("/_lab/notices")).json()
        assert (failed.status_code, ok.status_code) == (500, 202)
        assert listing["attempts"]["teams"] == 2 and len(listing["notices"]) == 1
        assert (await http.delete("/_lab/notices")).json()["notices"] == []
        await http.post(teams_webhook_url(lab.url), json=CARD)
        await http.post("/_lab/reset")
        assert (await http.get("/_lab/notices")).json()["notices"] == []


async def test_the_stand_ins_answer_loopback_clients_by_loopback_names_only():
    app = build_app(make_lab("campus"), "http://127.0.0.1:8770")
    transport = httpx2.ASGITransport(app=app, client=("192.0.2.7", 40000))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8770") as http:
        for path in ("/slack/api/chat.postMessage", "/teams/webhook/lab-demo-webhook"):
            assert (await http.post(path, json={})).status_code == 403
        assert (await http.get("/_lab/notices")).status_code == 403
