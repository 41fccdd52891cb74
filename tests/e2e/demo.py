"""A whole Fleetwatch on the lab as a newcomer runs it (``fleetwatch demo``, real supervisord), on
free ports in its own home: the environment and the ``fleetwatch`` command, run as a process.
Shared by the main job's, the demo-again and the watch's demo tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import demo_ports


def demo_environment(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``FLEETWATCH_*`` variable, plus a home, free
    ports for the lab, the scripted model and both pages, and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(demo_ports(), FLEETWATCH_HOME=str(home))
    env.update(extra)
    return env


@pytest.fixture
def demo_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment for a whole Fleetwatch on the lab, on free ports, in its own home; after
    the test, supervisord is shut down whatever happened."""
    env = demo_environment(tmp_path / "home")
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
