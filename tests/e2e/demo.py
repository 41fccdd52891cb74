"""A whole Fleetwatch on the lab under real supervisord, for the tests that run ``fleetwatch``
as a newcomer does: free ports, its own home, and the command as a process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_environment(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``FLEETWATCH_*`` variable, plus a home and free
    ports for the lab, the scripted model and both pages, and `extra`."""
    lab = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(
        FLEETWATCH_HOME=str(home),
        FLEETWATCH_LAB_PORT=str(lab),
        FLEETWATCH_EPIPHAN_MCP_URL=f"http://127.0.0.1:{lab}/mcp",
        FLEETWATCH_MODEL_STANDIN_PORT=str(free_port()),
        FLEETWATCH_APPROVE_PORT=str(free_port()),
        FLEETWATCH_ASK_PORT=str(free_port()),
    )
    env.update(extra)
    return env


def fleetwatch(env: dict[str, str], *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``fleetwatch ARGS`` as a process with `env`; its output as text."""
    return subprocess.run(
        [sys.executable, "-m", "services.ctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
