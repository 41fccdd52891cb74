"""Helpers for approval_web tests: the whole stack (lab, executor, approval_web) per test, a
client, the store as the test sees it, and a fake executor (a socket peer, for the few answers
the real one never gives)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite

from services.lab.server import LabHandle, run_lab
from shared.binding import (
    TargetState,
    fingerprint_hash,
    make_bound_record,
    new_binding_key,
    record_bytes,
    seal,
)
from shared.config import Settings
from shared.epiphan.slots import SignIn, write_slot
from shared.policy.loader import ToolPolicy
from shared.store.approvals import approve
from shared.store.db import db_now, open_store
from shared.wire.client import request
from shared.wire.executor import (
    OPERATIONS,
    Execute,
    ExecutionReport,
    ExecutorClient,
    Health,
    HealthReport,
    Inspect,
    Prepare,
    Prepared,
)
from shared.wire.protocol import ErrorReply, Message
from shared.wire.server import PeerCred, serve_unix
from tests.audit_keys import service_keyring
from tests.procs import ServiceProcess, base_env, running_service, start_service


async def ask(settings: Settings, message: Message, reply_type: Any) -> Any:
    """One request on approval.sock; the reply or the `ErrorReply`."""
    return await request(settings.approval_socket, message, reply_type, timeout_seconds=30)


async def error_code(settings: Settings, message: Message, reply_type: Any) -> str:
    """The code of the `ErrorReply` a request gets (fails the test if it is not refused)."""
    reply = await ask(settings, message, reply_type)
    assert isinstance(reply, ErrorReply), reply
    return reply.code


# --- the store, seen from the test ------------------------------------------------------------

TABLES = {
    "proposals": "SELECT * FROM proposals ORDER BY rowid",
    "proposal_targets": "SELECT * FROM proposal_targets ORDER BY proposal_id, master_id",
    "approvals": "SELECT * FROM approvals ORDER BY rowid",
    "executions": "SELECT * FROM executions ORDER BY rowid",
    "sessions": "SELECT * FROM sessions ORDER BY rowid",
    "kv": "SELECT * FROM kv ORDER BY key",
}


@contextlib.asynccontextmanager
async def reader(settings: Settings) -> AsyncIterator[aiosqlite.Connection]:
    """A store connection as approval_web's (its own audit key: a test playing the page's part
    signs its rows as approval_web does)."""
    conn = await open_store(settings.db, keyring=service_keyring(settings))
    try:
        yield conn
    finally:
        await conn.close()


async def rows(settings: Settings) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the approval tables (not the audit)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    async with reader(settings) as conn:
        for table, sql in TABLES.items():
            async with conn.execute(sql) as cursor:
                out[table] = [tuple(r) for r in await cursor.fetchall()]
    return out


async def audit(settings: Settings) -> list[dict[str, Any]]:
    """Every audit row as a dict (detail decoded)."""
    async with reader(settings) as conn, conn.execute("SELECT * FROM audit ORDER BY seq") as cursor:
        return [{**dict(r), "detail": json.loads(r["detail_json"])} for r in await cursor.fetchall()]


# --- a fake executor ------------------------------------------------------------------------------


class FakeExecutor:
    """Answers Prepare with a record sealed under a throwaway key (targets and fingerprint made
    up from the arguments) and Health with a report; `refuse_with` makes Prepare refuse."""

    def __init__(self, tool_policy: ToolPolicy) -> None:
        self.tool_policy = tool_policy
        self.key = new_binding_key()
        self.prepared: list[Prepare] = []
        self.refuse_with: str | None = None
        self.tamper = False

    async def handle(self, message: Message, peer: PeerCred) -> Message:
        if isinstance(message, Health):
            return HealthReport(
                started_at="",
                boot_id="fake",
                sandbox_signed_in=True,
                fence_configured=True,
                kill_switch=False,
            )
        assert isinstance(message, Prepare)
        self.prepared.append(message)
        if self.refuse_with is not None:
            return ErrorReply(code=self.refuse_with, message="refused by the fake executor")
        rule = self.tool_policy.propose[message.tool]
        targets = rule.target_device_ids(message.arguments)
        fingerprint = {t: TargetState(online=True, recording=False, next_event_start=None) for t in targets}
        record = make_bound_record(
            proposal_id=message.proposal_id,
            tool=message.tool,
            arguments=message.arguments,
            targets=targets,
            fingerprint=fingerprint,
            schema_version=rule.schema_version + (1 if self.tamper else 0),
            reason=message.reason,
        )
        return Prepared(
            record=record_bytes(record),
            seal=seal(record, self.key),
            fingerprint_hash=fingerprint_hash(fingerprint),
        )


@contextlib.asynccontextmanager
async def fake_executor(settings: Settings, tool_policy: ToolPolicy) -> AsyncIterator[FakeExecutor]:
    """Serve a `FakeExecutor` on ``settings.executor_socket`` for the block."""
    fake = FakeExecutor(tool_policy)
    server = await serve_unix(
        settings.executor_socket,
        fake.handle,
        codec=OPERATIONS.codec,
        allowed_uids={os.getuid()},
    )
    try:
        yield fake
    finally:
        server.close()
        await server.wait_closed()


# --- the whole stack --------------------------------------------------------------------------------

SANDBOX_DEVICES = ("29088800001", "29088800002", "29088800003")
"""The campus scenario's sandbox team (services/lab/scenarios/campus.yaml): 001 idle, 002
recording with an event in 60 minutes, 003 idle. The fence allows 001 and 002, and
`CLASSROOM`."""
CLASSROOM = "29088800004"
"""The sandbox team's "Sandbox Classroom" (online, idle, a class 25 minutes after the lab
starts): allowed by the fence, so three rooms can each hold a pending proposal at once."""
FENCE = (*SANDBOX_DEVICES[:2], CLASSROOM)

CLEAN_SQL = (
    "DELETE FROM executions",
    "DELETE FROM approvals",
    "DELETE FROM proposal_targets",
    "DELETE FROM proposals",
    "DELETE FROM sessions",
    "DELETE FROM kv WHERE key != 'kill_switch_seal'",
)
"""Empties the approval tables between tests (the audit is append-only and stays, and so does
the kill switch: the executor trusts only the state it sealed, and a missing seal after a pause
reads as paused)."""


@dataclasses.dataclass
class Backend:
    """Shared by a test module: the campus lab (in this process) and the executor as a real
    process, signed in to the sandbox team, with the fence on `FENCE` and the team ID."""

    lab: LabHandle
    env: dict[str, str]
    settings: Settings
    executor: ServiceProcess

    def sign_in(self) -> None:
        """Write the sandbox slot (the executor reads it afresh for each operation)."""
        sandbox = self.lab.teams["sandbox"]
        write_slot(
            self.settings.sandbox_token_file,
            SignIn(access_token=sandbox.token, server=self.lab.mcp_url, team_id=sandbox.team_id, kind="lab"),
        )

    async def clean(self) -> None:
        """A fresh lab world, the sandbox signed in, and empty approval tables."""
        self.lab.reset()
        self.sign_in()
        async with reader(self.settings) as conn:
            for sql in CLEAN_SQL:
                await conn.execute(sql)


@contextlib.asynccontextmanager
async def backend(home: Path) -> AsyncIterator[Backend]:
    """A `Backend` under `home` for the block."""
    async with run_lab("campus") as lab:
        env = base_env(
            home,
            FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url,
            FLEETWATCH_WRITE_DEVICE_IDS=",".join(FENCE),
            FLEETWATCH_WRITE_TEAM_ID=lab.teams["sandbox"].team_id,
        )
        async with running_service("services.executor", env) as executor:
            shared = Backend(lab, env, executor.settings, executor)
            shared.sign_in()
            yield shared


@dataclasses.dataclass
class Stack:
    """For one test: approval_web as a real process (its own environment over the backend's)
    beside the module's executor and lab, sharing one store."""

    backend: Backend
    env: dict[str, str]
    args: tuple[str, ...]
    approval_web: ServiceProcess

    @property
    def settings(self) -> Settings:
        """approval_web's settings (its socket, its fence, its uids)."""
        return self.approval_web.settings

    @property
    def lab(self) -> LabHandle:
        return self.backend.lab

    async def restart_approval_web(self) -> None:
        """Stop approval_web (SIGTERM) and start it again with the same environment."""
        await self.approval_web.stop()
        self.approval_web = await start_service("services.approval_web", self.env, *self.args)


async def approve_and_execute(s: Stack, proposal_id: str) -> ExecutionReport:
    """What a person and the page do for a pending proposal: Inspect (the card), Approve in the
    store as the page records it, then Execute on the executor; its report."""
    executor = ExecutorClient(s.backend.executor.socket)
    inspection = await executor.call(Inspect(proposal_id=proposal_id), timeout_seconds=30)
    assert inspection.facts_hash, inspection
    async with reader(s.settings) as conn:
        approval = await approve(
            conn,
            proposal_id=proposal_id,
            session_id="s",
            card_hash="c" * 64,
            facts_hash=inspection.facts_hash,
            facts=inspection.facts,
            shown_at=await db_now(conn),
            ttl_seconds=300,
        )
        assert approval.ok
    execute = Execute(
        approval_id=approval.approval_id,
        proposal_id=proposal_id,
        card_hash="c" * 64,
        facts_hash=inspection.facts_hash,
    )
    return await executor.call(execute, timeout_seconds=30)


@contextlib.asynccontextmanager
async def stack(shared: Backend, *args: str, **env: str) -> AsyncIterator[Stack]:
    """approval_web started with `args` and `env` over the backend's environment, on a clean
    backend, for the block. ``FLEETWATCH_RUNTIME_DIR`` elsewhere: no executor to talk to."""
    await shared.clean()
    full = {**shared.env, **env}
    running = Stack(shared, full, args, await start_service("services.approval_web", full, *args))
    try:
        yield running
    finally:
        await running.approval_web.stop()
