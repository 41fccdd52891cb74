"""``fleetwatch up`` / ``down``: the three services (and, in demo mode, the lab) under supervisord."""

from __future__ import annotations

import argparse
import json
import os

import httpx2

from services.ctl import supervise
from shared.config import Settings, load_settings
from shared.slots import SignIn, write_slot

DEMO_MODEL_KEY = "lab-demo-model-key"
"""The key the lab's scripted model accepts in demo mode. Not a secret: it opens nothing real."""


def demo_environment(settings: Settings, scenario: str) -> dict[str, str]:
    """The environment the services run in for the demo: the fence set to the lab's sandbox
    team and, when no model key is set, the lab's scripted model behind the real SDK."""
    from services.lab.scenario import load_scenario

    env = dict(os.environ)
    if not settings.fence_configured:
        sandbox = load_scenario(scenario).teams["sandbox"]
        env["FLEETWATCH_WRITE_DEVICE_IDS"] = ",".join(d.id for _, d in sandbox.devices())
    if settings.anthropic_api_key is None:
        env["FLEETWATCH_ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{settings.model_standin_port}"
        env["FLEETWATCH_ANTHROPIC_API_KEY"] = DEMO_MODEL_KEY
    return env


async def lab_state(lab_url: str) -> dict:
    """``GET /_lab/state`` (loopback only): the teams with their demo tokens and device IDs."""
    async with httpx2.AsyncClient(timeout=10) as client:
        response = await client.get(f"{lab_url}/_lab/state")
        response.raise_for_status()
        return response.json()


async def up(args: argparse.Namespace) -> int:
    """Start everything; print where the approval page is and where its secret is."""
    settings = load_settings()
    demo = supervise.is_demo(settings)
    env = demo_environment(settings, args.scenario) if demo else dict(os.environ)
    layout = await supervise.start_daemon(settings, env, scenario=args.scenario)
    if demo:

        async def lab_ready() -> bool:
            return layout.lab_ready.exists()

        await supervise.wait_until(lab_ready, "the lab", supervise.START_TIMEOUT_SECONDS)
        url = json.loads(layout.lab_ready.read_text())["url"]
        place_demo_sign_ins(settings, url, await lab_state(url))
    sockets = {
        "executor": settings.executor_socket,
        "approval_web": settings.approval_socket,
        "assistant": settings.assistant_socket,
    }
    for name in supervise.SERVICES:
        await supervise.start_service(settings, name, sockets[name])
    print(f"Fleetwatch is up{' on the lab (a simulated Epiphan Edge)' if demo else ''}.")
    print(f"Approval page: http://127.0.0.1:{settings.approve_port}/")
    print(f"Its secret is in {settings.approve_secret_file} (asked once per browser session).")
    print(f"Logs: {layout.logs}")
    return 0


def place_demo_sign_ins(settings: Settings, lab_url: str, state: dict) -> None:
    """Write the lab's demo tokens: the normal team in the read slot, the sandbox team in the
    sandbox slot."""
    teams = {team["name"]: team for team in state["teams"]}
    for slot, name in ((settings.read_token_file, "normal"), (settings.sandbox_token_file, "sandbox")):
        team = teams[name]
        write_slot(
            slot,
            SignIn(access_token=team["token"], server=f"{lab_url}/mcp", team_id=team["team_id"], kind="lab"),
        )


async def down(args: argparse.Namespace) -> int:
    """Stop supervisord and everything under it; wait until it has exited."""
    settings = load_settings()
    stopped = await supervise.stop(settings)
    print("Fleetwatch stopped." if stopped else "Fleetwatch was not running.")
    return 0
