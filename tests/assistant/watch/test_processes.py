"""The watch in the real assistant process, beside the real executor and approval_web, over
the real sockets; the operator's commands through the real ``fleetwatch`` CLI; Slack and Teams
played by the lab's stand-ins; the wall screen over HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from services.lab.notices import LAB_SLACK_BOT, slack_base_url, teams_webhook_url
from shared.epiphan.slots import SignIn, write_slot
from tests.approval_web.helpers import audit
from tests.ctl.cli import fleetwatch_async
from tests.e2e.stack import Stack, running_stack
from tests.procs import ServiceProcess, base_env, start_service
from tests.support import READY_SECONDS, policy_awake_now, wait_until

ASK_PAGE = re.compile(r"ask page at (http://localhost:\d+/)")
IDLE = "29088800001"
"""Sandbox Pearl-2: idle, on the stack's fence (channel 1 is "Program")."""


@pytest.fixture
async def watched(tmp_path: Path) -> AsyncIterator[tuple[Stack, ServiceProcess, dict[str, str], str]]:
    """The stack (lab, executor, approval_web) and the assistant with its watch (a heartbeat
    every two seconds, posting to the lab's Slack and Teams stand-ins), its environment, the ask
    page's URL."""
    home = tmp_path / "home"
    policy = str(policy_awake_now(tmp_path / "policy"))  # digests post whatever the hour
    async with running_stack(home, FLEETWATCH_POLICY_DIR=policy) as stack:
        env = base_env(
            home,
            FLEETWATCH_POLICY_DIR=policy,
            FLEETWATCH_EPIPHAN_MCP_URL=stack.lab.mcp_url,
            FLEETWATCH_WRITE_DEVICE_IDS="29088800001,29088800002",
            FLEETWATCH_WRITE_TEAM_ID=stack.lab.teams["sandbox"].team_id,
            FLEETWATCH_HEARTBEAT_SECONDS="2",
            FLEETWATCH_ASK_PORT="0",
            FLEETWATCH_SLACK_API_URL=slack_base_url(stack.lab.url),
            FLEETWATCH_SLACK_BOT_TOKEN=LAB_SLACK_BOT,
            FLEETWATCH_SLACK_CHANNEL="#av-watch",
            FLEETWATCH_TEAMS_WEBHOOK_URL=teams_webhook_url(stack.lab.url),
            FLEETWATCH_LOG_LEVEL="INFO",
        )
        normal = stack.lab.teams["normal"]
        write_slot(
            stack.settings.read_token_file,
            SignIn(access_token=normal.token, server=stack.lab.mcp_url, team_id=normal.team_id, kind="lab"),
        )
        assistant = await start_service("services.assistant", env, "--page")
        try:
            found = await wait_until(
                lambda: ASK_PAGE.search(assistant.log_text(tail=50_000)),
                what="the ask page's address in the assistant's log",
                seconds=READY_SECONDS,
                process=assistant.process,
                log=lambda: assistant.log_text(tail=3000),
            )
            yield stack, assistant, env, found.group(1)
        finally:
            await assistant.stop()


async def fleetwatch(
    env: dict[str, str], *args: str, real_process: bool = False
) -> subprocess.CompletedProcess[str]:
    """The ``fleetwatch`` CLI (awaited: the lab serves from this test's loop), in this process
    unless `real_process` (`tests.ctl.cli.fleetwatch_async`)."""
    code, out, err = await fleetwatch_async(env, *args, timeout=120, real_process=real_process)
    return subprocess.CompletedProcess(args, code, out, err)


def texts(notices: list[dict], destination: str = "slack") -> list[str]:
    return [n["text"] for n in notices if n["destination"] == destination]


async def test_the_assistant_process_watches_posts_notices_and_answers_the_watch_commands(watched):
    stack, assistant, env, page = watched

    def first_digest(notices: list[dict], destination: str = "slack") -> list[str]:
        return [t for t in texts(notices, destination) if t.startswith("Fleetwatch is now watching")]

    first = await stack.lab.notices_until(lambda n: bool(first_digest(n) and first_digest(n, "teams")), 20)
    (digest,) = first_digest(first)
    assert "- “ENG 210”: offline" in digest and "- “LIB Room 2”: offline" in digest

    # The watch commands' one real-process run: status --check as a monitor runs it.
    check = await fleetwatch(env, "status", "--check", real_process=True)
    assert check.returncode == 0 and check.stdout.startswith("OK: the heartbeat read the fleet"), check

    proposal_id = await stack.propose(
        "batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}, "Class soon."
    )
    noticed = await stack.lab.notices_until(lambda n: any(proposal_id in t for t in texts(n)), 20)
    notice = next(t for t in texts(noticed) if proposal_id in t)
    assert "Start recording: “Sandbox Pearl-2”, channel 1 (“Program”)." in notice
    assert f"Approve or deny it on the approval page, on the Fleetwatch machine: {stack.url}" in notice
    assert "/approve" not in notice and "token" not in notice.lower()

    ambiguous = await fleetwatch(env, "note", "SCI 1", "lamp", "replaced")
    assert ambiguous.returncode == 2
    assert "room_ambiguous" in ambiguous.stderr and "“SCI 101 Lecture Hall”; “SCI 105”" in ambiguous.stderr
    saved = await fleetwatch(env, "note", "eng 210", "Switch port dead; IT ticket 4411")
    assert (
        saved.returncode == 0
        and saved.stdout.strip() == "Note on “ENG 210” saved: Switch port dead; IT ticket 4411"
    )
    listed = json.loads((await fleetwatch(env, "notes", "--json")).stdout)
    assert [(n["room"], n["text"]) for n in listed["notes"]] == [
        ("ENG 210", "Switch port dead; IT ticket 4411")
    ]

    silenced = await fleetwatch(env, "silence", "eng 220", "--for", "2h", "--reason", "projector swap")
    assert silenced.returncode == 0, silenced
    assert "“ENG 220”: silenced until" in silenced.stdout and "projector swap" in silenced.stdout
    held = json.loads((await fleetwatch(env, "silences", "--json")).stdout)["silences"]
    assert [(h["target_name"], h["set_by"]) for h in held] == [("ENG 220", os.getuid())]
    lifted = await fleetwatch(env, "unsilence", "ENG 220")
    assert lifted.returncode == 0 and "“ENG 220”: silence lifted" in lifted.stdout
    again = await fleetwatch(env, "unsilence", "ENG 220")
    assert again.returncode == 2 and "silence_not_found" in again.stderr
    assert "(asked for “ENG 220”; " in again.stderr and "fleetwatch fleet lists the rooms)" in again.stderr
    unknown = await fleetwatch(env, "note", "ENG 999", "lamp", "--language", "es")
    assert unknown.returncode == 2 and "[room_not_found]" in unknown.stderr, unknown
    assert "(se pidió «ENG 999»; " in unknown.stderr, unknown.stderr
    assert "fleetwatch fleet --language es muestra las salas)" in unknown.stderr, unknown.stderr
    rows = [r["detail"] for r in await audit(stack.settings) if r["kind"] == "watch_silence"]
    assert [(r["action"], r["target"], r["uid"], r["reason"]) for r in rows] == [
        ("silence", "19012340205", os.getuid(), "projector swap"),
        ("unsilence", "19012340205", os.getuid(), "projector swap"),
    ]

    history = json.loads((await fleetwatch(env, "history", "--days", "1", "--json")).stdout)
    kinds = [e["kind"] for e in history["entries"]]
    assert {"proposal", "note", "first_read", "finding_opened", "digest"} <= set(kinds)
    assert history["unread"] == {}
    words = (await fleetwatch(env, "history", "--language", "es")).stdout
    assert "Propuesto por un operador: Iniciar la grabación: «Sandbox Pearl-2», canal 1 («Program»)" in words

    digest_now = await fleetwatch(env, "digest")
    assert digest_now.returncode == 0 and digest_now.stdout.startswith("Nothing changed since"), digest_now

    async with httpx2.AsyncClient() as http:
        wall = await http.get(page + "wall")
        foreign = await http.get(page + "wall", headers={"Host": "evil.example"})
    assert wall.status_code == 200 and "script" not in wall.headers["Content-Security-Policy"].replace(
        "'none'", ""
    )
    assert '<meta http-equiv="refresh" content="5">' in wall.text and "<form" not in wall.text
    assert "Switch port dead; IT ticket 4411" in wall.text and "“ENG 210”: offline" in wall.text
    assert foreign.status_code == 400

    assert await assistant.stop() == 0
    assert (await fleetwatch(env, "status", "--check")).returncode == 1
