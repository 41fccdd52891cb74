"""The three services as plain processes (no supervisord: faster to start) on the campus lab,
for the harness's fuzzing and store cases: the lab in this process, the executor,
approval_web (its page on a free port) and the assistant with its ask page (on a free port, no
model key: the keyword answer), one store, both sign-ins in their slots.

    async with running_services(tmp_path / "home") as services:
        services.socket("executor"), services.page_port("ask"), await services.state()

`Services.state` is what a change lives in (`STATE_QUERIES` and the lab's write log); `Services.audit_ok` walks the audit chain.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.lab.server import LabHandle
from shared.epiphan.slots import SignIn, write_slot
from shared.store.db import open_store, verify_audit
from shared.wire.assistant import AssistantClient, GetWatchStatus
from tests.e2e.stack import Stack, running_stack
from tests.procs import ServiceProcess, start_service
from tests.support import READY_SECONDS, free_port, store_rows, wait_until

QUIET_HEARTBEAT_SECONDS = "86400"
"""The watch's beat interval here unless a caller sets one: after the first beat (waited for),
none during the cases, whose lab faults are meant for the reads they make."""

STATE_QUERIES = {
    "proposals": "SELECT * FROM proposals",
    "proposal_targets": "SELECT * FROM proposal_targets",
    "approvals": "SELECT * FROM approvals",
    "executions": "SELECT * FROM executions",
    "kv": "SELECT * FROM kv",
}
"""The tables a change lives in (`tests.reliability.fuzz`'s "state"), each read whole."""


@dataclass
class Services:
    stack: Stack
    assistant: ServiceProcess | None
    """None when started without it (`running_services`' ``assistant=False``)."""
    ask_port: int

    @property
    def lab(self) -> LabHandle:
        return self.stack.lab

    @property
    def processes(self) -> dict[str, ServiceProcess]:
        out = {"executor": self.stack.executor, "approval_web": self.stack.approval_web}
        if self.assistant is not None:
            out["assistant"] = self.assistant
        return out

    def socket(self, service: str) -> Path:
        return self.processes[service].socket

    def page_port(self, page: str) -> int:
        return self.ask_port if page == "ask" else int(self.stack.url.rstrip("/").rsplit(":", 1)[1])

    def alive(self) -> bool:
        return all(p.process.returncode is None for p in self.processes.values())

    def logs(self) -> str:
        return "\n".join(f"--- {name}\n{p.log_text()}" for name, p in self.processes.items())

    async def state(self) -> dict[str, Any]:
        """The state tables' rows and the lab's write log."""
        conn = await open_store(self.stack.settings.db)
        try:
            out: dict[str, Any] = {}
            for table, sql in STATE_QUERIES.items():
                async with conn.execute(sql) as cursor:
                    out[table] = sorted((tuple(row) for row in await cursor.fetchall()), key=repr)
        finally:
            await conn.close()
        out["lab_writes"] = self.lab.writes()
        return out

    async def audit_rows(self) -> list[dict[str, Any]]:
        """Every audit row, in order."""
        return await store_rows(self.stack.settings.db, "SELECT * FROM audit ORDER BY seq")

    async def audit_ok(self) -> bool:
        conn = await open_store(self.stack.settings.db)
        try:
            return (await verify_audit(conn)).ok
        finally:
            await conn.close()


@contextlib.asynccontextmanager
async def running_services(home: Path, *, assistant: bool = True, **env: str) -> AsyncIterator[Services]:
    """The lab, the executor and approval_web (`tests.e2e.stack.running_stack`) and, unless
    `assistant` is False, the assistant with its ask page, for the block."""
    ask_port = free_port()
    async with running_stack(home, FLEETWATCH_ASK_PORT=str(ask_port), **env) as stack:
        if not assistant:
            yield Services(stack, None, ask_port)
            return
        normal = stack.lab.teams["normal"]
        write_slot(
            stack.settings.read_token_file,
            SignIn(access_token=normal.token, server=stack.lab.mcp_url, team_id=normal.team_id, kind="lab"),
        )
        full = {
            **stack_env(stack),
            "FLEETWATCH_ASK_PORT": str(ask_port),
            "FLEETWATCH_HEARTBEAT_SECONDS": env.get("FLEETWATCH_HEARTBEAT_SECONDS", QUIET_HEARTBEAT_SECONDS),
        }
        process = await start_service("services.assistant", full, "--page")
        try:
            await wait_until(
                lambda: port_answers(ask_port),
                what="the ask page",
                seconds=READY_SECONDS,
                process=process.process,
            )
            await wait_until(
                lambda: first_beat_done(process.settings.assistant_socket),
                what="the watch's first heartbeat",
                seconds=READY_SECONDS,
                process=process.process,
            )
            yield Services(stack, process, ask_port)
        finally:
            await process.stop()


async def first_beat_done(socket_path: Path) -> bool:
    """True once the watch has recorded its first heartbeat (its reads would otherwise race a
    case's one-shot lab fault and could take it)."""
    status = await AssistantClient(socket_path).call(GetWatchStatus(), timeout_seconds=10)
    return status.last_beat_at is not None


def port_answers(port: int) -> bool:
    """True when something accepts a TCP connection on 127.0.0.1:`port`."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        return True
    return False


def stack_env(stack: Stack) -> dict[str, str]:
    """The environment the stack's processes run with."""
    return dict(stack.executor.env)
