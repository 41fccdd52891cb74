"""The intruder: run inside Fleetwatch's image as a uid no service admits, with the sockets' volume
(and, to show their modes hold, the store's, the token slots' and approval_web's state) mounted.
It tries every socket, the store, both tokens, the page's secret and the root file system, and
prints one JSON line per attempt: ``{"attempt", "refused", "how"}``. It exits 0; the caller
(`tests.deploy.container`) judges each line. Run by ``scripts/container-test`` only.

Each socket is tried twice: a plain ``connect`` (the file wall: its folder's group) and, through
the socket's typed client, ``GetCapabilities`` (the peer check: `peer_not_allowed` when the
intruder was given the folders' groups and so got past the file wall).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import socket
import sqlite3
from pathlib import Path

from shared.wire.approval import ApprovalClient
from shared.wire.assistant import AssistantClient
from shared.wire.client import CallError
from shared.wire.executor import ExecutorClient

SOCKETS = {
    "executor.sock": (Path("/run/fleetwatch/executor/executor.sock"), ExecutorClient),
    "approval.sock": (Path("/run/fleetwatch/web/approval.sock"), ApprovalClient),
    "assistant.sock": (Path("/run/fleetwatch/assistant/assistant.sock"), AssistantClient),
}
SECRETS = {
    "the store": Path("/var/lib/fleetwatch/store/fleetwatch.db"),
    "the sandbox token": Path("/var/lib/fleetwatch/executor-tokens/sandbox.json"),
    "the read token": Path("/var/lib/fleetwatch/assistant-tokens/read.json"),
    "the approval page's secret": Path("/var/lib/fleetwatch/web/approve-secret"),
    "approval_web's audit key folder": Path("/var/lib/fleetwatch/web/keys"),
}
ROOT_FILES = (Path("/opt/fleetwatch/venv/bin/fleetwatch"), Path("/etc/intruder"), Path("/usr/local/bin/x"))


def say(attempt: str, refused: bool, how: str) -> None:
    print(json.dumps({"attempt": attempt, "refused": refused, "how": how}), flush=True)


def error_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def connect(path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(path))
        except OSError as exc:
            say(f"connect to {path.name}", True, error_name(exc))
            return
    say(f"connect to {path.name}", False, "connected (the peer check decides next)")


async def ask(name: str, path: Path, client: type) -> None:
    try:
        await client(path, timeout_seconds=10).capabilities()
    except CallError as exc:
        refused = exc.code.value in ("peer_not_allowed", "service_unavailable")
        say(f"GetCapabilities on {name}", refused, exc.code.value)
        return
    say(f"GetCapabilities on {name}", False, "answered")


def read(what: str, path: Path) -> None:
    try:
        if path.is_dir():
            os.listdir(path)
        else:
            path.read_bytes()[:1]
    except OSError as exc:
        say(f"read {what}", True, error_name(exc))
        return
    say(f"read {what}", False, "read")


def open_store(path: Path) -> None:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        say("open the store with SQLite", True, str(exc))
        return
    say("open the store with SQLite", False, "opened")


def write(path: Path) -> None:
    try:
        with path.open("a"):
            pass
    except OSError as exc:
        say(f"write {path} on the root file system", True, error_name(exc))
        return
    say(f"write {path} on the root file system", False, "written")


async def main() -> int:
    who = f"uid {os.getuid()} gid {os.getgid()} groups {sorted(os.getgroups())}"
    print(json.dumps({"intruder": who}), flush=True)
    for name, (path, client) in SOCKETS.items():
        connect(path)
        await ask(name, path, client)
    for what, path in SECRETS.items():
        read(what, path)
    open_store(SECRETS["the store"])
    for path in ROOT_FILES:
        write(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
