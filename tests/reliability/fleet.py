"""A whole Fleetwatch under real supervisord for the reliability harness: ``fleetwatch up`` on the
embedded lab (demo mode) in its own home on free ports, and what the harness does to it.

    async with running_fleet(tmp_path / "home") as fleet:
        proposal_id = await fleet.ask_for_a_proposal()       # the main job's intake, as the assistant
        async with fleet.page() as page:                      # a signed-in browser session
            outcome = await page.approve(await page.card())
        old = await fleet.kill("executor")                   # SIGKILL; supervisord restarts it
        await fleet.wait_restarted("executor", old)

The lab runs under supervisord too; the harness drives it over ``/_lab/*``: faults (a ``hold``
is the barrier a crash cell waits on), the write log, the held calls. Every wait is bounded
(`tests.support.wait_until`, polling a real external process). `Fleet.snapshot` reads every
table of the store (the audit too) so a cell can say what changed, `Fleet.audit_ok` walks the
audit chain, `Fleet.usage` reads a service's RSS and open file descriptors from ``/proc``.

Shared by the tests in ``tests/reliability/`` and by ``bench/reliability.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from aiohttp import ClientSession, CookieJar

from services.ctl import supervise
from services.ctl.commands_up import DEMO_QUESTION
from shared.config import Settings, load_settings
from shared.store.db import open_store, verify_audit
from shared.wire.approval import (
    Acknowledge,
    ApprovalClient,
    DenyAll,
    GetProposalState,
    LiftDenialPauses,
    SubmitProposal,
)
from shared.wire.assistant import Ask, AssistantClient
from shared.wire.client import CallError
from tests.approval_web.page.helpers import forms_of
from tests.executor.harness import copy_policy, edit
from tests.reliability.services import STATE_QUERIES
from tests.support import READY_SECONDS, WAIT_SECONDS, demo_ports, store_rows, wait_until

SERVICES = supervise.SERVICES
"""executor, approval_web, assistant: the services a cell kills."""
SANDBOX_IDLE = "29088800001"
"""The campus sandbox's idle Pearl-2 (channel 2 "Camera 2" is free to start recording)."""
START_RECORDING = ("batch_recording", {"action": "start", "device_ids": [f"{SANDBOX_IDLE}-2"]})
STOP_RECORDING = ("batch_recording", {"action": "stop", "device_ids": [f"{SANDBOX_IDLE}-2"]})
FINAL = frozenset({"executed", "denied", "expired", "not_run"})
"""Proposal states a person reads as final (``pending`` and ``approved`` are not)."""
CTL_SECONDS = 180.0
SNAPSHOT_QUERIES = {
    **STATE_QUERIES,
    "audit": "SELECT * FROM audit",
    "sessions": "SELECT * FROM sessions",
    "limits": "SELECT * FROM limits",
}
"""Every table of the store, each read whole."""


async def ctl(env: dict[str, str], *args: str, timeout_seconds: float = CTL_SECONDS) -> tuple[int, str]:
    """``fleetwatch ARGS`` as a process with `env`: (exit status, stdout and stderr)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.ctl.main",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout_seconds)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    return process.returncode or 0, out.decode(errors="replace")


@dataclass
class Page:
    """A browser session signed in to the approval page (cookies kept), sending what the
    page's own forms send."""

    session: ClientSession
    headers: dict[str, str]

    async def forms(self) -> dict[str, dict[str, str]]:
        """The forms on the page now: action -> fields (``/approve``, ``/deny``...)."""
        return forms_of(await (await self.session.get("/")).text()).forms

    async def card(self) -> dict[str, str] | None:
        """The Approve form of the card on screen (its fields), or None when there is none."""
        return (await self.forms()).get("/approve")

    async def post(self, path: str, form: dict[str, str]) -> tuple[int, str]:
        response = await self.session.post(path, data=form, headers=self.headers, allow_redirects=False)
        return response.status, await response.text()

    async def approve(self, form: dict[str, str]) -> tuple[int, str]:
        return await self.post("/approve", form)

    async def deny(self, form: dict[str, str]) -> tuple[int, str]:
        """Deny with the card's Deny form (`forms`' ``/deny``)."""
        return await self.post("/deny", form)


@dataclass
class Fleet:
    """One running Fleetwatch (see the module docstring)."""

    home: Path
    env: dict[str, str]
    settings: Settings
    lab_url: str
    page_url: str
    secret: str
    http: httpx2.AsyncClient = field(repr=False)

    # --- supervisord --------------------------------------------------------------------------

    async def pid(self, service: str) -> int | None:
        """The pid supervisord reports for a program, or None when it is not running."""
        try:
            info = await supervise.rpc(self.settings, "supervisor.getProcessInfo", service)
        except supervise.SuperviseError:
            return None
        pid = int(info.get("pid") or 0)  # 0 unless the process is alive (STARTING counts)
        return pid if pid > 0 else None

    async def pids(self) -> dict[str, int | None]:
        return {service: await self.pid(service) for service in SERVICES}

    def socket(self, service: str) -> Path:
        return self.settings.runtime_dir / supervise.SOCKET_NAMES[service]

    async def kill(self, service: str) -> int:
        """SIGKILL the service (a crash: no clean-up at all); its pid. supervisord restarts it
        (``autorestart=unexpected``)."""
        pid = await self.pid(service)
        assert pid is not None, f"{service} is not running"
        os.kill(pid, signal.SIGKILL)
        return pid

    async def wait_restarted(self, service: str, old_pid: int, seconds: float = READY_SECONDS) -> int:
        """Until supervisord runs `service` under a new pid and its socket answers; the pid."""

        async def back() -> int | None:
            pid = await self.pid(service)
            if pid is None or pid == old_pid:
                return None
            return pid if await supervise.socket_answers(self.socket(service)) else None

        return await wait_until(back, what=f"{service} restarted by supervisord", seconds=seconds)

    async def wait_page(self, seconds: float = READY_SECONDS) -> str:
        """Until the approval page answers again (after approval_web restarted); its secret
        (a restarted page makes a new one)."""

        async def answers() -> bool:
            with contextlib.suppress(httpx2.HTTPError):
                return (await self.http.get(self.page_url)).status_code == 200
            return False

        await wait_until(answers, what="the approval page", seconds=seconds)
        self.secret = self.settings.approve_secret_file.read_text().strip()
        return self.secret

    # --- the lab ------------------------------------------------------------------------------

    async def lab(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.http.request(method, f"{self.lab_url}/_lab/{path}", json=body)
        assert response.status_code == 200, response.text
        return response.json()

    async def fault(self, tool: str, kind: str, **extra: Any) -> None:
        """Add a lab fault (``seconds``, ``count``, ``team`` as `services.lab.faults.Fault`)."""
        await self.lab("POST", "faults", {"tool": tool, "kind": kind, **extra})

    async def clear_faults(self) -> None:
        await self.lab("DELETE", "faults")
        await self.lab("POST", "release")

    async def held(self) -> list[dict[str, Any]]:
        """Calls waiting in a ``hold`` fault: ``[{tool, team}]``."""
        return (await self.lab("GET", "faults"))["held"]

    async def wait_held(self, tool: str, seconds: float = WAIT_SECONDS) -> None:
        """Until a call of `tool` waits in a ``hold`` fault (the barrier)."""

        async def holding() -> bool:
            return any(h["tool"] == tool for h in await self.held())

        await wait_until(holding, what=f"a {tool} call held in the lab", seconds=seconds)

    async def release(self) -> int:
        return (await self.lab("POST", "release"))["released"]

    async def writes(self) -> list[dict[str, Any]]:
        """The lab's write log (every write that reached a tool handler)."""
        return (await self.lab("GET", "writes"))["writes"]

    # --- the sockets and the page -------------------------------------------------------------

    def approval(self) -> ApprovalClient:
        return ApprovalClient(self.socket("approval_web"))

    def assistant(self) -> AssistantClient:
        return AssistantClient(self.socket("assistant"))

    async def propose(self, tool: str, arguments: dict[str, Any], reason: str = "Class starts soon.") -> str:
        """An operator's proposal through approval.sock (intake and Prepare); its ID."""
        accepted = await self.approval().call(
            SubmitProposal(tool=tool, arguments=arguments, reason=reason, proposed_by="operator"),
        )
        return accepted.proposal_id

    async def ask(self, question: str = DEMO_QUESTION, timeout_seconds: float = 120.0) -> Any:
        """The main job's first step: an operator asks the assistant (the scripted model)."""
        return await self.assistant().call(
            Ask(question=question, language="en"), timeout_seconds=timeout_seconds
        )

    @contextlib.asynccontextmanager
    async def page(self) -> AsyncIterator[Page]:
        """A session signed in to the approval page with the current secret."""
        origin = self.page_url.rstrip("/")
        headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
        async with ClientSession(base_url=origin, cookie_jar=CookieJar(unsafe=True)) as session:
            status = (
                await session.post(
                    "/login", data={"secret": self.secret}, headers=headers, allow_redirects=False
                )
            ).status
            assert status == 303, f"login answered {status}"
            yield Page(session, headers)

    # --- the store ----------------------------------------------------------------------------

    async def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return await store_rows(self.settings.db, sql, params)

    async def watch_rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Rows of the watch's own store (the assistant's ``watch.db``), read-only."""
        return await store_rows(self.settings.watch_db, sql, params)

    async def last_beat(self) -> int:
        """The seq of the last beat the watch recorded (0: none yet)."""
        rows = await self.watch_rows("SELECT coalesce(max(seq), 0) AS seq FROM beats")
        return int(rows[0]["seq"])

    async def snapshot(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table of the store, by table."""
        conn = await open_store(self.settings.db)
        try:
            out = {}
            for table, sql in SNAPSHOT_QUERIES.items():
                async with conn.execute(sql) as cursor:
                    out[table] = sorted((tuple(row) for row in await cursor.fetchall()), key=repr)
            return out
        finally:
            await conn.close()

    async def audit_ok(self) -> tuple[bool, int]:
        """(the audit chain verifies, its rows)."""
        conn = await open_store(self.settings.db)
        try:
            verification = await verify_audit(conn)
        finally:
            await conn.close()
        return verification.ok, verification.rows

    async def proposal(self, proposal_id: str) -> dict[str, Any]:
        """The proposal's row joined with its execution (outcome, verification), if any."""
        (row,) = await self.rows(
            "SELECT p.id, p.status, p.status_code, e.outcome, e.verification FROM proposals p"
            " LEFT JOIN executions e ON e.proposal_id = p.id WHERE p.id = ?",
            (proposal_id,),
        )
        return row

    async def wait_final(self, proposal_id: str, seconds: float = 90.0) -> dict[str, Any]:
        """Until the proposal is in a final state a person can read (an execution, when there is
        one, is no longer ``running``); its row (`proposal`)."""

        async def final() -> dict[str, Any] | None:
            row = await self.proposal(proposal_id)
            if row["status"] not in FINAL or row["outcome"] == "running":
                return None
            return row

        return await wait_until(final, what=f"proposal {proposal_id} final", seconds=seconds)

    async def wait_verified(self, proposal_id: str, seconds: float = 90.0) -> dict[str, Any]:
        """Until the proposal's execution has its verification recorded; its row."""

        async def verified() -> dict[str, Any] | None:
            row = await self.proposal(proposal_id)
            return row if row["verification"] is not None else None

        return await wait_until(verified, what=f"proposal {proposal_id} verified", seconds=seconds)

    async def readable(self, proposal_id: str) -> bool:
        """True when a person can read the proposal's state through approval.sock (``pending
        show``'s source)."""
        try:
            state = await self.approval().call(GetProposalState(proposal_id=proposal_id))
        except CallError:
            return False
        return state.status in FINAL

    async def settle(self) -> None:
        """What an operator does before the next job, so it starts from a clean queue: the
        lab's faults cleared, whatever is pending denied, each change that ended unknown or
        unverified acknowledged (its room may get proposals again), the denial pauses lifted.
        Each of these is audited by approval_web."""
        await self.clear_faults()
        approval = self.approval()
        with contextlib.suppress(CallError):
            await approval.call(DenyAll())
        unsettled = await self.rows(
            "SELECT proposal_id FROM executions WHERE outcome = 'unknown' OR verification IS NOT 'verified'"
        )
        for row in unsettled:
            with contextlib.suppress(CallError):  # nothing_to_acknowledge: done before
                await approval.call(Acknowledge(proposal_id=row["proposal_id"]))
        with contextlib.suppress(CallError):  # no_such_pause
            await approval.call(LiftDenialPauses())

    # --- processes ----------------------------------------------------------------------------

    async def usage(self, service: str) -> tuple[float, int] | None:
        """(RSS in MiB, open file descriptors) of the service's process, from /proc."""
        pid = await self.pid(service)
        if pid is None:
            return None
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return None
        rss_kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return rss_kib / 1024, fds


HEARTBEAT_SECONDS = 15
"""The watch's beat interval under the harness (``FLEETWATCH_HEARTBEAT_SECONDS``; 180 s in
production), so a soak of minutes sees many beats of the timer's own."""
PER_HOUR = 60
"""The hourly cap the harness runs under: the design's ceiling (``policy.yaml`` ships 10; a
matrix or a soak proposes more than that in an hour, every proposal through intake)."""


async def _start(home: Path) -> tuple[dict[str, str], Settings]:
    policy = copy_policy(home / "policy")
    edit(policy / "policy.yaml", "per_hour: 10 ", f"per_hour: {PER_HOUR} ")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(
        demo_ports(),
        FLEETWATCH_HOME=str(home),
        FLEETWATCH_LOG_LEVEL="WARNING",
        FLEETWATCH_POLICY_DIR=str(policy),
        FLEETWATCH_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
    )
    status, out = await ctl(env, "up")
    assert status == 0, out
    return env, load_settings(env)


@contextlib.asynccontextmanager
async def running_fleet(home: Path) -> AsyncIterator[Fleet]:
    """``fleetwatch up`` in `home` (its policy a copy of the repository's with the hourly cap
    at `PER_HOUR`) for the block, ``fleetwatch down`` at its end whatever happened."""
    env: dict[str, str] = {}
    try:
        env, settings = await _start(home)
        lab_url = json.loads((settings.runtime_dir / "lab.ready").read_text())["url"]
        async with httpx2.AsyncClient(timeout=30) as http:
            fleet = Fleet(
                home=home,
                env=env,
                settings=settings,
                lab_url=lab_url,
                page_url=f"http://127.0.0.1:{settings.approve_port}/",
                secret="",
                http=http,
            )
            await fleet.wait_page()
            yield fleet
    finally:
        if env:
            await ctl(env, "down", timeout_seconds=90)
