"""The ``fleetwatch`` command as a real process, as an operator runs it, for tests."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from services.lab.server import LabHandle
from shared.epiphan.slots import SignIn, write_slot


def run_cli(*args: str, home: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI as a real process with ``FLEETWATCH_HOME=home`` and no other setting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env["FLEETWATCH_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "services.ctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


async def run_cli_async(*args: str, home: Path, timeout: float = 60) -> tuple[int, str, str]:
    """The CLI as a real process with ``FLEETWATCH_HOME=home`` and no other setting, awaited so
    an in-process lab keeps serving meanwhile."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env["FLEETWATCH_HOME"] = str(home)
    return await fleetwatch_async(env, *args, timeout=timeout)


async def fleetwatch_async(env: dict[str, str], *args: str, timeout: float = 60) -> tuple[int, str, str]:
    """``fleetwatch ARGS`` as a real process with exactly `env`: (exit status, stdout, stderr)."""
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
