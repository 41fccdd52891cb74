"""``fleetwatch up`` (and ``demo``) with a port already taken (issue 28 item 1): every port is
checked before anything starts; the taken one is named with its setting, the loopback and its
holder (this test's own process; another Fleetwatch's lab, with that Fleetwatch's home and the
command that stops it); nothing starts (no supervisord, no configuration); the exit status is 2;
the words are the operator's language. The ``lab`` command says the same of its one port. A
later failure undoing a partial start, and ``--free-ports``: ``tests/e2e/test_replay_beside.py``."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.ctl import supervise
from shared.config import load_settings
from tests.ctl.cli import fleetwatch_in_process
from tests.support import demo_ports, wait_until


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[dict[str, str], socket.socket]]:
    """A demo's environment on free ports whose lab port this process holds (listening)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(demo_ports(), FLEETWATCH_HOME=str(tmp_path / "home"))
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", int(env["FLEETWATCH_LAB_PORT"])))
    holder.listen(1)
    yield env, holder
    holder.close()


def nothing_started(env: dict[str, str]) -> None:
    settings = load_settings(env)
    layout = supervise.Layout.of(settings)
    assert supervise.running_pid(settings) is None
    assert not layout.config.exists() and not layout.pidfile.exists()
    assert not (settings.runtime_dir / "executor.sock").exists()


def test_up_with_the_lab_port_taken_names_it_and_its_holder_and_starts_nothing(held) -> None:
    env, _ = held
    port = env["FLEETWATCH_LAB_PORT"]
    began = time.monotonic()
    code, out, err = fleetwatch_in_process(env, "up")
    assert time.monotonic() - began < 10, "checked before anything started, not after a wait"
    assert code == 2 and out == "", (out, err)
    assert (
        f"port {port} (the lab, FLEETWATCH_LAB_PORT) is in use on 127.0.0.1 by process {os.getpid()} (" in err
    )
    assert f"of uid {os.getuid()}" in err
    assert "Nothing was started." in err and "FLEETWATCH_LAB_PORT=PORT" in err
    assert "up --free-ports" in err and "socket_in_use" in err
    nothing_started(env)


def test_the_same_refusal_is_spanish_for_a_spanish_operator_and_demo_says_it_too(held) -> None:
    env, _ = held
    port = env["FLEETWATCH_LAB_PORT"]
    for args in (("up", "--language", "es"), ("demo", "--language", "es")):
        code, out, err = fleetwatch_in_process(env, *args)
        assert code == 2 and out == "", (args, out, err)
        assert (
            f"el puerto {port} (el laboratorio, FLEETWATCH_LAB_PORT) está en uso en 127.0.0.1 por el proceso {os.getpid()}"
            in err
        )
        assert "No se inició nada." in err and f"{args[0]} --free-ports --language es" in err
        for english in ("is in use", "Nothing was started", "the lab,", "not ready after"):
            assert english not in err, (english, err)
    nothing_started(env)


def test_a_page_port_taken_on_ipv6_loopback_only_is_named_with_that_address(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(demo_ports(), FLEETWATCH_HOME=str(tmp_path / "home"))
    port = int(env["FLEETWATCH_ASK_PORT"])
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as squatter:
        squatter.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            squatter.bind(("::1", port))
        except OSError:
            pytest.skip("no IPv6 loopback here")
        squatter.listen(1)
        code, _, err = fleetwatch_in_process(env, "up")
    assert code == 2
    assert f"port {port} (the ask page and the wall, FLEETWATCH_ASK_PORT) is in use on [::1]" in err
    nothing_started(env)


async def test_a_port_held_by_another_fleetwatchs_lab_names_that_home_and_how_to_stop_it(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other-home"
    (other / "run").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(demo_ports(), FLEETWATCH_HOME=str(tmp_path / "home"))
    port = env["FLEETWATCH_LAB_PORT"]
    ready = other / "run" / "lab.ready"
    lab = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.lab",
        "--port",
        port,
        "--ready-file",
        str(ready),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await wait_until(lambda: ready.exists() or None, what="the other lab", process=lab)
        code, _, err = await asyncio.to_thread(fleetwatch_in_process, env, "up")
        assert code == 2
        assert (
            f"port {port} (the lab, FLEETWATCH_LAB_PORT) is in use on 127.0.0.1 by the lab of the Fleetwatch at "
            f"FLEETWATCH_HOME={other} (process {lab.pid})" in err
        ), err
        assert (
            f"To use that Fleetwatch, give your commands its FLEETWATCH_HOME; or stop it (FLEETWATCH_HOME={other} fleetwatch down)"
            in err
        )
        code, _, err = await asyncio.to_thread(fleetwatch_in_process, env, "up", "--language", "es")
        assert f"por el laboratorio del Fleetwatch en FLEETWATCH_HOME={other} (proceso {lab.pid})" in err, err
        assert (
            f"Para usar ese Fleetwatch, dé su FLEETWATCH_HOME a sus comandos; o deténgalo (FLEETWATCH_HOME={other} fleetwatch down --language es)"
            in err
        )
        assert json.loads(ready.read_text())["pid"] == lab.pid
    finally:
        lab.terminate()
        await lab.wait()
    nothing_started(env)


def test_fleetwatch_lab_with_its_port_taken_names_it_and_its_holder_in_the_operators_language(held) -> None:
    env, _ = held
    port = env["FLEETWATCH_LAB_PORT"]
    code, out, err = fleetwatch_in_process(env, "lab", "--scenario", "campus", "--port", port)
    assert code == 2 and out == "", (out, err)
    assert f"port {port} (the lab, --port) is in use on 127.0.0.1 by process {os.getpid()} (" in err, err
    assert "Nothing was started." in err and "fleetwatch lab --scenario campus --port 0" in err
    code, _, err = fleetwatch_in_process({**env, "FLEETWATCH_LANGUAGE": "es"}, "lab", f"--port={port}")
    assert code == 2
    assert f"el puerto {port} (el laboratorio, --port) está en uso en 127.0.0.1" in err, err
    assert "No se inició nada." in err and "fleetwatch lab --port 0" in err


SECRET = "lab-demo-secret-key-0042"


async def test_holders_are_named_by_what_they_are_never_by_a_command_line_each_port_on_its_own_line(
    tmp_path: Path,
) -> None:
    """The walk's clash (issue 28 walk item 5): another Fleetwatch's scripted model holds the model
    port (started as supervisord starts it: ``--key`` on its command line, its home in its
    environment) and a stranger whose arguments carry a key holds the lab port. The message names
    the model as that Fleetwatch's and the stranger by its process name and account; neither
    key appears; a line per taken port; the placeholder is the reader's word."""
    from services.ctl.supervise import program_environment

    other = tmp_path / "other-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(demo_ports(), FLEETWATCH_HOME=str(tmp_path / "home"))
    lab_port, model_port = env["FLEETWATCH_LAB_PORT"], env["FLEETWATCH_MODEL_STANDIN_PORT"]
    other_settings = load_settings({**env, "FLEETWATCH_HOME": str(other)})
    model_env = program_environment(other_settings, env, "model", None)
    model = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "services.lab.model_standin", "--script", "demo", "--port", model_port, "--key", SECRET),
        env={**model_env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    stranger = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(1);"
        " print('ready', flush=True); sys.stdin.read()",
        lab_port,
        "--key",
        SECRET,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert stranger.stdout is not None
        assert (await stranger.stdout.readline()).strip() == b"ready"

        def model_listens() -> bool | None:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", int(model_port))) == 0 or None

        await wait_until(model_listens, what="the other Fleetwatch's model", process=model)
        for language, words in (
            (
                "en",
                (
                    f"port {model_port} (the lab's demo model, FLEETWATCH_MODEL_STANDIN_PORT) is in use on "
                    f"127.0.0.1 by the lab's demo model of the Fleetwatch at FLEETWATCH_HOME={other} "
                    f"(process {model.pid})",
                    f"port {lab_port} (the lab, FLEETWATCH_LAB_PORT) is in use on 127.0.0.1 by process "
                    f"{stranger.pid} (python",
                    "FLEETWATCH_LAB_PORT=PORT, FLEETWATCH_MODEL_STANDIN_PORT=PORT",
                ),
            ),
            (
                "es",
                (
                    f"por el modelo de demostración del laboratorio del Fleetwatch en FLEETWATCH_HOME={other} "
                    f"(proceso {model.pid})",
                    f"por el proceso {stranger.pid} (python",
                    "FLEETWATCH_LAB_PORT=PUERTO, FLEETWATCH_MODEL_STANDIN_PORT=PUERTO",
                ),
            ),
        ):
            code, out, err = await asyncio.to_thread(fleetwatch_in_process, env, "up", "--language", language)
            assert code == 2 and out == "", (out, err)
            assert SECRET not in err and "--key" not in err and "--script" not in err, err
            for said in words:
                assert said in err, (said, err)
            lines = err.strip().splitlines()
            assert len(lines) == 3, lines  # a line per taken port, then what to do
            assert all(len(line) < 300 for line in lines[:2]), lines
            assert str(model_port) in lines[0] + lines[1] and str(lab_port) in lines[0] + lines[1]
            assert lines[2].endswith("[socket_in_use]")
            assert "PORT" not in err.replace("_PORT", "") or language == "en", err
        nothing_started(env)
    finally:
        model.terminate()
        assert stranger.stdin is not None
        stranger.stdin.close()
        await asyncio.gather(model.wait(), stranger.wait())


def test_every_program_of_a_home_carries_that_home_in_its_environment(tmp_path: Path) -> None:
    """What lets a later ``up`` name the lab and the model as this Fleetwatch's (walk item 5)."""
    from services.ctl.supervise import PROGRAMS, program_environment

    settings = load_settings({"FLEETWATCH_HOME": str(tmp_path / "h")})
    for program in PROGRAMS:
        assert program_environment(settings, {}, program, None)["FLEETWATCH_HOME"] == str(tmp_path / "h")
