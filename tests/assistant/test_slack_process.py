"""Asks from Slack in the real assistant process, beside the real executor and approval_web:
the lab plays Slack (Socket Mode and the Web API); the audit rows reach the real store through
approval.sock, naming the Slack member and the channel kind, never the question."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx2

from services.lab.notices import LAB_SLACK_BOT, slack_base_url
from services.lab.slack_board import LAB_ASK_CHANNEL, LAB_SLACK_APP, LAB_SLACK_TEAM
from shared.epiphan.slots import SignIn, write_slot
from tests.ctl.cli import fleetwatch_async
from tests.e2e.stack import running_stack
from tests.procs import base_env, start_service

QUESTION = "what is offline, please?"


async def test_the_assistant_process_answers_an_allowlisted_member_and_audits_a_stranger(tmp_path: Path):
    home = tmp_path / "home"
    async with running_stack(home) as stack:
        env = base_env(
            home,
            FLEETWATCH_EPIPHAN_MCP_URL=stack.lab.mcp_url,
            FLEETWATCH_WRITE_DEVICE_IDS=stack.env["FLEETWATCH_WRITE_DEVICE_IDS"],
            FLEETWATCH_WRITE_TEAM_ID=stack.env["FLEETWATCH_WRITE_TEAM_ID"],
            FLEETWATCH_SLACK_API_URL=slack_base_url(stack.lab.url),
            FLEETWATCH_SLACK_BOT_TOKEN=LAB_SLACK_BOT,
            FLEETWATCH_SLACK_CHANNEL="#av-watch",
            FLEETWATCH_SLACK_APP_TOKEN=LAB_SLACK_APP,
            FLEETWATCH_SLACK_TEAM_ID=LAB_SLACK_TEAM,
            FLEETWATCH_SLACK_ALLOWED_USERS="U0LABOPS",
            FLEETWATCH_SLACK_ASK_CHANNELS=LAB_ASK_CHANNEL,
        )
        normal = stack.lab.teams["normal"]
        write_slot(
            stack.settings.read_token_file,
            SignIn(access_token=normal.token, server=stack.lab.mcp_url, team_id=normal.team_id, kind="lab"),
        )
        assistant = await start_service("services.assistant", env)
        try:
            await stack.lab.slack_until(lambda board: board.live() is not None, 30)
            async with httpx2.AsyncClient(base_url=stack.lab.url, timeout=10) as http:
                started = time.monotonic()
                sent = (
                    await http.post(
                        "/_lab/slack/ask",
                        json={"user": "U0LABOPS", "channel": LAB_ASK_CHANNEL, "text": QUESTION},
                    )
                ).json()
                notices = await stack.lab.notices_until(
                    lambda ns: any(n.get("thread") and "ENG 210" in n["text"] for n in ns), 30
                )
                latency = time.monotonic() - started
                await http.post(
                    "/_lab/slack/ask", json={"user": "U0LABGUEST", "channel": "D0LABGUEST", "text": QUESTION}
                )
                await stack.lab.notices_until(
                    lambda ns: any(n.get("channel") == "D0LABGUEST" for n in ns), 30
                )
            code, out, err = await fleetwatch_async(stack.env, "audit", "tail", "-n", "20", "--json")
        finally:
            await assistant.stop()
    assert sent["acked"] is True and sent["ack_ms"] < 3000
    (reply,) = [n for n in notices if n.get("thread") and "ENG 210" in n["text"]]
    assert reply["thread"] and reply["channel"] == LAB_ASK_CHANNEL and latency < 30
    assert code == 0, err
    rows = json.loads(out)["rows"]
    asked = [r for r in rows if r["kind"] == "ask"]
    refused = [r for r in rows if r["kind"] == "refusal"]
    assert [(r["detail"]["slack_user"], r["detail"]["slack_channel"]) for r in asked] == [
        ("U0LABOPS", "channel")
    ]
    assert asked[0]["detail"]["question_chars"] == len(QUESTION)
    (stranger,) = refused
    assert stranger["detail"]["socket"] == "slack" and stranger["detail"]["slack_user"] == "U0LABGUEST"
    assert stranger["detail"]["slack_channel"] == "dm" and "slack_not_allowed" in json.dumps(stranger)
    assert QUESTION not in out
