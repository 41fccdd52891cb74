"""Each service under `fleetwatch up` (root, deploy/install.sh's users) runs with exactly its own
environment, and comes back when anyone but `fleetwatch down` stops it (issue 24, items 8, 9).

Real processes: install.sh in a scratch root, `fleetwatch up` as root on the lab with the model
key, Slack and Teams set and a canary in the caller's environment; each running process's
``/proc/PID/environ`` read as it is; a service SIGTERMed by a process with its own credentials.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from services.ctl.supervise import DEMO_MODEL_KEY, SOCKET_NAMES, socket_ready
from services.lab.notices import slack_base_url, teams_webhook_url
from shared.config import SERVICE_LANG, SERVICE_PATH, service_settings
from tests.deploy.cli import doctor
from tests.deploy.supervised import PROGRAMS, Running, as_process, gone, supervised
from tests.deploy.systemd_units import can_make_users
from tests.support import wait_until

pytestmark = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")

CANARY = "FW_CANARY_NOT_FOR_SERVICES"
SLACK_TOKEN = "xoxb-canary-slack-token"
SUPERVISOR_NAMES = {
    "SUPERVISOR_ENABLED",
    "SUPERVISOR_SERVER_URL",
    "SUPERVISOR_PROCESS_NAME",
    "SUPERVISOR_GROUP_NAME",
}
ASSISTANT_ONLY = {
    "FLEETWATCH_ANTHROPIC_API_KEY",
    "FLEETWATCH_SLACK_BOT_TOKEN",
    "FLEETWATCH_TEAMS_WEBHOOK_URL",
}


def secrets_and_canary(env: Mapping[str, str]) -> dict[str, str]:
    lab = f"http://127.0.0.1:{env['FLEETWATCH_LAB_PORT']}"
    return {
        CANARY: "root's shell only",
        "FLEETWATCH_ANTHROPIC_API_KEY": DEMO_MODEL_KEY,
        "FLEETWATCH_ANTHROPIC_BASE_URL": f"http://127.0.0.1:{env['FLEETWATCH_MODEL_STANDIN_PORT']}",
        "FLEETWATCH_SLACK_BOT_TOKEN": SLACK_TOKEN,
        "FLEETWATCH_SLACK_CHANNEL": "#canary",
        "FLEETWATCH_SLACK_API_URL": slack_base_url(lab),
        "FLEETWATCH_TEAMS_WEBHOOK_URL": teams_webhook_url(lab) + "?canary=1",
    }


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with supervised(secrets_and_canary) as up:
        yield up


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(item.partition("=")[::2] for item in raw.split("\0") if item)


def sigterm_as_its_own_user(running: Running, pid: int) -> None:
    """SIGTERM `pid` from a process with its uid, gid and groups (the service's own user)."""
    code = f"import os, sys; os.kill(int(sys.argv[1]), {int(signal.SIGTERM)})"
    killed = as_process(pid, running.python, code, str(pid), env=running.env)
    assert killed.returncode == 0, killed.stderr


@pytest.mark.parametrize("service", PROGRAMS)
def test_each_service_holds_exactly_its_own_settings_and_nothing_of_the_callers(
    running: Running, service: str
):
    env = environ(running.pid(service))
    settings = {name for name in env if name.startswith("FLEETWATCH_")}
    others = set(env) - settings
    assert settings <= service_settings(service), sorted(settings - service_settings(service))
    assert others <= {"PATH", "LANG", "HOME", "PYTHONPATH", *SUPERVISOR_NAMES}, sorted(others)
    assert (env["PATH"], env["LANG"], env["HOME"]) == (SERVICE_PATH, SERVICE_LANG, "/nonexistent")
    assert ("FLEETWATCH_SANDBOX_TOKEN_FILE" in settings) == (service == "executor")
    assert (ASSISTANT_ONLY <= settings) == (service == "assistant")
    assert not ASSISTANT_ONLY & settings or service == "assistant"
    if service == "assistant":
        assert env["FLEETWATCH_SLACK_BOT_TOKEN"] == SLACK_TOKEN
    # every setting the caller gave that the service reads reaches it (its unit's own folders win)
    given = {k for k in running.env if k.startswith("FLEETWATCH_")} | set(secrets_and_canary(running.env)) - {
        CANARY
    }
    assert (given & service_settings(service)) - {"FLEETWATCH_RUNTIME_DIR"} <= settings


def test_supervisord_itself_holds_no_setting_and_nothing_of_the_callers(running: Running):
    pid = int(running.path(f"/run/{running.name}/supervisord.pid").read_text())
    env = environ(pid)
    assert set(env) <= {"PATH", "LANG", "PYTHONPATH"}, sorted(env)


async def test_a_service_its_own_user_stops_comes_back_with_a_new_pid(running: Running):
    for service in PROGRAMS:  # each SIGTERMed by a process with its own uid, gid and groups
        pid = running.pid(service)
        sigterm_as_its_own_user(running, pid)

        def back(old: int = pid, name: str = service) -> int | None:
            if not gone(old):
                return None
            now = running.running_pid(name)
            return now if now not in (None, old) else None

        new = await wait_until(back, what=f"{service} started again", seconds=60)
        assert new != pid
        socket = running.path(f"/run/{running.name}-{PROGRAMS[service]}/{SOCKET_NAMES[service]}")
        await wait_until(lambda path=socket: socket_ready(path), what=f"{service} serving again", seconds=60)
    run = await doctor(running.env)  # each answers on its socket again
    assert run.status == 0 and not run.failures(), run.failures()
    assert {run.check(f"service {s}")["level"] for s in PROGRAMS} <= {"OK", "INFO"}


async def test_a_service_that_then_refuses_to_start_ends_down_and_status_and_doctor_say_so(running: Running):
    """Last in this file: it leaves the executor down. Its policy made invalid, a SIGTERM from
    its own user; it is started again, refuses (exit 2) each time, and supervisord gives up:
    no restart loop hiding the reason."""
    policy = running.path(f"/etc/{running.name}/policy/policy.yaml")
    policy.write_text("limits: [not a policy\n")
    pid = running.pid("executor")
    sigterm_as_its_own_user(running, pid)

    def status_says_down() -> str | None:
        out = running.fleetwatch("status").stdout
        line = next((line for line in out.splitlines() if line.strip().startswith("executor")), "")
        return line if "could not start" in line else None

    line = await wait_until(status_says_down, what="status saying the executor could not start", seconds=90)
    assert "supervisord gave up" in line
    assert running.running_pid("executor") is None
    log = running.path(f"/var/lib/{running.name}/logs/executor.log").read_text()
    assert "[policy_invalid]" in log or "[config_invalid]" in log, log[-800:]
    run = await doctor(running.env)
    assert run.check("service executor")["level"] == "FAIL" and run.status != 0


def test_down_removes_the_rendered_configuration_that_held_the_assistants_secrets(running: Running):
    config = running.path(f"/run/{running.name}/supervisord.conf")
    assert SLACK_TOKEN in config.read_text() and config.stat().st_mode & 0o077 == 0
    stopped = running.fleetwatch("down")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not config.exists()
