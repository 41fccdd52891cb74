"""Posting to Slack (the Slack SDK's Web API client) and Teams (a webhook) against the lab's
stand-ins: what arrives, hostile names inert in both, failures logged and counted, never
retried, never blocking a beat."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator

import httpx2
import pytest

from services.assistant.watch.compose import RoomName
from services.assistant.watch.destinations import ConsoleDestination, SlackDestination, TeamsDestination
from services.assistant.watch.post import Post, Section
from services.lab.notices import LAB_SLACK_BOT, slack_base_url, teams_webhook_url
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR, Secret
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.errors import Code
from shared.policy.loader import load_policies
from tests.assistant.hostile import hostile_scenario
from tests.assistant.watch.helpers import NOW, MemoryProposals, Recorder, beat, notices_of, pending
from tests.corpus.hostile_names import BY_KIND

SLACK_CONTROL = re.compile(r"<[!@#]|<https?:")


def slack(lab: LabHandle, token: str = LAB_SLACK_BOT) -> SlackDestination:
    return SlackDestination(Secret(token), "#av-watch", slack_base_url(lab.url), timeout_seconds=5)


def teams(lab: LabHandle, url: str | None = None) -> TeamsDestination:
    return TeamsDestination(Secret(url or teams_webhook_url(lab.url)), timeout_seconds=5)


async def notices(lab: LabHandle) -> dict:
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{lab.url}/_lab/notices")
        return response.json()


async def set_fault(lab: LabHandle, destination: str, kind: str, count: int = 1) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{lab.url}/_lab/notices/faults", json={"destination": destination, "kind": kind, "count": count}
        )
        assert response.status_code == 200, response.text


POST = Post("digest", "Fleetwatch, what changed: 1 new.", (Section("Fix soon", ("- ENG 210: offline",)),))


async def test_a_post_reaches_slack_and_teams_as_they_receive_it(lab: LabHandle):
    await slack(lab).send(POST)
    await teams(lab).send(POST)
    received = (await notices(lab))["notices"]
    assert [(n["destination"], n["text"]) for n in received] == [
        ("slack", "Fleetwatch, what changed: 1 new.\nFix soon\n- ENG 210: offline"),
        ("teams", "Fleetwatch, what changed: 1 new.\nFix soon\n- ENG 210: offline"),
    ]
    assert received[0]["channel"] == "#av-watch" and received[0]["body"]["parse"] == "none"


async def test_a_line_that_follows_a_notice_edits_it_in_slack_and_is_a_card_of_its_own_in_teams(
    lab: LabHandle,
):
    notice = Post("notice", "A change is waiting for a person's approval.", ref="p-000000000001")
    closed = Post(
        "notice_closed",
        "Update: Start recording: <ENG 220>: denied; nothing ran.",
        ref="p-000000000001",
        follows=True,
    )
    stray = Post(
        "notice_closed", "Update: x: expired without approval; nothing ran.", ref="p-2", follows=True
    )
    to_slack, to_teams = slack(lab), teams(lab)
    for post in (notice, closed, stray):
        await to_slack.send(post)
        await to_teams.send(post)
    received = (await notices(lab))["notices"]
    sent = [n for n in received if n["destination"] == "slack"]
    assert [n["text"] for n in sent] == [
        "A change is waiting for a person's approval.\nUpdate: Start recording: &lt;ENG 220&gt;: denied; nothing ran.",
        "Update: x: expired without approval; nothing ran.",
    ]
    assert sent[0]["edited"] and sent[0]["edit_body"]["ts"] == sent[0]["ts"]
    assert sent[0]["edit_body"]["parse"] == "none" and sent[0]["edit_body"]["mrkdwn"] is False
    assert [n["text"] for n in received if n["destination"] == "teams"] == [
        "A change is waiting for a person's approval.",
        "Update: Start recording: <ENG 220>: denied; nothing ran.",
        "Update: x: expired without approval; nothing ran.",
    ]


async def test_a_refused_slack_token_is_a_failed_post_and_the_log_never_shows_the_token(
    make_watch, lab: LabHandle, caplog
):
    caplog.set_level(logging.DEBUG)
    secret = "xoxb-0000-wrong-token"
    watch = await make_watch(destinations=[slack(lab, secret)])
    await beat(watch)
    (counts,) = watch.outbox.counts()
    assert (counts.sent, counts.failed, counts.last_code) == (0, 2, str(Code.POST_FAILED))
    assert secret not in caplog.text
    assert "Slack answered invalid_auth" in caplog.text


async def test_a_failed_post_is_counted_and_never_retried(make_watch, lab: LabHandle):
    await set_fault(lab, "slack", "error", count=5)
    await set_fault(lab, "teams", "error", count=5)
    watch = await make_watch(destinations=[slack(lab), teams(lab)])
    await beat(watch)
    assert (await notices(lab))["attempts"] == {"slack": 2, "teams": 2}
    assert [(c.destination, c.sent, c.failed) for c in watch.outbox.counts()] == [
        ("slack", 0, 2),
        ("teams", 0, 2),
    ]
    await beat(watch)
    assert (await notices(lab))["attempts"] == {"slack": 2, "teams": 2}, (
        "nothing changed, nothing posted, nothing retried"
    )


async def test_a_destination_that_never_answers_does_not_block_the_beat(make_watch, lab: LabHandle):
    await set_fault(lab, "teams", "hang", count=10)
    recorder = Recorder(name="console")
    watch = await make_watch(destinations=[recorder, teams(lab)], post_timeout=1.0)
    outcome = await watch.beat()
    assert outcome.posted == ("readiness", "digest")
    teams_counts = watch.outbox.counts()[1]
    assert (teams_counts.sent, teams_counts.failed) == (0, 0), "the beat returned before Teams answered"
    await watch.outbox.drain()
    assert recorder.kinds() == ["readiness", "digest"]
    teams_counts = watch.outbox.counts()[1]
    assert (teams_counts.failed, teams_counts.last_code) == (2, str(Code.POST_TIMEOUT))


async def test_a_console_only_report_goes_to_the_log_and_nowhere_else(make_watch, lab: LabHandle, caplog):
    caplog.set_level(logging.INFO, logger="services.assistant.watch.posts")
    lab.set_fault("get_devices_in_my_team", "error", count=1)
    watch = await make_watch(destinations=[ConsoleDestination(), slack(lab)])
    await beat(watch)
    assert "Fleetwatch could not read the fleet (epiphan_tool_error" in caplog.text
    assert (await notices(lab))["notices"] == []


@pytest.fixture
async def hostile_lab() -> AsyncIterator[LabHandle]:
    async with run_lab(hostile_scenario(), clock=LabClock(NOW, frozen=True)) as handle:
        yield handle


async def test_hostile_names_in_a_digest_and_a_notice_are_inert_in_slack_and_teams(
    make_watch, hostile_lab: LabHandle
):
    tools = load_policies(REPO_POLICY_DIR)[1]
    connection = McpConnection(hostile_lab.mcp_url, hostile_lab.teams["normal"].token)
    mentions = BY_KIND["mentions"]
    proposals = MemoryProposals(
        items=[
            pending(f"p-00000000000{i}", "2026-09-16T12:59:00.000Z", targets=(f"2908880000{i}",))
            for i in range(1, 5)
        ],
        rooms_reply={f"2908880000{i}": RoomName(mentions[i - 1], {"1": mentions[-i]}) for i in range(1, 5)},
    )
    async with EpiphanReadClient(connection, tools.read_tools) as reader:
        watch = await make_watch(
            reader=reader, destinations=[slack(hostile_lab), teams(hostile_lab)], proposals=proposals
        )
        await beat(watch)
        assert await notices_of(watch).post_pending() == 4
        await watch.outbox.drain()
    received = (await notices(hostile_lab))["notices"]
    kinds = [n["text"].splitlines()[0] for n in received]
    assert any(k.startswith("Fleetwatch is now watching") for k in kinds)
    assert sum(k == "A change is waiting for a person's approval." for k in kinds) == 8
    for notice in received:
        body = notice["body"]
        if notice["destination"] == "slack":
            assert (body["mrkdwn"], body["parse"], body["link_names"]) == (False, "none", False)
            assert "<" not in body["text"] and ">" not in body["text"]
            assert not SLACK_CONTROL.search(body["text"]) and not re.search(r"@(?!\u2060)", body["text"])
        else:
            card = body["attachments"][0]["content"]
            assert "{{" not in str(card) and "actions" not in str(card) and "selectAction" not in str(card)
            for element in card["body"]:
                if element["type"] == "TextBlock":
                    assert "h0" not in element["text"] and "<" not in element["text"], element
    slack_text = "\n".join(n["body"]["text"] for n in received if n["destination"] == "slack")
    assert "&lt;!channel&gt;" in slack_text and "@\u2060here" in slack_text
