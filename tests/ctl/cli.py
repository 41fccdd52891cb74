"""The ``fleetwatch`` command for tests: in this process (``main(argv)`` with exactly the given
environment and its output captured), or as a real process as an operator runs it.

In process is the default: a behaviour test pays no interpreter start (about 0.4 s each). One
real-process test per command family stays (``real_process=True``): the console script, its exit
status and its streams as a shell sees them.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from services.ctl.main import main
from services.lab.server import LabHandle
from shared.epiphan.slots import SignIn, write_slot

_ONE_AT_A_TIME = threading.Lock()
"""``os.environ``, ``sys.stdout`` and ``sys.stderr`` are the process's: one in-process run at a time."""


LOCALE = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The locale variables the command's language follows (`shared.language_tags`)."""
ERROR_LINE = re.compile(r"fleetwatch: (?P<message>.*) \[(?P<code>[a-z_]+)\]")
"""The command's error line (`shared.errors.error_line`): the message, then the code in brackets."""


def _error_line(err: str) -> re.Match[str] | None:
    lines = err.strip().splitlines()
    return ERROR_LINE.fullmatch(lines[-1]) if lines else None


def error_code(err: str) -> str | None:
    """The code of the error line ending `err` (the command's stderr), or None when its last line
    is no error line."""
    said = _error_line(err)
    return said["code"] if said else None


def error_message(err: str) -> str:
    """The message of the error line ending `err` (``""`` when its last line is no error line)."""
    said = _error_line(err)
    return said["message"] if said else ""


def home_env(home: Path) -> dict[str, str]:
    """This process's environment without any ``FLEETWATCH_*`` variable, plus ``FLEETWATCH_HOME``,
    in the C locale (the command follows the system locale's language: a Spanish machine must
    not turn an English test Spanish)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_") and k not in LOCALE}
    env.update(FLEETWATCH_HOME=str(home), LANG="C.UTF-8")
    return env


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def fleetwatch_in_process(env: Mapping[str, str], *args: str) -> tuple[int, str, str]:
    """``main(args)`` in this process with exactly `env` as ``os.environ``: (exit status, stdout,
    stderr). argparse's own exits (``--help``, a usage error) give their status."""
    out, err = io.StringIO(), io.StringIO()
    with _ONE_AT_A_TIME, _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def run_cli(
    *args: str, home: Path, timeout: float = 60, real_process: bool = False
) -> subprocess.CompletedProcess[str]:
    """The CLI with ``FLEETWATCH_HOME=home`` and no other setting (in this process unless
    `real_process`)."""
    env = home_env(home)
    if not real_process:
        code, out, err = fleetwatch_in_process(env, *args)
        return subprocess.CompletedProcess(["fleetwatch", *args], code, out, err)
    return subprocess.run(
        [sys.executable, "-m", "services.ctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


async def run_cli_async(
    *args: str, home: Path, timeout: float = 60, real_process: bool = False
) -> tuple[int, str, str]:
    """The CLI with ``FLEETWATCH_HOME=home`` and no other setting, awaited so an in-process lab
    keeps serving meanwhile (in this process, in a thread, unless `real_process`)."""
    return await fleetwatch_async(home_env(home), *args, timeout=timeout, real_process=real_process)


async def fleetwatch_async(
    env: dict[str, str], *args: str, timeout: float = 60, real_process: bool = False
) -> tuple[int, str, str]:
    """``fleetwatch ARGS`` with exactly `env`: (exit status, stdout, stderr); in this process
    (in a thread: ``main`` runs its own event loop) unless `real_process`."""
    if not real_process:
        async with asyncio.timeout(timeout):
            return await asyncio.to_thread(fleetwatch_in_process, env, *args)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.ctl.main",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def sign_in_home(home: Path, lab: LabHandle, team_name: str = "normal") -> None:
    """Put one of the lab's teams' tokens (the normal team's by default) in the read slot of
    `home`."""
    team = lab.teams[team_name]
    write_slot(
        home / "tokens" / "read.json",
        SignIn(access_token=team.token, server=lab.mcp_url, team_id=team.team_id, kind="lab"),
    )
