"""The crash matrix: each service SIGKILLed at each step of the main job, restarted by
supervisord, and the four promises checked.

A cell runs the main job on a fresh lab (``/_lab/reset``): an operator asks the assistant (the
scripted model reads the fleet and proposes starting a recording), approval_web has the
executor Prepare it, the card is shown, a person approves, the executor claims, reads, writes,
records the outcome and verifies. At the cell's step the job is held at a barrier the harness
controls, never a sleep:

- a ``hold`` fault in the lab on the call that step makes (`BARRIERS`: the tool and the team
  that signs in for it; ``after`` skips an earlier call of the same tool), or, for ``outcome``,
  a ``drop_response`` fault on the write: the write is applied and its answer never comes;
- for ``consume``, the executor stopped with SIGSTOP while a person presses Approve: the
  approval is consumed in the store and the Execute frame waits unread in the socket.

Then the cell's service is SIGKILLed, the barrier let go (release, SIGCONT), supervisord
restarts the service, and the job is carried on as a person would (a proposal still pending is
approved on the page). The checks (`CellResult.problems` empty):

1. at most one write reached the lab;
2. every proposal of the cell is in a final state (executed with an outcome that is not
   ``running``, denied, expired, not run) that a person can read through approval.sock, and a
   change the executor lived through from the claim on has its verification recorded;
3. the audit chain verifies;
4. no row is lost: every audit row written before the kill is still there unchanged, and
   every proposal, approval, execution and session row still exists.

Shared by ``tests/reliability/test_crash_matrix.py`` (a slice) and ``bench/reliability.py``
(every cell).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientError

from shared.wire.approval import Deny
from shared.wire.client import CallError
from tests.reliability.fleet import SERVICES, Fleet
from tests.support import WAIT_SECONDS, wait_until
from tests.unix_sent import unread_bytes

STEPS = ("intake", "prepare", "card_shown", "consume", "claim", "read", "write", "outcome", "verification")
"""The main job's steps, in order."""


@dataclass(frozen=True)
class Barrier:
    """Where the lab holds the job: the call of `tool` signed in to `team` (after `after`
    earlier ones), with a ``hold`` or (the outcome) a ``drop_response``."""

    tool: str
    team: str
    kind: str = "hold"
    after: int = 0


BARRIERS = {
    "intake": Barrier("get_devices_in_my_team", "normal"),
    # The demo model first asks which rooms may be changed (ListWritable reads the recorder
    # status of the sandbox once); Prepare's read is the next one.
    "prepare": Barrier("get_recorder_status_for_devices", "sandbox", after=1),
    "card_shown": Barrier("get_recorder_status_for_devices", "sandbox"),
    "claim": Barrier("get_devices_in_my_team", "sandbox"),
    "read": Barrier("get_current_or_next_cms_events_for_devices", "sandbox"),
    "write": Barrier("batch_recording", "sandbox"),
    "outcome": Barrier("batch_recording", "sandbox", kind="drop_response"),
    "verification": Barrier("get_system_status_for_devices", "sandbox"),
}
"""The lab barrier of each step but ``consume`` (SIGSTOP of the executor)."""
ROW_IDS = {
    "proposals": "SELECT id FROM proposals",
    "approvals": "SELECT id FROM approvals",
    "executions": "SELECT id FROM executions",
    "sessions": "SELECT id FROM sessions",
}
JOB_SECONDS = 120.0
"""Hard bound on one request of the job finishing after the barrier is let go."""


@dataclass
class CellResult:
    """One cell: the service killed, the step, what a person reads at the end, the writes."""

    service: str
    step: str
    outcome: str = ""
    writes: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def _ids(fleet: Fleet) -> dict[str, set[Any]]:
    return {table: {row["id"] for row in await fleet.rows(sql)} for table, sql in ROW_IDS.items()}


async def _audit(fleet: Fleet) -> list[dict[str, Any]]:
    return await fleet.rows("SELECT * FROM audit ORDER BY seq")


async def _finish(task: asyncio.Task[Any]) -> None:
    """Let a request of the job end (bounded); its error, if any, is the crash's to explain."""
    with contextlib.suppress(CallError, OSError, ClientError, AssertionError, TimeoutError):
        await asyncio.wait_for(task, JOB_SECONDS)


@dataclass
class _Cell:
    fleet: Fleet
    service: str
    step: str
    result: CellResult
    stopped: int | None = None
    before_ids: dict[str, set[Any]] = field(default_factory=dict)
    before_audit: list[dict[str, Any]] = field(default_factory=list)

    async def barrier(self) -> None:
        """Arm this step's barrier (before the request that reaches it is sent)."""
        if self.step == "consume":
            self.stopped = await self.fleet.pid("executor")
            assert self.stopped is not None
            os.kill(self.stopped, signal.SIGSTOP)
            return
        barrier = BARRIERS[self.step]
        extra = {"count": 1, "team": barrier.team, "after": barrier.after}
        await self.fleet.fault(barrier.tool, barrier.kind, **extra)

    async def reached(self, proposal_id: str | None) -> None:
        """Until the job waits at the barrier."""
        if self.step == "consume":

            async def consumed() -> bool:
                rows = await self.fleet.rows(
                    "SELECT used FROM approvals WHERE proposal_id = ?", (proposal_id,)
                )
                return any(row["used"] for row in rows)

            await wait_until(consumed, what="the approval consumed", seconds=WAIT_SECONDS)
            page = await self.fleet.pid("approval_web")
            assert page is not None
            await wait_until(  # approval_web sends Execute just after recording the approval
                lambda: unread_bytes(page) > 0,
                what="Execute waiting unread in the stopped executor's socket",
                seconds=WAIT_SECONDS,
            )
        elif self.step == "outcome":

            async def written() -> bool:
                return bool(await self.fleet.writes())

            await wait_until(written, what="the write applied in the lab", seconds=WAIT_SECONDS)
        else:
            await self.fleet.wait_held(BARRIERS[self.step].tool)

    async def crash(self) -> None:
        """Snapshot, SIGKILL the cell's service, let the barrier go, wait for supervisord."""
        self.before_ids, self.before_audit = await _ids(self.fleet), await _audit(self.fleet)
        old = await self.fleet.kill(self.service)
        if self.stopped is not None and self.service != "executor":
            os.kill(self.stopped, signal.SIGCONT)
        await self.fleet.clear_faults()
        await self.fleet.wait_restarted(self.service, old)
        if self.service == "approval_web":
            await self.fleet.wait_page()

    async def at_barrier(self, request: Any, proposal_id: str | None = None) -> None:
        """Arm the barrier, send `request` (a coroutine), crash when it is reached, let the
        request end."""
        await self.barrier()
        task = asyncio.ensure_future(request)
        try:
            await self.reached(proposal_id)
        except BaseException:
            if self.stopped is not None:
                os.kill(self.stopped, signal.SIGCONT)
            await self.fleet.clear_faults()
            await _finish(task)
            raise
        await self.crash()
        await _finish(task)


async def _new_proposals(fleet: Fleet, known: set[Any]) -> list[str]:
    return [
        row["id"]
        for row in await fleet.rows("SELECT id FROM proposals ORDER BY created_at")
        if row["id"] not in known
    ]


async def _approve_on_page(fleet: Fleet, proposal_id: str | None = None) -> tuple[int, str] | None:
    """A person approves the card on screen (the cell's proposal when given); None when no
    card is shown."""
    async with fleet.page() as page:
        form = await page.card()
        if form is None or (proposal_id is not None and form.get("proposal_id") != proposal_id):
            return None
        return await page.approve(form)


async def run_cell(fleet: Fleet, service: str, step: str) -> CellResult:
    """One cell of the matrix (see the module docstring)."""
    assert service in SERVICES and step in STEPS
    result = CellResult(service, step)
    await fleet.lab("POST", "reset")
    await fleet.settle()
    known = (await _ids(fleet))["proposals"]
    cell = _Cell(fleet, service, step, result)
    if step in ("intake", "prepare"):
        await cell.at_barrier(fleet.ask())
    else:
        await asyncio.wait_for(fleet.ask(), JOB_SECONDS)
    mine = await _new_proposals(fleet, known)
    if step == "card_shown":
        assert len(mine) == 1, mine
        await fleet.wait_page()

        async def show() -> None:
            async with fleet.page() as page:
                await page.card()

        await cell.at_barrier(show())
    elif step in STEPS[STEPS.index("consume") :]:
        assert len(mine) == 1, mine
        await fleet.wait_page()
        async with fleet.page() as page:
            form = await page.card()
            assert form is not None and form["proposal_id"] == mine[0], form
            await cell.at_barrier(page.approve(form), mine[0])
    mine = await _new_proposals(fleet, known)
    await fleet.wait_page()
    for proposal_id in mine:
        if (await fleet.proposal(proposal_id))["status"] == "pending":
            approved = await _approve_on_page(fleet, proposal_id)
            if approved is None:
                await fleet.approval().call(Deny(proposal_id=proposal_id))
    await check(fleet, cell, mine)
    return result


async def check(fleet: Fleet, cell: _Cell, mine: list[str]) -> None:
    """The four promises (see the module docstring), into the cell's result."""
    result = cell.result
    result.writes = len(await fleet.writes())
    if result.writes > 1:
        result.problems.append(f"{result.writes} writes")
    labels = []
    for proposal_id in mine:
        try:
            row = await fleet.wait_final(proposal_id)
            if row["status"] == "executed" and _verifies(cell):
                row = await fleet.wait_verified(proposal_id)
        except AssertionError as exc:
            result.problems.append(str(exc)[:200])
            continue
        if not await fleet.readable(proposal_id):
            result.problems.append(f"{proposal_id} not readable through approval.sock")
        labels.append(
            "/".join(
                str(v) for v in (row["status"], row["outcome"], row["verification"], row["status_code"]) if v
            )
        )
    result.outcome = ", ".join(labels) or "no proposal"
    ok, _ = await fleet.audit_ok()
    if not ok:
        result.problems.append("audit chain broken")
    after_ids, after_audit = await _ids(fleet), await _audit(fleet)
    lost = {
        t: cell.before_ids[t] - after_ids[t] for t in cell.before_ids if cell.before_ids[t] - after_ids[t]
    }
    if lost:
        result.problems.append(f"rows lost: {lost}")
    if after_audit[: len(cell.before_audit)] != cell.before_audit:
        result.problems.append("audit rows written before the kill changed or went")


def _verifies(cell: _Cell) -> bool:
    """Whether the executor lived through the job from the write on, so it must have recorded
    a verification (the outcome is recorded first; the verification follows it)."""
    killed_before_verifying = cell.service == "executor" and STEPS.index(cell.step) >= STEPS.index("claim")
    return not killed_before_verifying


def crash_table(results: list[CellResult]) -> str:
    """Step × service -> outcome (writes), a markdown table; a broken promise is marked."""
    by_cell = {(r.step, r.service): r for r in results}
    lines = ["| step | " + " | ".join(SERVICES) + " |", "|---|" + "---|" * len(SERVICES)]
    for step in STEPS:
        cells = []
        for service in SERVICES:
            r = by_cell.get((step, service))
            cells.append(
                "—"
                if r is None
                else f"{r.outcome} ({r.writes}w)" + ("" if r.ok else f" **FAIL: {'; '.join(r.problems)}**")
            )
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
