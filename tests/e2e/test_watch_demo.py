"""The watch as a newcomer sees it: ``fleetwatch up`` on the lab under real supervisord with a
heartbeat every 5 seconds; the digests, readiness and notices arrive at the lab's Slack and
Teams stand-ins (``GET /_lab/notices``) with no account anywhere.

Shown: ``status --check`` exits 0 within 15 s; the first digest names the offline rooms; a room
rebooted through the lab's MCP with the normal team's token appears in a new digest within three
beats, and its return in a later one; nothing is posted while nothing changes; a readiness post
for a room whose class starts within 30 minutes; a queued proposal gives a notice with the
page's address and no approval link.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest

from tests.e2e.demo import demo_environment, fleetwatch
from tests.lab.helpers import data_of, open_session
from tests.support import policy_awake_now, wait_until

HEARTBEAT = 5
ENG220 = "19012340205"
"""ENG 220: online, idle, no class today."""
SANDBOX_CLASSROOM = "29088800004"


@pytest.fixture
def watch_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = demo_environment(
        tmp_path / "home",
        FLEETWATCH_HEARTBEAT_SECONDS=str(HEARTBEAT),
        FLEETWATCH_POLICY_DIR=str(policy_awake_now(tmp_path / "policy")),
    )
    yield env
    fleetwatch(env, "down", timeout=60)


async def poll(what: str, seconds: float, probe: Callable[[], object]) -> object:
    """`probe()` until it is truthy, within `seconds` (`tests.support.wait_until`: polling real
    external processes, the lab and the services under supervisord, with a hard bound)."""
    return await wait_until(probe, what=what, seconds=seconds)


async def test_the_watch_on_the_demo_posts_digests_readiness_and_notices_to_the_labs_slack_and_teams(
    watch_env,
):
    env = watch_env
    started = fleetwatch(env, "up", timeout=240)
    assert started.returncode == 0, started.stdout + started.stderr
    up_at = time.monotonic()
    lab_url = json.loads((Path(env["FLEETWATCH_HOME"]) / "run" / "lab.ready").read_text())["url"]
    with httpx2.Client(base_url=lab_url, timeout=10) as http:
        await watch_the_demo(env, http, lab_url, up_at)
    stopped = fleetwatch(env, "down", timeout=90)
    assert stopped.returncode == 0


async def watch_the_demo(env: dict[str, str], http: httpx2.Client, lab_url: str, up_at: float) -> None:
    """The must-show steps against a running demo (see the module docstring)."""

    def posted(destination: str = "slack") -> list[str]:
        notices = http.get("/_lab/notices").json()["notices"]
        return [n["text"] for n in notices if n["destination"] == destination]

    def digests() -> list[str]:
        return [t for t in posted() if t.startswith("Fleetwatch")]

    await poll("status --check exits 0", 15, lambda: fleetwatch(env, "status", "--check").returncode == 0)
    assert time.monotonic() - up_at <= 15

    # status asks supervisord over its socket (the standard library's XML-RPC client); a service
    # whose socket answers is RUNNING for supervisord only once its startsecs (2 s) have passed.
    def running() -> list[str]:
        shown = fleetwatch(env, "status")
        assert shown.returncode == 0, shown.stderr
        assert "Processes (supervisord):" in shown.stdout
        return [
            n for n in ("executor", "approval_web", "assistant") if f"  {n:<14}running since" in shown.stdout
        ]

    await poll(
        "the three services running", 15, lambda: running() == ["executor", "approval_web", "assistant"]
    )

    first = (await poll("the first digest", 15, digests))[0]
    assert first.startswith("Fleetwatch is now watching 30 rooms (28 online).")
    assert "- “ENG 210”: offline" in first and "- “LIB Room 2”: offline" in first
    assert any(t.startswith("Fleetwatch is now watching") for t in posted("teams"))
    readiness = [t for t in posted() if t.startswith("Readiness:")]
    assert (
        readiness and '- “ENG 101 Auditorium”: "ENG 100 Engineering Design (livestream)" at ' in readiness[0]
    )
    assert "(in 2" in readiness[0] and "Ready" in readiness[0]

    normal = next(t for t in http.get("/_lab/state").json()["teams"] if t["name"] == "normal")

    async def reboot() -> None:
        async with open_session(f"{lab_url}/mcp", normal["token"]) as session:
            assert data_of(await session.call_tool("batch_reboot", {"device_ids": [ENG220]})) == {}

    await reboot()
    offline = await poll(
        "a digest naming the rebooted room",
        3 * HEARTBEAT,
        lambda: [d for d in digests() if "- “ENG 220”: offline" in d],
    )
    assert offline[0].splitlines()[1:3] == ["Fix soon", "- “ENG 220”: offline"]

    count = len(posted())
    beats = [json.loads(fleetwatch(env, "status", "--check", "--json").stdout)["last_beat_at"]]
    for _ in range(2):
        beats.append(
            await poll(
                "another heartbeat",
                3 * HEARTBEAT,
                lambda: (
                    (b := json.loads(fleetwatch(env, "status", "--check", "--json").stdout)["last_beat_at"])
                    != beats[-1]
                    and b
                ),
            )
        )
    assert len(posted()) == count, "nothing is posted while nothing changes"

    http.post("/_lab/clock", json={"advance_seconds": 91})
    back = await poll(
        "a digest with the room back",
        3 * HEARTBEAT,
        lambda: [d for d in digests() if "- “ENG 220”: offline" in d and "Resolved" in d],
    )
    lines = back[0].splitlines()
    assert lines[lines.index("Resolved") + 1] == "- “ENG 220”: offline"

    drafted = fleetwatch(
        env,
        "propose",
        "batch_recording",
        "--arg",
        "action=start",
        "--arg",
        f'device_ids=["{SANDBOX_CLASSROOM}-1"]',
        "--reason",
        "The class starts soon.",
    )
    assert drafted.returncode == 0, drafted.stderr
    page = f"http://127.0.0.1:{env['FLEETWATCH_APPROVE_PORT']}/"
    notice = (
        await poll(
            "a notice", 3 * HEARTBEAT, lambda: [t for t in posted() if t.startswith("A change is waiting")]
        )
    )[0]
    assert notice.splitlines()[1] == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)."
    assert f"on the Fleetwatch machine: {page}" in notice
    assert "/approve" not in notice and "token" not in notice.lower() and "cannot approve anything" in notice
    teams_notice = await poll(
        "the notice in Teams", 3 * HEARTBEAT, lambda: [t for t in posted("teams") if t.startswith("A change")]
    )
    card = next(
        n["body"]
        for n in http.get("/_lab/notices").json()["notices"]
        if n["destination"] == "teams" and n["text"] == teams_notice[0]
    )
    assert "actions" not in json.dumps(card) and "selectAction" not in json.dumps(card)
