"""The approval flow with real processes: the campus lab in this process, the executor and
approval_web (approval.sock and the page) as ``python -m`` processes over one store.

A proposal enters the way the assistant sends one: `SubmitProposal` on approval.sock (here
drafted by an operator, the test's own uid), which approval_web checks and has the executor
Prepare against the lab's sandbox team. The page's address is read from approval_web's log
(it listens on a free port) and its secret from the 0600 file (stdout is not a terminal).

The campus sandbox team: 29088800001 "Sandbox Pearl-2" (idle, channels 1 "Program" and
2 "Camera 2"), 29088800002 "Sandbox Pearl Mini" (recording), 29088800003 "Sandbox Nano",
29088800004 "Sandbox Classroom" (channel 1 "Lecture", a class in 25 minutes). The fence allows
the first two unless a test names others.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, CookieJar

from services.lab.server import LabHandle, run_lab
from shared.config import Settings
from shared.epiphan.slots import SignIn, write_slot
from shared.web.page_secret import read_secret_file
from shared.wire.approval import ProposalAccepted, SubmitProposal
from shared.wire.client import request
from tests.procs import ServiceProcess, base_env, start_service, stop_all
from tests.support import READY_SECONDS, wait_until

IDLE, RECORDING, NANO, CLASSROOM = "29088800001", "29088800002", "29088800003", "29088800004"
PAGE_LINE = re.compile(r"Approval page: (http://127\.0\.0\.1:\d+/)  secret in: (\S+)")


@dataclass
class Stack:
    lab: LabHandle
    settings: Settings
    executor: ServiceProcess
    approval_web: ServiceProcess
    url: str
    secret: str
    env: dict[str, str]
    """The services' environment (a ``fleetwatch`` command run with it talks to them)."""

    async def propose(self, tool: str, arguments: dict[str, Any], reason: str = "Class starts soon.") -> str:
        """Submit a proposal on approval.sock (as an operator's draft); its ID."""
        reply = await request(
            self.settings.approval_socket,
            SubmitProposal(tool=tool, arguments=arguments, reason=reason, proposed_by="operator"),
            ProposalAccepted,
            timeout_seconds=30,
        )
        assert isinstance(reply, ProposalAccepted), reply
        return reply.proposal_id

    def writes(self) -> list[dict[str, Any]]:
        return self.lab.writes()


async def page_address(service: ServiceProcess) -> tuple[str, Path]:
    """The page's URL and secret file, from the line approval_web prints once it listens."""
    found = await wait_until(
        lambda: PAGE_LINE.search(service.log_text(tail=20_000)),
        what="the page's address in approval_web's log",
        seconds=READY_SECONDS,
        process=service.process,
        log=service.log_text,
    )
    return found.group(1), Path(found.group(2))


@contextlib.asynccontextmanager
async def running_stack(
    home: Path, *, writable: str = f"{IDLE},{RECORDING}", **env: str
) -> AsyncIterator[Stack]:
    """Lab, executor and approval_web for the block; both processes stopped at its end.
    `writable`: the fence's allowlist (default: the first two sandbox devices)."""
    async with run_lab("campus") as lab:
        sandbox = lab.teams["sandbox"]
        full = base_env(
            home,
            FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url,
            FLEETWATCH_WRITE_DEVICE_IDS=writable,
            FLEETWATCH_WRITE_TEAM_ID=sandbox.team_id,
            **env,
        )
        started: list[ServiceProcess] = []
        try:
            executor = await start_service("services.executor", full)
            started.append(executor)
            write_slot(
                executor.settings.sandbox_token_file,
                SignIn(access_token=sandbox.token, server=lab.mcp_url, team_id=sandbox.team_id, kind="lab"),
            )
            approval_web = await start_service("services.approval_web", full)
            started.append(approval_web)
            url, secret_file = await page_address(approval_web)
            assert secret_file == approval_web.settings.approve_secret_file
            yield Stack(
                lab, approval_web.settings, executor, approval_web, url, read_secret_file(secret_file), full
            )
        finally:
            await stop_all(started)


@contextlib.asynccontextmanager
async def signed_in(url: str, secret: str) -> AsyncIterator[tuple[ClientSession, dict[str, str]]]:
    """A browser signed in on the page at `url` with `secret` (one ``session_start`` row), and
    the headers its POSTs carry (same origin)."""
    origin = url.rstrip("/")
    headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    async with ClientSession(base_url=origin, cookie_jar=CookieJar(unsafe=True)) as browser:
        login = await browser.post("/login", data={"secret": secret}, headers=headers, allow_redirects=False)
        assert login.status == 303
        yield browser, headers
