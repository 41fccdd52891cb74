"""The real proposal path for the assistant's tests: the lab in this process, the executor and
approval_web as real processes (`tests.procs`), one store. The assistant talks to approval.sock
through its production sink (`approval_sink`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.assistant.proposals import approval_sink
from services.assistant.service import Assistant
from services.lab.model_standin import StandinHandle
from services.lab.scenario import Scenario
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR, Settings
from shared.epiphan.slots import SignIn, write_slot
from shared.policy.loader import load_policies
from shared.store.db import open_store
from shared.wire.approval import ApprovalClient
from shared.wire.assistant import Answer
from tests.assistant.helpers import model_client, team_reader
from tests.procs import ServiceProcess, base_env, running_service

CLEAN_SQL = (
    "DELETE FROM executions",
    "DELETE FROM approvals",
    "DELETE FROM proposal_targets",
    "DELETE FROM proposals",
)


@dataclass
class Backend:
    """The lab, the executor and approval_web, with the fence on the sandbox team's ID only (no
    device allowlist), so the executor's fresh sandbox read decides membership."""

    lab: LabHandle
    env: dict[str, str]
    settings: Settings
    executor: ServiceProcess
    approval_web: ServiceProcess

    @property
    def sink(self) -> ApprovalClient:
        return approval_sink(self.settings.approval_socket, timeout_seconds=20)

    def sign_in(self) -> None:
        sandbox = self.lab.teams["sandbox"]
        write_slot(
            self.settings.sandbox_token_file,
            SignIn(access_token=sandbox.token, server=self.lab.mcp_url, team_id=sandbox.team_id, kind="lab"),
        )

    async def clean(self) -> None:
        """A fresh lab world and no proposals (the audit is append-only and stays)."""
        self.lab.reset()
        self.lab.clear_faults()
        self.sign_in()
        conn = await open_store(self.settings.db)
        try:
            for sql in CLEAN_SQL:
                await conn.execute(sql)
        finally:
            await conn.close()

    async def ask(self, model: StandinHandle, team: str, question: str, **options: Any) -> Answer:
        """Ask `question` of an `Assistant` reading `team` (read sign-in on that lab team), the
        stand-in `model` (its current script) and this backend's approval.sock; `options`
        override the Assistant's arguments (``store``, ``budget``...)."""
        policy, tool_policy = load_policies(REPO_POLICY_DIR)
        async with team_reader(self.lab, team, tool_policy) as reader, model_client(model) as client:
            assistant = Assistant(
                **{
                    "reader": reader,
                    "sink": self.sink,
                    "policy": policy,
                    "tool_policy": tool_policy,
                    "model_client": client,
                    "model": "standin-model",
                    "fence_configured": True,
                    "now": lambda: self.lab.now,
                    **options,
                }
            )
            return await assistant.ask(question)

    async def proposals(self) -> list[dict[str, Any]]:
        """Every stored proposal with its targets (master IDs)."""
        conn = await open_store(self.settings.db)
        try:
            async with conn.execute("SELECT * FROM proposals ORDER BY created_at") as cursor:
                found = [dict(r) for r in await cursor.fetchall()]
            for row in found:
                async with conn.execute(
                    "SELECT * FROM proposal_targets WHERE proposal_id = ?", (row["id"],)
                ) as cursor:
                    row["targets"] = [dict(t) for t in await cursor.fetchall()]
            return found
        finally:
            await conn.close()

    async def audit_kinds(self) -> list[tuple[str, str, dict[str, Any]]]:
        conn = await open_store(self.settings.db)
        try:
            async with conn.execute("SELECT actor, kind, detail_json FROM audit ORDER BY seq") as cursor:
                return [(r[0], r[1], json.loads(r[2])) for r in await cursor.fetchall()]
        finally:
            await conn.close()


@contextlib.asynccontextmanager
async def backend(
    home: Path, scenario: str | Scenario = "campus", *, lab_options: dict[str, Any] | None = None, **env: str
) -> AsyncIterator[Backend]:
    """A `Backend` under `home` for the block. The lab runs on the wall clock, like the
    service processes (the assistant process takes "now" from it); `lab_options` go to
    `run_lab` (e.g. a capture to replay)."""
    async with run_lab(scenario, clock=LabClock(), **(lab_options or {})) as lab:
        full = base_env(
            home,
            FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url,
            FLEETWATCH_WRITE_TEAM_ID=lab.teams["sandbox"].team_id,
            **env,
        )
        async with running_service("services.executor", full) as executor:
            running = Backend(lab, full, executor.settings, executor, executor)
            running.sign_in()
            async with running_service("services.approval_web", full) as approval_web:
                running.approval_web = approval_web
                yield running
