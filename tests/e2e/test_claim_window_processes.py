"""The approval's window is checked at the claim, with the real approval_web and executor
(issue 24, item 5): a person presses Approve, approval_web sends Execute, and approval_web is
killed while that Execute waits unread in a frozen executor's socket. Resumed after the card's
window, the executor claims nothing: no write reaches the lab, and the proposal ends
``not_run`` with ``approval_expired``, readable on the page's outcome page (approval_web
started again), in ``fleetwatch pending show`` and in the audit."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from pathlib import Path

import aiohttp
import aiosqlite

from shared.store.approvals import get_proposal
from shared.store.db import db_now, open_store
from shared.web.page_secret import read_secret_file
from tests.approval_web.page.helpers import forms_of
from tests.e2e.stack import IDLE, PAGE_LINE, Stack, running_stack, signed_in
from tests.executor.harness import copy_policy, edit
from tests.procs import start_service
from tests.reliability.fleet import ctl
from tests.support import WAIT_SECONDS, wait_until
from tests.unix_sent import unread_bytes

WINDOW_SECONDS = 30
"""The shortest card window the policy allows (``limits.approval_ttl_seconds``)."""
START = ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})


async def test_approval_web_killed_while_execute_waits_in_a_frozen_executor_runs_nothing(
    tmp_path: Path,
) -> None:
    policy = copy_policy(tmp_path / "policy")
    edit(policy / "policy.yaml", "approval_ttl_seconds: 300", f"approval_ttl_seconds: {WINDOW_SECONDS}")
    async with running_stack(tmp_path / "home", FLEETWATCH_POLICY_DIR=str(policy)) as stack:
        proposal_id = await stack.propose(*START)
        async with contextlib.aclosing(_Store(await open_store(stack.settings.db))) as store:
            await _run(stack, store.conn, proposal_id)


@dataclasses.dataclass
class _Store:
    """A reading connection closed at the end whatever happens."""

    conn: aiosqlite.Connection

    async def aclose(self) -> None:
        await self.conn.close()


async def _run(stack: Stack, conn: aiosqlite.Connection, proposal_id: str) -> None:
    """Freeze the executor, Approve, kill approval_web, resume after the window, then read."""
    frozen = stack.executor.pid
    try:
        async with signed_in(stack.url, stack.secret) as (browser, headers):
            form = forms_of(await (await browser.get("/")).text()).forms["/approve"]
            assert form["proposal_id"] == proposal_id
            os.kill(frozen, signal.SIGSTOP)
            pressed = asyncio.ensure_future(
                browser.post("/approve", data=form, headers=headers, allow_redirects=False)
            )

            async def approved() -> str | None:
                async with conn.execute(
                    "SELECT expires_at FROM approvals WHERE proposal_id = ? AND used = 1", (proposal_id,)
                ) as cursor:
                    row = await cursor.fetchone()
                return None if row is None else str(row[0])

            expires_at = await wait_until(approved, what="Approve recorded", seconds=WAIT_SECONDS)
            # approval_web sends Execute just after recording the approval: it is killed only once
            # the frame sits unread in the frozen executor's socket, before any answer.
            await wait_until(
                lambda: unread_bytes(stack.approval_web.pid) > 0,
                what="Execute waiting unread in the frozen executor's socket",
                seconds=WAIT_SECONDS,
            )
            await stack.approval_web.kill()
            # The page's request ends with its process (the connection reset).
            with contextlib.suppress(aiohttp.ClientError):
                await pressed
        await wait_until(
            lambda: _after(conn, expires_at),
            what="the card's window closed on the database clock",
            seconds=WINDOW_SECONDS + WAIT_SECONDS,
        )
    finally:
        os.kill(frozen, signal.SIGCONT)

    async def final() -> bool:
        row = await get_proposal(conn, proposal_id)
        return row is not None and row.status not in ("pending", "approved")

    await wait_until(final, what="the proposal in a final state", seconds=WAIT_SECONDS)
    proposal = await get_proposal(conn, proposal_id)
    assert proposal is not None and (proposal.status, proposal.status_code) == (
        "not_run",
        "approval_expired",
    )
    assert stack.writes() == []
    async with conn.execute(
        "SELECT actor, detail_json FROM audit WHERE proposal_id = ? AND kind = 'refusal'", (proposal_id,)
    ) as cursor:
        refusals = [dict(r) for r in await cursor.fetchall()]
    assert [r["actor"] for r in refusals] == ["executor"], refusals
    assert '"code":"approval_expired"' in refusals[0]["detail_json"]
    assert '"not_run":true' in refusals[0]["detail_json"]
    async with conn.execute(
        "SELECT count(*) FROM executions WHERE proposal_id = ?", (proposal_id,)
    ) as cursor:
        assert (await cursor.fetchone())[0] == 0

    # Readable: approval_web started again, then `fleetwatch pending show` and the outcome page.
    again = await start_service("services.approval_web", stack.env)
    try:
        # The log is appended to: the second page line is the new page's.
        found = await wait_until(
            lambda: PAGE_LINE.findall(again.log_text(tail=100_000))[1:],
            what="the restarted page's address",
            seconds=WAIT_SECONDS,
            process=again.process,
            log=again.log_text,
        )
        url, secret_file = found[-1]
        code, out = await ctl(stack.env, "pending", "show", proposal_id)
        assert code == 0, out
        assert "approved but not run" in out and "approval_expired" in out, out
        async with signed_in(url, read_secret_file(Path(secret_file))) as (browser, _):
            outcome = await (await browser.get(f"/outcome/{proposal_id}")).text()
        assert "Nothing ran" in outcome and "window closed before the change could start" in outcome, outcome
    finally:
        await again.stop()


async def _after(conn, moment: str) -> bool:
    return moment <= await db_now(conn)
