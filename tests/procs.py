"""Fleetwatch services as real processes, for tests: start one with a given environment, wait
for its socket (a hard bound), stop it with SIGTERM or kill it with SIGKILL.

    env = base_env(tmp_path / "home", FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url)
    async with running_service("services.executor", env) as proc:
        ...  # proc.socket, proc.settings, await proc.kill(), proc.log_text()

Waiting for the socket is `tests.support.wait_for_socket` (a hard bound): a process that exits
before its socket answers fails the wait with the tail of its log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shared.config import Settings, load_settings
from tests.support import wait_for_socket

STOP_SECONDS = 10.0
"""Hard bound on a clean stop after SIGTERM (then SIGKILL)."""

SOCKETS = {
    "services.executor": "executor_socket",
    "services.approval_web": "approval_socket",
    "services.assistant": "assistant_socket",
}
"""Which `Settings` socket each service module serves."""


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``FLEETWATCH_*`` variable, in the C locale
    (``LANG=C.UTF-8``), plus ``FLEETWATCH_HOME=home``, ``FLEETWATCH_LOG_LEVEL=WARNING``,
    ``FLEETWATCH_APPROVE_PORT=0`` and `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("FLEETWATCH_") and k not in ("LC_ALL", "LC_MESSAGES", "LANG")
    }
    env["LANG"] = "C.UTF-8"  # the command follows the system locale's language: English here
    # Port 0: the approval page takes any free port, so services of parallel runs never collide.
    env.update(FLEETWATCH_HOME=str(home), FLEETWATCH_LOG_LEVEL="WARNING", FLEETWATCH_APPROVE_PORT="0")
    env.update(extra)
    return env


@dataclass
class ServiceProcess:
    """A running service: its module, process, socket, settings (from its env) and log file."""

    module: str
    process: asyncio.subprocess.Process
    socket: Path
    settings: Settings
    log: Path
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment it was started with (a restart starts it again with this)."""

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self, tail: int = 4000) -> str:
        """The last `tail` characters of what the process wrote (stdout and stderr)."""
        return self.log.read_text(errors="replace")[-tail:] if self.log.exists() else ""

    async def stop(self, timeout_seconds: float = STOP_SECONDS) -> int:
        """SIGTERM, wait (bounded), SIGKILL if it did not stop; the exit status."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout_seconds)
            except TimeoutError:
                self.process.kill()
        return await self.process.wait()

    async def kill(self) -> int:
        """SIGKILL (no clean-up at all, like a crash); the exit status."""
        if self.process.returncode is None:
            self.process.kill()
        return await self.process.wait()


async def start_service(
    module: str, env: Mapping[str, str], *args: str, log_name: str | None = None
) -> ServiceProcess:
    """``python -m MODULE ARGS`` with exactly `env`, once its socket answers.

    The log goes to ``$FLEETWATCH_HOME/<log_name or module>.log`` (appended, so a restart
    keeps the earlier lines). Raises AssertionError when it does not come up.
    """
    settings = load_settings(env)
    socket = getattr(settings, SOCKETS[module])
    log = Path(env["FLEETWATCH_HOME"]) / f"{log_name or module.rsplit('.', 1)[-1]}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, *args, env=dict(env), stdout=sink, stderr=sink
        )
    service = ServiceProcess(module, process, socket, settings, log, dict(env))
    try:
        await wait_for_socket(process, socket, log)
    except BaseException:
        await service.kill()
        raise
    return service


@contextlib.asynccontextmanager
async def running_service(
    module: str, env: Mapping[str, str], *args: str, log_name: str | None = None
) -> AsyncIterator[ServiceProcess]:
    """`start_service` for the ``async with`` block, stopped (SIGTERM) at its end."""
    service = await start_service(module, env, *args, log_name=log_name)
    try:
        yield service
    finally:
        await service.stop()


async def stop_all(services: Sequence[ServiceProcess]) -> None:
    """Stop several services, last started first."""
    for service in reversed(services):
        await service.stop()
