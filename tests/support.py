"""What tests share for real processes: free ports, waiting for a socket, bounded waits.

Nothing here sleeps to synchronise. `wait_until` polls a condition that a real external process
makes true (a row it writes after answering, a file it creates, a socket it binds), every
`POLL_SECONDS`, with a hard bound; it fails with what it waited for, and with the tail of the
process's log when that process exits first. This is the one place the suite polls.

- `free_port`: a TCP port on 127.0.0.1 nobody listens on right now; `demo_ports`: the settings
  that put a whole demo (the lab, the scripted model, the pages) on free ports.
- `wait_until`: the bounded poll itself.
- `wait_for_socket`: until a unix socket accepts a connection (a service that is ready).
- `wait_for_socket_file`: until a socket file exists with its final mode, without connecting
  (a connection from a peer off the allowlist would be refused and audited).
- `store_rows`: the rows of one query on a store file, as dicts (a fresh connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import shutil
import socket
import stat
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from shared.config import DEFAULT_POLICY_DIR
from shared.store.db import open_store

T = TypeVar("T")

READY_SECONDS = 60.0
"""Hard bound on a process getting ready (its socket, its file): generous, because two cores
are shared by whole suites; a ready process answers in well under a second."""
WAIT_SECONDS = 20.0
"""Default hard bound on a condition a running process makes true (a row, a state)."""
POLL_SECONDS = 0.02
"""How often a bounded wait looks again."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def demo_ports() -> dict[str, str]:
    """``FLEETWATCH_*`` settings for a whole Fleetwatch on the embedded lab on free ports: the
    lab (and the Epiphan URL pointing at it), the scripted model, the approval and ask pages."""
    lab = free_port()
    return {
        "FLEETWATCH_LAB_PORT": str(lab),
        "FLEETWATCH_EPIPHAN_MCP_URL": f"http://127.0.0.1:{lab}/mcp",
        "FLEETWATCH_MODEL_STANDIN_PORT": str(free_port()),
        "FLEETWATCH_APPROVE_PORT": str(free_port()),
        "FLEETWATCH_ASK_PORT": str(free_port()),
    }


def _tail(log: Path | Callable[[], str] | None) -> str:
    if log is None:
        return ""
    text = log() if callable(log) else log.read_text(errors="replace") if log.exists() else ""
    return f": {text[-3000:]}"


async def wait_until(
    condition: Callable[[], T | None | Awaitable[T | None]],
    *,
    what: str,
    seconds: float = WAIT_SECONDS,
    process: asyncio.subprocess.Process | None = None,
    log: Path | Callable[[], str] | None = None,
) -> T:
    """Poll `condition` (a function, or a coroutine function) until it returns something true,
    and return that.

    Raises:
        AssertionError: `process` exited first, or `seconds` passed; the message names `what`
            and ends with the tail of `log` (a file, or a function returning text).
    """
    try:
        async with asyncio.timeout(seconds):
            while True:
                if process is not None and process.returncode is not None:
                    raise AssertionError(f"exited {process.returncode} before {what}{_tail(log)}")
                found = condition()
                if inspect.isawaitable(found):
                    found = await found
                if found:
                    return found
                await asyncio.sleep(POLL_SECONDS)  # polling a real external process, hard-bounded above
    except TimeoutError as exc:
        raise AssertionError(f"not {what} after {seconds} s{_tail(log)}") from exc


async def _accepts(path: Path) -> bool:
    if not path.exists():
        return False
    with contextlib.suppress(OSError):
        _, writer = await asyncio.open_unix_connection(str(path))
        writer.close()
        return True
    return False


async def wait_for_socket(process: asyncio.subprocess.Process, path: Path, log: Path) -> None:
    """Until `path` accepts a connection.

    Raises:
        AssertionError: the process exited first (with its log's tail), or `READY_SECONDS` passed.
    """
    await wait_until(
        lambda: _accepts(path), what=f"a socket at {path}", seconds=READY_SECONDS, process=process, log=log
    )


async def wait_for_socket_file(
    process: asyncio.subprocess.Process, path: Path, log: Path, *, mode: int = 0o660
) -> None:
    """Until `path` is a socket with its final `mode` (``serve_unix`` sets it after binding).
    Never connects: a connection from a peer off the allowlist would be refused and audited.

    Raises:
        AssertionError: the process exited first (with its log's tail), or `READY_SECONDS` passed.
    """

    def ready() -> bool:
        with contextlib.suppress(FileNotFoundError):
            info = path.lstat()
            return stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == mode
        return False

    await wait_until(
        ready,
        what=f"a socket file at {path} (mode {mode:o})",
        seconds=READY_SECONDS,
        process=process,
        log=log,
    )


async def store_rows(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """The rows `sql` selects from the store at `db`, as dicts, on a connection of its own."""
    conn = await open_store(db)
    try:
        async with conn.execute(sql, params) as cursor:
            return [dict(row) for row in await cursor.fetchall()]
    finally:
        await conn.close()


UNREADABLE_FORMS = (
    "multipart/form-data",
    "multipart/form-data; boundary=xyz",
    "application/x-www-form-urlencoded; charset=bogus",
)
"""Content types under which a POST body is no readable form (no boundary, a boundary the body
does not have, a charset Python does not know): each page refuses it as a form without fields."""


def policy_awake_now(folder: Path) -> Path:
    """The checkout's policy with its quiet hours moved to start 6 hours from now, in UTC
    (named: the shipped ones are in the operator's zone), and last 2 hours: the shipped ones
    (22:00 to 06:00) would hold every digest back when the suite runs at night. Everything else
    is the shipped policy, byte for byte."""
    return policy_quiet_between(folder, timedelta(hours=6), timedelta(hours=8))


def policy_quiet_now(folder: Path) -> Path:
    """The checkout's policy with quiet hours from an hour ago to 6 hours from now, in UTC: the
    watch holds its digests whenever the suite runs."""
    return policy_quiet_between(folder, timedelta(hours=-1), timedelta(hours=6))


def policy_quiet_between(folder: Path, start_in: timedelta, end_in: timedelta) -> Path:
    """The checkout's policy in `folder` with quiet hours from now + `start_in` to now + `end_in`
    in UTC; everything else the shipped policy, byte for byte."""
    shipped = Path(DEFAULT_POLICY_DIR)
    folder.mkdir(parents=True)
    shutil.copy(shipped / "tool_policy.yaml", folder / "tool_policy.yaml")
    now = datetime.now(UTC)
    start, end = (now + start_in).strftime("%H:%M"), (now + end_in).strftime("%H:%M")
    text = (shipped / "policy.yaml").read_text(encoding="utf-8")
    quiet = 'quiet_hours:\n  start: "22:00"\n  end: "06:00"\n'
    assert quiet in text, "the shipped policy's quiet hours moved; update this fixture"
    (folder / "policy.yaml").write_text(
        text.replace(quiet, f'quiet_hours:\n  start: "{start}"\n  end: "{end}"\n  timezone: "UTC"\n'),
        encoding="utf-8",
    )
    return folder
