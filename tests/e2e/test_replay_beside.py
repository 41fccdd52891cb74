"""``fleetwatch up`` under real supervisord (issue 28 items 1, 2 and 11):

- a later failure (the assistant refuses to start) undoes the partial start: supervisord and
  every program stopped, the program and its log's last line named, in Spanish;
- a capture replayed beside a running demo with one command (``up --capture DIR
  --free-ports`` in its own home, the demo's lab and ask page holding their ports): the taken
  ports are replaced and said, the read sign-in is set, ``fleet`` reads the captured team with
  nothing but ``FLEETWATCH_HOME`` and shows the sandbox rooms a change may target under it;
  ``up`` again says it reused the running services (and the pages' real addresses), in
  Spanish; ``up`` without that capture is refused rather than reuse a lab serving another team.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.ctl import supervise
from shared.config import load_settings
from tests.e2e.demo import demo_environment, fleetwatch
from tests.support import policy_quiet_now

REPO = Path(__file__).resolve().parents[2]
CAPTURE = REPO / "tests" / "fixtures" / "captures" / "campus"
CAPTURED_ID = "19012340101"
"""A device of the committed campus capture (the lab's own campus team has other IDs)."""


def left_running(home: Path) -> list[str]:
    """The command lines of the processes still running with `home` in them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(home) in line:
                found.append(line)
    return found


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    yield home
    env = demo_environment(home)
    fleetwatch(env, "down", timeout=60)


def test_a_later_failure_stops_supervisord_and_every_program_and_says_why_in_spanish(home: Path) -> None:
    env = demo_environment(
        home,
        FLEETWATCH_ANTHROPIC_API_KEY="sk-not-local",
        FLEETWATCH_ANTHROPIC_BASE_URL="https://api.anthropic.example",
        FLEETWATCH_MODEL_LOCAL_ONLY="on",
    )
    done = fleetwatch(env, "up", "--language", "es", timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "la página de preguntas y la pantalla de pared no arrancó: " in done.stderr, done.stderr
    assert (
        "model_not_local" in done.stderr and f"(su registro: {home}/state/logs/assistant.log)" in done.stderr
    )
    settings = load_settings(env)
    assert supervise.running_pid(settings) is None
    assert not supervise.Layout.of(settings).config.exists()
    deadline = time.monotonic() + 20
    while left_running(home) and time.monotonic() < deadline:
        time.sleep(0.1)  # a real process exiting: a bounded poll
    assert left_running(home) == []


@pytest.mark.timeout(300)
def test_a_capture_replays_beside_a_running_demo_with_one_command(home: Path, tmp_path: Path) -> None:
    demo_home = tmp_path / "demo-home"
    (demo_home / "run").mkdir(parents=True)
    env = demo_environment(home)
    lab_port, ask_port = env["FLEETWATCH_LAB_PORT"], int(env["FLEETWATCH_ASK_PORT"])
    demo_lab = subprocess.Popen(  # the running demo's lab, on the port this home would use
        [
            sys.executable,
            "-m",
            "services.lab",
            "--port",
            lab_port,
            "--ready-file",
            str(demo_home / "run" / "lab.ready"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    demo_page = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # and its ask page
    try:
        demo_page.bind(("127.0.0.1", ask_port))
        demo_page.listen(1)
        deadline = time.monotonic() + 30
        while not (demo_home / "run" / "lab.ready").exists():
            assert time.monotonic() < deadline and demo_lab.poll() is None
            time.sleep(0.05)  # another process getting ready: a bounded poll

        refused = fleetwatch(env, "up", "--capture", str(CAPTURE))
        assert refused.returncode == 2
        assert (
            f"port {lab_port} (the lab, FLEETWATCH_LAB_PORT) is in use on 127.0.0.1 by the lab of the Fleetwatch at FLEETWATCH_HOME={demo_home}"
            in refused.stderr
        ), refused.stderr
        assert (
            f"port {ask_port} (the ask page and the wall, FLEETWATCH_ASK_PORT) is in use on 127.0.0.1"
            in refused.stderr
        )
        assert f"up --capture {CAPTURE} --free-ports" in refused.stderr
        assert supervise.running_pid(load_settings(env)) is None

        started = fleetwatch(env, "up", "--capture", str(CAPTURE), "--free-ports")
        assert started.returncode == 0, (started.stdout, started.stderr)
        chosen = dict(re.findall(r"(FLEETWATCH_\w+_PORT)=(\d+)", started.stdout.splitlines()[0]))
        assert started.stdout.startswith("Ports in use elsewhere were replaced by free ones: "), (
            started.stdout
        )
        assert set(chosen) == {"FLEETWATCH_LAB_PORT", "FLEETWATCH_ASK_PORT"}
        assert chosen["FLEETWATCH_LAB_PORT"] != lab_port and int(chosen["FLEETWATCH_ASK_PORT"]) != ask_port
        assert f"Ask page: http://localhost:{chosen['FLEETWATCH_ASK_PORT']}/" in started.stdout

        # Later commands need only the home: the read slot names the replaying lab.
        only_home = {k: v for k, v in env.items() if not k.startswith("FLEETWATCH_")}
        only_home["FLEETWATCH_HOME"] = str(home)
        fleet = fleetwatch(only_home, "fleet", "--json")
        assert fleet.returncode == 0, fleet.stderr
        assert CAPTURED_ID in {d["id"] for d in json.loads(fleet.stdout)["snapshot"]["devices"]}
        shown = fleetwatch(only_home, "fleet")
        assert "Rooms a change may target now: 4" in shown.stdout and "Sandbox Classroom" in shown.stdout, (
            shown.stdout
        )
        spanish = fleetwatch(only_home, "fleet", "--language", "es")
        assert "Salas que un cambio puede tocar ahora: 4" in spanish.stdout

        again = fleetwatch(env, "up", "--capture", str(CAPTURE), "--language", "es")
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith(
            "Fleetwatch ya estaba en marcha aquí: se reutilizaron los servicios en marcha, sin reiniciarlos."
        ), again.stdout
        assert f"http://localhost:{chosen['FLEETWATCH_ASK_PORT']}/" in again.stdout

        other_lab = fleetwatch(env, "up")
        assert (
            other_lab.returncode == 2 and "Fleetwatch already runs here with another lab" in other_lab.stderr
        )
    finally:
        demo_page.close()
        demo_lab.terminate()
        demo_lab.wait(timeout=30)
    assert demo_lab.returncode is not None and os.path.exists(CAPTURE)


@pytest.mark.timeout(300)  # two demos in a row under supervisord
def test_a_second_demo_says_it_reused_the_services_and_quiet_hours_say_the_digest_is_held(
    home: Path, tmp_path: Path
) -> None:
    env = demo_environment(home, FLEETWATCH_POLICY_DIR=str(policy_quiet_now(tmp_path / "policy")))
    first = fleetwatch(env, "demo", "--language", "es")
    assert first.returncode == 0, (first.stdout, first.stderr)
    assert "ya estaba en marcha" not in first.stdout
    assert "Salas que un cambio puede tocar ahora: 4" in first.stdout and "Sandbox Classroom" in first.stdout
    assert "Horas de silencio ahora: el primer resumen de la vigilancia se retiene hasta " in first.stdout, (
        first.stdout
    )
    assert "(horas de silencio en UTC)" in first.stdout
    second = fleetwatch(env, "demo")
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert second.stdout.startswith(
        "Fleetwatch was already running here: the running services were reused, not restarted.\n"
    ), second.stdout
    assert "Quiet hours now: the watch's first digest is held until " in second.stdout
    assert "readiness and the notice of the waiting change still post" in second.stdout
