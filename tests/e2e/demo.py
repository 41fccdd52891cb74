"""A whole Fleetwatch on the lab under real supervisord, for the tests that run ``fleetwatch``
as a newcomer does: its own home, free ports (`tests.support.demo_ports`), and the command as
a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import demo_ports


def demo_environment(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``FLEETWATCH_*`` variable, plus a home, free
    ports for the lab, the scripted model and both pages, and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(demo_ports(), FLEETWATCH_HOME=str(home))
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
