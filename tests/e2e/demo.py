"""A whole Fleetwatch on the lab as a newcomer runs it (``fleetwatch demo``, real supervisord), on
free ports in its own home: the environment and the ``fleetwatch`` command, run as a process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def demo_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment for a whole Fleetwatch on the lab, on free ports, in its own home; after
    the test, supervisord is shut down whatever happened."""
    lab = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(
        FLEETWATCH_HOME=str(tmp_path / "home"),
        FLEETWATCH_LAB_PORT=str(lab),
        FLEETWATCH_EPIPHAN_MCP_URL=f"http://127.0.0.1:{lab}/mcp",
        FLEETWATCH_MODEL_STANDIN_PORT=str(free_port()),
        FLEETWATCH_APPROVE_PORT=str(free_port()),
        FLEETWATCH_ASK_PORT=str(free_port()),
    )
    yield env
    fleetwatch(env, "down", timeout=60)


def fleetwatch(env: dict[str, str], *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run ``fleetwatch ARGS`` as a process in `env`; its completed process (never raises for
    a non-zero exit)."""
    return subprocess.run(
        [sys.executable, "-m", "services.ctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
