"""Running Fleetwatch under supervisord on one account: render, start, wait, stop.

`fleetwatch up` renders ``deploy/supervisord.conf`` into ``$FLEETWATCH_RUNTIME_DIR`` and starts
supervisord; in demo mode (the MCP URL is the embedded lab's) it starts the lab and the scripted
model first, places the lab's demo sign-ins in their slots, sets the fence to the sandbox team's
devices, and only then starts the executor, approval_web and the assistant, each waiting for the
one before to answer on its socket (the readiness order of DESIGN §2).

supervisord's ``shutdown`` returns before the daemon exits, so `stop` waits for the pid file to
go before it returns (a restart right after would otherwise find the old daemon).
"""

from __future__ import annotations

import asyncio
import os
import string
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shared.config import Settings
from shared.errors import Code, FleetwatchError

REPO = Path(__file__).resolve().parent.parent.parent
TEMPLATE = REPO / "deploy" / "supervisord.conf"
SERVICES = ("executor", "approval_web", "assistant")
"""Started in this order; each must answer on its socket before the next starts."""

DEMO_MODEL_KEY = "lab-demo-model-key"
"""The key the lab's scripted model accepts in demo mode. Not a secret: it opens nothing real."""

START_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 30.0


class SuperviseError(FleetwatchError):
    """supervisord could not be started, driven or stopped (code `service_unavailable`)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Where supervisord's files live for one ``FLEETWATCH_HOME``."""

    run: Path
    logs: Path

    @classmethod
    def of(cls, settings: Settings) -> Layout:
        return cls(run=settings.runtime_dir, logs=settings.state_dir / "logs")

    @property
    def config(self) -> Path:
        return self.run / "supervisord.conf"

    @property
    def pidfile(self) -> Path:
        return self.run / "supervisord.pid"

    @property
    def lab_ready(self) -> Path:
        return self.run / "lab.ready"


def is_demo(settings: Settings) -> bool:
    """True when the MCP URL is the embedded lab's (so `up` also runs the lab)."""
    return settings.epiphan_mcp_url.rstrip("/") == f"http://127.0.0.1:{settings.lab_port}/mcp"


def render_config(settings: Settings, *, scenario: str = "campus", python: str = sys.executable) -> str:
    """The supervisord configuration for these settings (no secret in it)."""
    layout = Layout.of(settings)
    fields = {
        "run": str(layout.run),
        "logs": str(layout.logs),
        "repo": str(REPO),
        "python": python,
        "scenario": scenario,
        "lab_port": str(settings.lab_port),
        "model_port": str(settings.model_standin_port),
        "demo": "true" if is_demo(settings) else "false",
        "model_key": DEMO_MODEL_KEY,
    }
    return string.Template(TEMPLATE.read_text()).substitute(fields)


async def _run(
    what: str, *argv: str, env: Mapping[str, str] | None = None, timeout_seconds: float = 30.0
) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(env) if env is not None else None,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout_seconds)
    except TimeoutError as exc:
        process.kill()
        await process.wait()
        raise SuperviseError(
            Code.SERVICE_UNAVAILABLE, f"{what} did not finish in {timeout_seconds:g} s"
        ) from exc
    return process.returncode or 0, out.decode(errors="replace")


async def supervisorctl(settings: Settings, *args: str, timeout_seconds: float = 30.0) -> tuple[int, str]:
    """Run ``supervisorctl -c <config> ARGS`` and return (exit status, output)."""
    config = Layout.of(settings).config
    return await _run(
        "supervisorctl",
        sys.executable,
        "-m",
        "supervisor.supervisorctl",
        "-c",
        str(config),
        *args,
        timeout_seconds=timeout_seconds,
    )


def running_pid(settings: Settings) -> int | None:
    """The pid of this home's supervisord when it is alive, else None."""
    try:
        pid = int(Layout.of(settings).pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


async def wait_until(predicate, what: str, timeout_seconds: float) -> None:
    """Poll ``predicate()`` (a real external process is on the other side) until true.

    Raises:
        SuperviseError: still false after ``timeout_seconds``.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_seconds
    while not await predicate():
        if loop.time() > deadline:
            raise SuperviseError(Code.SERVICE_UNAVAILABLE, f"{what} not ready after {timeout_seconds:g} s")
        await asyncio.sleep(0.1)


async def socket_answers(path: Path) -> bool:
    """True when a Unix socket accepts a connection."""
    try:
        _, writer = await asyncio.open_unix_connection(str(path))
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


async def start_daemon(settings: Settings, env: Mapping[str, str], *, scenario: str) -> Layout:
    """Render the config and start supervisord (idempotent: an alive daemon is kept).

    Raises:
        SuperviseError: supervisord did not start.
    """
    layout = Layout.of(settings)
    for folder in (layout.run, layout.logs, settings.state_dir):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if running_pid(settings) is not None:
        return layout
    layout.lab_ready.unlink(missing_ok=True)
    layout.config.write_text(render_config(settings, scenario=scenario))
    layout.config.chmod(0o600)
    status, out = await _run(
        "supervisord",
        sys.executable,
        "-m",
        "supervisor.supervisord",
        "-c",
        str(layout.config),
        env=env,
        timeout_seconds=START_TIMEOUT_SECONDS,
    )
    if status != 0:
        raise SuperviseError(Code.SERVICE_UNAVAILABLE, f"supervisord did not start: {out.strip()[-300:]}")

    async def alive() -> bool:
        return running_pid(settings) is not None

    await wait_until(alive, "supervisord", START_TIMEOUT_SECONDS)
    return layout


async def start_service(settings: Settings, name: str, socket: Path) -> None:
    """Start one service and wait until it answers on its socket."""
    if await socket_answers(socket):
        return
    status, out = await supervisorctl(settings, "start", name)
    if status != 0:
        raise SuperviseError(
            Code.SERVICE_UNAVAILABLE, f"{name} did not start (see its log): {out.strip()[-300:]}"
        )

    async def answers() -> bool:
        return await socket_answers(socket)

    await wait_until(answers, name, START_TIMEOUT_SECONDS)


async def stop(settings: Settings) -> bool:
    """Shut supervisord down and wait for its pid file to go. False when it was not running."""
    pid = running_pid(settings)
    if pid is None:
        return False
    await supervisorctl(settings, "shutdown")

    async def gone() -> bool:
        return running_pid(settings) is None

    await wait_until(gone, "supervisord shutdown", STOP_TIMEOUT_SECONDS)
    return True
