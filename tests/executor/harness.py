"""The executor's test harness: the campus lab in this process, a real executor process talking
to it over HTTP, the real socket, and a store connection playing approval_web's part (insert the
proposal, show the card, consume the approval) through `shared.store.approvals`, signing its audit rows
with a key of approval_web's of its own (the executor never checks approval_web's rows).

The sandbox team of the campus scenario (services/lab/scenarios/campus.yaml):
- 29088800001 "Sandbox Pearl-2": online, idle, channels 1 and 2, firmware behind, no event;
- 29088800002 "Sandbox Pearl Mini": recording on channel 1, an event in 60 minutes;
- 29088800003 "Sandbox Nano": idle, firmware behind, an event in 300 minutes;
- 29088800004 "Sandbox Classroom": online, idle, channel 1 "Lecture", a class in 25 minutes.
The fence allows 001 and 002 (and the sandbox team ID), so 003 and 004 are off the allowlist.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiosqlite
import msgspec

from services.lab.server import LabHandle
from services.lab.state import Event
from shared.binding import record_from_bytes
from shared.config import REPO_POLICY_DIR
from shared.epiphan.slots import SignIn, write_slot
from shared.policy.loader import load_tool_policy
from shared.store.approvals import approve, get_proposal, insert_proposal, set_kill_switch
from shared.store.audit_seal import APPROVAL_WEB
from shared.store.db import db_now, open_store
from shared.wire.client import request
from shared.wire.executor import (
    Execute,
    ExecutionReport,
    Health,
    HealthReport,
    Inspect,
    Inspection,
    ListWritable,
    Prepare,
    Prepared,
    SealKillSwitch,
    WritableDevices,
)
from shared.wire.protocol import ErrorReply
from tests.audit_keys import fresh_keyring
from tests.procs import ServiceProcess, base_env, start_service

IDLE, RECORDING, NANO, CLASSROOM = "29088800001", "29088800002", "29088800003", "29088800004"
SANDBOX_STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"
NORMAL_DEVICE = "19012340104"
TIMEOUT = 30.0
CARD_HASH = "c" * 64
"""The page's card hash the harness's approvals carry (the executor compares, never computes it)."""
APPROVER_UIDS = (1001, 1002)
"""The uids of the page sessions that press Approve (two people for a rule with ``approvers: 2``)."""
TABLES = {
    "proposals": "SELECT * FROM proposals ORDER BY id",
    "proposal_targets": "SELECT * FROM proposal_targets ORDER BY proposal_id",
    "approvals": "SELECT * FROM approvals ORDER BY id",
    "first_approvals": "SELECT * FROM first_approvals ORDER BY id",
    "executions": "SELECT * FROM executions ORDER BY id",
    "kv": "SELECT * FROM kv ORDER BY key",
}


def add_event(lab: LabHandle, event_id: str, device_id: str, *, minutes: int, title: str = "") -> Event:
    """Put a CMS event on a lab device, starting `minutes` from now (the lab's clock), 60 long."""
    start = lab.now.replace(second=0, microsecond=0) + timedelta(minutes=minutes)
    event = Event(
        id=event_id,
        title=title or f"Event {event_id}",
        cms="epiphan",
        device_id=device_id,
        start=start,
        finish=start + timedelta(minutes=60),
        confirmed=False,
        channels=[],
    )
    lab.state.events[event_id] = event
    return event


def copy_policy(folder: Path) -> Path:
    """A copy of the repository's policy folder that a test may edit."""
    shutil.copytree(REPO_POLICY_DIR, folder)
    return folder


def edit(path: Path, old: str, new: str) -> None:
    """Replace `old` (which must occur once) by `new` in a text file."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path.name}"
    path.write_text(text.replace(old, new))


@dataclass
class Harness:
    """One lab, one executor process, one store connection; see the module docstring."""

    lab: LabHandle
    home: Path
    env: dict[str, str]
    conn: aiosqlite.Connection
    executor: ServiceProcess
    args: tuple[str, ...] = ()
    counter: list[int] = field(default_factory=lambda: [0])
    sent: dict[str, Execute] = field(default_factory=dict)
    """The Execute message of each approval the harness recorded, as the page would send it."""

    @classmethod
    async def start(cls, lab: LabHandle, home: Path, *args: str, **env: str) -> Harness:
        sandbox = lab.teams["sandbox"]
        policy_dir = copy_policy(home / "policy")
        defaults = {
            "FLEETWATCH_EPIPHAN_MCP_URL": lab.mcp_url,
            "FLEETWATCH_WRITE_DEVICE_IDS": f"{IDLE},{RECORDING}",
            "FLEETWATCH_WRITE_TEAM_ID": sandbox.team_id,
            "FLEETWATCH_POLICY_DIR": str(policy_dir),
        }
        full_env = base_env(home, **{**defaults, **env})
        executor = await start_service("services.executor", full_env, *args)
        conn = await open_store(executor.settings.db, keyring=fresh_keyring(APPROVAL_WEB))
        harness = cls(lab, home, full_env, conn, executor, args)
        harness.sign_in()
        return harness

    @property
    def settings(self) -> Any:
        return self.executor.settings

    @property
    def policy_dir(self) -> Path:
        return Path(self.env["FLEETWATCH_POLICY_DIR"])

    def sign_in(self) -> None:
        """Write the sandbox slot (the executor reads it afresh for each operation)."""
        sandbox = self.lab.teams["sandbox"]
        write_slot(
            self.settings.sandbox_token_file,
            SignIn(access_token=sandbox.token, server=self.lab.mcp_url, team_id=sandbox.team_id, kind="lab"),
        )

    def sign_out(self) -> None:
        self.settings.sandbox_token_file.unlink(missing_ok=True)

    async def restart(self, *, kill: bool = False) -> None:
        """Stop (SIGTERM, or SIGKILL when `kill`) and start the executor again: a new key."""
        await (self.executor.kill() if kill else self.executor.stop())
        self.executor = await start_service("services.executor", self.env, *self.args)

    async def close(self) -> None:
        await self.executor.stop()
        await self.conn.close()

    # --- the socket -------------------------------------------------------------------------

    async def prepare(
        self, tool: str, arguments: dict[str, Any], reason: str = "a test"
    ) -> Prepared | ErrorReply:
        self.counter[0] += 1
        message = Prepare(
            proposal_id=f"p-{self.counter[0]:012x}", tool=tool, arguments=arguments, reason=reason
        )
        return await request(self.executor.socket, message, Prepared, timeout_seconds=TIMEOUT)

    async def inspect(self, proposal_id: str) -> Inspection | ErrorReply:
        return await request(
            self.executor.socket, Inspect(proposal_id=proposal_id), Inspection, timeout_seconds=TIMEOUT
        )

    async def execute(self, approval_id: str, **changes: str) -> ExecutionReport:
        """Execute as the page sends it: the approval with what was approved (proposal ID, card
        hash, facts hash, as `approve` or `show` recorded them), any of them replaced by
        `changes`."""
        sent = self.sent.get(approval_id) or Execute(
            approval_id=approval_id, proposal_id="p-000000000000", card_hash=CARD_HASH, facts_hash="0" * 64
        )
        message = msgspec.structs.replace(sent, **changes)
        reply = await request(self.executor.socket, message, ExecutionReport, timeout_seconds=TIMEOUT)
        assert isinstance(reply, ExecutionReport), reply
        return reply

    async def health(self) -> HealthReport:
        reply = await request(self.executor.socket, Health(), HealthReport, timeout_seconds=TIMEOUT)
        assert isinstance(reply, HealthReport), reply
        return reply

    async def set_kill_switch(self, on: bool) -> HealthReport:
        """The operator's pause/resume as approval_web records it, then sealed by the executor
        (the one state it trusts)."""
        head = await set_kill_switch(self.conn, on, actor="operator:0")
        reply = await request(
            self.executor.socket,
            SealKillSwitch(request_seq=head.seq, on=on),
            HealthReport,
            timeout_seconds=TIMEOUT,
        )
        assert isinstance(reply, HealthReport) and reply.kill_switch is on, reply
        return reply

    async def list_writable(self) -> WritableDevices | ErrorReply:
        return await request(self.executor.socket, ListWritable(), WritableDevices, timeout_seconds=TIMEOUT)

    # --- approval_web's part ------------------------------------------------------------------

    async def propose(self, tool: str, arguments: dict[str, Any], reason: str = "a test") -> str:
        """Prepare over the socket and store the proposal; its ID."""
        prepared = await self.prepare(tool, arguments, reason)
        assert isinstance(prepared, Prepared), prepared
        record = record_from_bytes(prepared.record)
        await insert_proposal(
            self.conn,
            record=record,
            record_bytes=prepared.record,
            seal=prepared.seal,
            fingerprint_hash=prepared.fingerprint_hash,
            proposed_by="assistant",
            turn_id=None,
            ttl_seconds=600,
        )
        return record.proposal_id

    async def facts(self, proposal_id: str) -> Inspection:
        """The Inspect behind a card (its binding facts must all have been read)."""
        inspection = await self.inspect(proposal_id)
        assert isinstance(inspection, Inspection) and inspection.facts_hash, inspection
        return inspection

    async def show(self, proposal_id: str, ttl_seconds: int = 300) -> str:
        """An approval nobody consumed (only a hand-made row can be one: the page records an
        approval consumed), bound to the card's facts; its ID."""
        inspection = await self.facts(proposal_id)
        self.counter[0] += 1
        approval_id = f"a-{self.counter[0]:012d}"
        await self.conn.execute(
            "INSERT INTO approvals (id, proposal_id, session_id, card_hash, facts_hash, shown_at, expires_at)"
            " VALUES (?, ?, 's-test', ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),"
            " strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?))",
            (approval_id, proposal_id, CARD_HASH, inspection.facts_hash, f"{ttl_seconds:+d} seconds"),
        )
        self.sent[approval_id] = Execute(
            approval_id=approval_id,
            proposal_id=proposal_id,
            card_hash=CARD_HASH,
            facts_hash=inspection.facts_hash,
        )
        return approval_id

    async def approve(self, proposal_id: str, ttl_seconds: int = 300, *, people: int | None = None) -> str:
        """Card shown (a fresh Inspect) and Approve pressed, as the page does: an approval
        recorded consumed and bound to the card's facts, its window `ttl_seconds` long; its ID.
        A tool whose rule (in the policy copy) asks two people is approved by two uids, unless
        `people` says how many press Approve (1: the page's one person, as if it were one)."""
        inspection = await self.facts(proposal_id)
        row = await get_proposal(self.conn, proposal_id)
        assert row is not None
        rule = load_tool_policy(self.policy_dir / "tool_policy.yaml").propose.get(row.tool)
        needed = rule.approvers if rule is not None else 1
        for uid in APPROVER_UIDS[: needed if people is None else people]:
            result = await approve(
                self.conn,
                proposal_id=proposal_id,
                session_id=f"s-test-{uid}",
                card_hash=CARD_HASH,
                facts_hash=inspection.facts_hash,
                facts=inspection.facts,
                shown_at=await db_now(self.conn),
                ttl_seconds=ttl_seconds,
                uid=uid,
                approvers=needed if people is None else people,
            )
            assert result.ok, result
        self.sent[result.approval_id] = Execute(
            approval_id=result.approval_id,
            proposal_id=proposal_id,
            card_hash=CARD_HASH,
            facts_hash=inspection.facts_hash,
        )
        return result.approval_id

    async def proposed_and_approved(self, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
        proposal_id = await self.propose(tool, arguments)
        return proposal_id, await self.approve(proposal_id)

    # --- the store ---------------------------------------------------------------------------

    async def rows(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of the approval tables (not the audit)."""
        out = {}
        for table, sql in TABLES.items():
            async with self.conn.execute(sql) as cursor:
                out[table] = [tuple(row) for row in await cursor.fetchall()]
        return out

    async def audit(self, after: int = 0) -> list[dict[str, Any]]:
        """Audit rows with seq > `after`: ``{seq, kind, proposal_id, detail_json}``."""
        async with self.conn.execute(
            "SELECT seq, kind, proposal_id, detail_json FROM audit WHERE seq > ? ORDER BY seq", (after,)
        ) as cursor:
            return [dict(row) for row in await cursor.fetchall()]

    async def audit_seq(self) -> int:
        async with self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM audit") as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return int(row[0])
