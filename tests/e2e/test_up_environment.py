"""`fleetwatch up` on one account (issue 24 item 8): each service under supervisord runs with
exactly its own settings, a minimal ``PATH`` and ``LANG``, and nothing else of the caller's
shell; read from each running process's ``/proc/PID/environ``. The OS-user layout is
``tests/deploy/test_service_env.py``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.ctl.supervise import DEMO_MODEL_KEY, SERVICES
from services.lab.notices import slack_base_url, teams_webhook_url
from shared.config import SERVICE_LANG, SERVICE_PATH, service_settings
from tests.e2e.demo import demo_environment, fleetwatch

CANARY = "FW_CANARY_NOT_FOR_SERVICES"
ASSISTANT_ONLY = {
    "FLEETWATCH_ANTHROPIC_API_KEY",
    "FLEETWATCH_SLACK_BOT_TOKEN",
    "FLEETWATCH_TEAMS_WEBHOOK_URL",
}
SUPERVISOR_NAMES = {
    "SUPERVISOR_ENABLED",
    "SUPERVISOR_SERVER_URL",
    "SUPERVISOR_PROCESS_NAME",
    "SUPERVISOR_GROUP_NAME",
}


@pytest.fixture
def up_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = demo_environment(tmp_path / "home")
    lab = f"http://127.0.0.1:{env['FLEETWATCH_LAB_PORT']}"
    env.update(
        {
            CANARY: "the caller's shell only",
            "FLEETWATCH_ANTHROPIC_API_KEY": DEMO_MODEL_KEY,
            "FLEETWATCH_ANTHROPIC_BASE_URL": f"http://127.0.0.1:{env['FLEETWATCH_MODEL_STANDIN_PORT']}",
            "FLEETWATCH_SLACK_BOT_TOKEN": "xoxb-canary-slack-token",
            "FLEETWATCH_SLACK_CHANNEL": "#canary",
            "FLEETWATCH_SLACK_API_URL": slack_base_url(lab),
            "FLEETWATCH_TEAMS_WEBHOOK_URL": teams_webhook_url(lab) + "?canary=1",
            "FLEETWATCH_SANDBOX_TOKEN_FILE": str(tmp_path / "home" / "tokens" / "sandbox.json"),
        }
    )
    yield env
    fleetwatch(env, "down", timeout=60)


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(item.partition("=")[::2] for item in raw.split("\0") if item)


def test_each_service_under_up_holds_exactly_its_own_settings(up_env: dict[str, str]):
    started = fleetwatch(up_env, "up")
    assert started.returncode == 0, started.stdout + started.stderr
    config = Path(up_env["FLEETWATCH_HOME"]) / "run" / "supervisord.conf"
    for service in SERVICES:
        out = subprocess.run(
            [sys.executable, "-m", "supervisor.supervisorctl", "-c", str(config), "pid", service],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout.strip()
        assert out.isdigit() and int(out) > 0, (service, out)
        env = environ(int(out))
        settings = {name for name in env if name.startswith("FLEETWATCH_")}
        assert settings <= service_settings(service), (service, sorted(settings - service_settings(service)))
        assert set(env) - settings <= {"PATH", "LANG", "HOME", "PYTHONPATH", *SUPERVISOR_NAMES}, service
        assert (env["PATH"], env["LANG"], env["HOME"]) == (SERVICE_PATH, SERVICE_LANG, up_env["HOME"])
        assert (ASSISTANT_ONLY <= settings) == (service == "assistant"), service
        assert not ASSISTANT_ONLY & settings or service == "assistant", service
        assert ("FLEETWATCH_SANDBOX_TOKEN_FILE" in settings) == (service == "executor"), service
