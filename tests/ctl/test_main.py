"""The ``fleetwatch`` command as a person meets it: the lab's own options, a reader that stops
early, a service that is not running, a misspelt setting, the lab port moving the MCP URL."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from shared.config import load_settings
from tests.ctl.cli import error_code, error_message
from tests.procs import base_env
from tests.support import free_port, wait_until

COMMAND = (sys.executable, "-m", "services.ctl.main")


async def fleetwatch(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *COMMAND, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_fleetwatch_lab_takes_every_option_of_the_lab_and_its_help(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home")
    code, out, _ = await fleetwatch(env, "lab", "--help")
    assert code == 0 and out.startswith("usage: fleetwatch lab")
    for option in (
        "--scenario",
        "--devices",
        "--seed",
        "--port",
        "--older-shapes",
        "--anonymous",
        "--ready-file",
    ):
        assert option in out
    port, ready = free_port(), tmp_path / "lab.json"
    proc = await asyncio.create_subprocess_exec(
        *COMMAND,
        "lab",
        "--port",
        str(port),
        "--ready-file",
        str(ready),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await wait_until(ready.exists, what="the lab's ready file", seconds=60, process=proc)
        assert json.loads(ready.read_text())["mcp_url"] == f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)


async def test_output_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes a byte, as `| head -0`
    try:
        proc = await asyncio.create_subprocess_exec(
            *COMMAND,
            "--help",
            env=base_env(tmp_path / "home"),
            stdout=write_end,
            stderr=asyncio.subprocess.PIPE,
        )
    finally:
        os.close(write_end)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0 and err.decode() == ""


async def test_with_nothing_running_a_command_says_where_it_looked_and_how_to_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, out, err = await fleetwatch(base_env(home), "pending", "list")
    assert code == 2 and out == ""
    assert error_code(err) == "service_unavailable" and error_message(err).startswith(
        f"Fleetwatch is not running here (FLEETWATCH_HOME={home}): start it with `FLEETWATCH_HOME={home} fleetwatch up`"
    )


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            "Another Fleetwatch runs on this machine with FLEETWATCH_HOME=%s (the lab on port %d): to follow it, set FLEETWATCH_HOME=%s.",
        ),
        (
            "es",
            "Otro Fleetwatch está en ejecución en esta máquina con FLEETWATCH_HOME=%s (el laboratorio en el puerto %d): para seguirlo, defina FLEETWATCH_HOME=%s.",
        ),
    ],
)
async def test_with_a_fleetwatch_running_in_another_home_a_command_names_that_home(
    tmp_path: Path, language: str, said: str
) -> None:
    other, port = tmp_path / "other-home", free_port()
    ready = other / "run" / "lab.json"
    ready.parent.mkdir(parents=True)
    lab = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.lab", "--port", str(port), "--ready-file", str(ready),
        env=base_env(other), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await wait_until(ready.exists, what="the other home's lab ready", process=lab)
        # the README's follow-up block in another home, with the demo's ports still exported
        env = base_env(tmp_path / "mine", FLEETWATCH_LAB_PORT=str(port))
        code, out, err = await fleetwatch(env, "pending", "list", "--language", language)
        assert code == 2 and error_code(err) == "service_unavailable"
        assert said % (other, port, other) in error_message(err), err
    finally:
        lab.terminate()
        await lab.wait()


async def test_a_misspelt_setting_names_the_closest_one(tmp_path: Path) -> None:
    code, _, err = await fleetwatch(base_env(tmp_path / "home", FLEETWATCH_APROVE_PORT="8767"), "status")
    assert code == 2
    assert "FLEETWATCH_APROVE_PORT: unknown setting; did you mean FLEETWATCH_APPROVE_PORT?" in err


def test_the_lab_port_moves_the_default_mcp_url_so_up_stays_on_the_lab() -> None:
    assert load_settings({"FLEETWATCH_LAB_PORT": "18770"}).epiphan_mcp_url == "http://127.0.0.1:18770/mcp"
    assert load_settings({}).epiphan_mcp_url == "http://127.0.0.1:8770/mcp"


STATUS_HELP_ES = (
    "opciones:",
    "mostrar este mensaje de ayuda y salir",
    "imprimir JSON en lugar de texto (horas en UTC)",
    "Ningún comando aprueba un cambio",
)


async def test_help_speaks_spanish_with_fleetwatch_language_es_or_language_es(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home", FLEETWATCH_LANGUAGE="es")
    code, out, _ = await fleetwatch(env, "status", "--help")
    assert code == 0 and out.startswith("uso: fleetwatch status")
    flat = " ".join(out.split())
    assert [s for s in STATUS_HELP_ES if s not in flat] == [], out
    code, out, _ = await fleetwatch(env, "--help")
    assert code == 0 and "Fleetwatch: un asistente para flotas de Epiphan Pearl" in " ".join(out.split())
    # propose --help lists the tools after its words, and keeps the Spanish epilog.
    code, out, _ = await fleetwatch(env, "propose", "--help")
    assert code == 0 and "por qué, con palabras que entienda" in " ".join(out.split())
    assert "Ningún comando aprueba un cambio" in out and "batch_recording" in out
    english = base_env(tmp_path / "home")
    code, out, _ = await fleetwatch(english, "pending", "list", "--language", "es", "--help")
    assert code == 0 and out.startswith("uso: fleetwatch pending list")
    code, out, _ = await fleetwatch(english, "pending", "list", "--help")
    assert code == 0 and out.startswith("usage: fleetwatch pending list") and "options:" in out


def test_every_help_text_of_the_tree_has_its_spanish() -> None:
    from services.ctl.main import build_parser, said_in
    from shared.text.catalogue import translate

    def texts(parser: argparse.ArgumentParser) -> list[str]:
        out = [t for t in (parser.description, parser.epilog) if t]
        for action in parser._actions:
            if action.help and action.help != argparse.SUPPRESS:
                out.append(action.help)
            if isinstance(action, argparse._SubParsersAction):
                out += [c.help for c in action._choices_actions if c.help]
                for child in action.choices.values():
                    out += texts(child)
        return out

    with said_in("en"):
        english = texts(build_parser())
    missing = sorted({t for t in english if translate("es", t) == t})
    assert missing == []
    with said_in("es"):
        spanish = texts(build_parser())
    assert len(spanish) == len(english) and not set(spanish) & set(english)


ARGPARSE_PRIVATE = re.compile(
    r"\._(?:actions|action_groups|choices_actions|option_string_actions)\b|\.error = "
)
"""Reaching into argparse's private attributes, or replacing its complaint method."""


def test_argparse_speaks_the_catalogue_through_gettext_without_its_private_attributes(capsys) -> None:
    from services.ctl.main import build_parser, said_in

    found = [
        f"{path.name}: {line.strip()}"
        for path in sorted((Path(__file__).parents[2] / "services" / "ctl").glob("*.py"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if ARGPARSE_PRIVATE.search(line)
    ]
    assert found == []
    assert ARGPARSE_PRIVATE.search("for group in one._action_groups:")
    with said_in("es"):
        assert build_parser("status").format_help().startswith("uso: fleetwatch")
        with pytest.raises(SystemExit):
            build_parser("audit").parse_args(["audit", "tail", "-n", "x"])
    assert "argumento -n: valor int no válido: 'x'" in capsys.readouterr().err
    with said_in("en"):
        assert build_parser("status").format_help().startswith("usage: fleetwatch")
