"""A row a service appended cannot disappear unseen (issue 24, item 6), and an execution must
follow its approval (item 11).

Each writer's connection is `Witness.attach`-ed, as the services open theirs. A store writer
deletes the newest row right after its commit (triggers dropped and put back), before the
writing service has answered, the worst moment: the writer's anchor still holds that row, the
next row does not reuse its number, and `verify_audit` names it, for each writer and each kind
of row it writes.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiosqlite
import pytest

from services.executor.executions import claim_approval, finish_execution, record_verification
from shared.errors import Code
from shared.store.approvals import approve, audit_refusal, deny, set_kill_switch
from shared.store.audit_seal import APPROVAL_WEB, EXECUTOR, AuditKey, Keyring
from shared.store.audit_witness import Witness
from shared.store.db import append_audit, audit_counter, db_now, migrate, open_store, verify_audit, write_tx
from tests.shared.store.approval_helpers import CARD_HASH, FACTS_HASH, add_proposal
from tests.shared.store.tampering import tamper

WEB, EXE = AuditKey.new(APPROVAL_WEB), AuditKey.new(EXECUTOR)


@dataclass
class Services:
    """approval_web's and the executor's connections to one store, each with its anchor."""

    db: Path
    web: aiosqlite.Connection
    exe: aiosqlite.Connection
    web_witness: Witness
    exe_witness: Witness
    proposal_id: str = ""
    approval_id: str = ""
    execution_id: str = ""

    def witness(self, writer: str) -> Witness:
        return self.web_witness if writer == APPROVAL_WEB else self.exe_witness


@contextlib.asynccontextmanager
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    db, keys = tmp_path / "fw.db", tmp_path / "keys"
    web = await open_store(db, keyring=Keyring(WEB))
    exe = await open_store(db, keyring=Keyring(EXE))
    try:
        await migrate(web)
        s = Services(db, web, exe, Witness(keys, APPROVAL_WEB), Witness(keys, EXECUTOR))
        s.web_witness.attach(web)
        s.exe_witness.attach(exe)
        yield s
    finally:
        await web.close()
        await exe.close()


async def proposal(s: Services) -> None:
    s.proposal_id = await add_proposal(s.web)


async def approval(s: Services) -> None:
    result = await approve(
        s.web,
        proposal_id=s.proposal_id,
        session_id="s",
        card_hash=CARD_HASH,
        facts_hash=FACTS_HASH,
        facts=None,
        shown_at=await db_now(s.web),
        ttl_seconds=300,
    )
    assert result.ok
    s.approval_id = result.approval_id


async def execution_start(s: Services) -> None:
    claim = await claim_approval(
        s.exe, s.approval_id, proposal_id=s.proposal_id, card_hash=CARD_HASH, facts_hash=FACTS_HASH
    )
    assert claim.ok and claim.execution_id
    s.execution_id = claim.execution_id


async def outcome(s: Services) -> None:
    assert await finish_execution(s.exe, s.execution_id, outcome="ok", message="done")


async def verification(s: Services) -> None:
    await record_verification(s.exe, s.execution_id, verification="verified", detail="seen")


async def denial(s: Services) -> None:
    await deny(s.web, s.proposal_id, actor="operator:1000")


async def web_refusal(s: Services) -> None:
    await audit_refusal(s.web, actor="approval_web", operation="approve", code=Code.APPROVAL_EXPIRED)


async def exe_refusal(s: Services) -> None:
    await audit_refusal(s.exe, actor="executor", operation="execute", code=Code.APPROVAL_NOT_FOUND)


async def kill_switch(s: Services) -> None:
    await set_kill_switch(s.web, True, actor="operator:1000")


async def kill_switch_sealed(s: Services) -> None:
    await append_audit(
        s.exe, actor="executor", kind="kill_switch_sealed", detail={"on": True, "request_seq": 1}
    )


Step = Callable[[Services], Awaitable[None]]
FLOW: tuple[Step, ...] = (proposal, approval, execution_start, outcome, verification)
CASES: dict[str, tuple[str, tuple[Step, ...], Step]] = {
    # kind: (writer, the steps before, the step whose row is deleted)
    "proposal": (APPROVAL_WEB, (), proposal),
    "approval": (APPROVAL_WEB, (proposal,), approval),
    "denial": (APPROVAL_WEB, (proposal,), denial),
    "kill_switch": (APPROVAL_WEB, (), kill_switch),
    "refusal of approval_web": (APPROVAL_WEB, (), web_refusal),
    "execution_start": (EXECUTOR, FLOW[:2], execution_start),
    "outcome": (EXECUTOR, FLOW[:3], outcome),
    "verification": (EXECUTOR, FLOW[:4], verification),
    "kill_switch_sealed": (EXECUTOR, (kill_switch,), kill_switch_sealed),
    "refusal of the executor": (EXECUTOR, (), exe_refusal),
}


def delete_newest(db: Path, *, counter_too: bool = False) -> int:
    """What a store writer does: drop the guard, delete the newest row, put the guard back
    (`tamper`); with `counter_too`, also roll the table's counter back. The seq deleted."""
    raw = sqlite3.connect(db)
    try:
        (seq,) = raw.execute("SELECT max(seq) FROM audit").fetchone()
    finally:
        raw.close()
    statements = [("DELETE FROM audit WHERE seq = ?", (seq,))]
    if counter_too:
        statements.append(("UPDATE sqlite_sequence SET seq = ? WHERE name = 'audit'", (seq - 1,)))
    tamper(db, *statements)
    restore = sqlite3.connect(db)
    try:
        restore.executescript(
            "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
            " BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;"
            "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
            " BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;"
        )
    finally:
        restore.close()
    return seq


@pytest.mark.parametrize("case", list(CASES))
async def test_the_newest_row_deleted_right_after_its_commit_is_named(tmp_path: Path, case: str) -> None:
    writer, before, step = CASES[case]
    async with services(tmp_path) as s:
        for earlier in before:
            await earlier(s)
        for w in (s.web_witness, s.exe_witness):
            await w.settle()
        await step(s)  # committed; the service has not answered yet
        deleted = delete_newest(s.db)
        await s.witness(writer).settle()  # the service answers
        witness = s.witness(writer)
        assert witness.anchor is not None and witness.anchor.seq == deleted
        result = await verify_audit(s.web, anchors=witness.anchors)
        assert (result.ok, result.first_bad_seq) == (False, deleted), result
        assert "missing" in (result.reason or "")
        # Against the counter alone (no anchor): named too.
        alone = await verify_audit(s.exe)
        assert (alone.ok, alone.first_bad_seq) == (False, deleted), alone
        # The next row does not take the deleted row's number.
        await exe_refusal(s)
        assert await audit_counter(s.exe) == deleted + 1
        after = await verify_audit(s.exe, anchors=s.exe_witness.anchors)
        assert (after.ok, after.first_bad_seq) == (False, deleted), after


@pytest.mark.parametrize("case", ["approval", "outcome"])
async def test_a_deletion_that_also_rolls_the_counter_back_is_named_by_the_writers_anchor(
    tmp_path: Path, case: str
) -> None:
    writer, before, step = CASES[case]
    async with services(tmp_path) as s:
        for earlier in before:
            await earlier(s)
        await step(s)
        deleted = delete_newest(s.db, counter_too=True)
        await s.witness(writer).settle()
        assert (await verify_audit(s.web)).ok  # the store alone cannot tell now
        result = await verify_audit(s.web, anchors=s.witness(writer).anchors)
        assert (result.ok, result.first_bad_seq) == (False, deleted), result
        assert "anchor" in (result.reason or "")


async def test_a_rolled_back_row_moves_no_anchor(tmp_path: Path) -> None:
    async with services(tmp_path) as s:
        await kill_switch(s)
        await s.web_witness.settle()
        kept = s.web_witness.anchor
        with pytest.raises(RuntimeError):
            async with write_tx(s.web):
                await append_audit(s.web, actor="approval_web", kind="refusal", detail={})
                raise RuntimeError("the change it records failed")
        await s.web_witness.settle()
        assert s.web_witness.anchor == kept
        assert (await verify_audit(s.web, anchors=s.web_witness.anchors)).ok


# --- item 11: an execution must follow its approval --------------------------------------


async def test_an_execution_with_no_approval_row_is_named(tmp_path: Path) -> None:
    """What a compromised approval_web leaves: an approval in the table, Execute sent, the change
    run, and no ``approval`` audit row (here: the approval inserted by hand)."""
    async with services(tmp_path) as s:
        await proposal(s)
        await s.web.execute(
            "INSERT INTO approvals (id, proposal_id, session_id, card_hash, facts_hash, shown_at,"
            " created_at, expires_at, used, used_at) VALUES ('a-forged', ?, 's', ?, ?,"
            " strftime('%Y-%m-%dT%H:%M:%fZ','now'), strftime('%Y-%m-%dT%H:%M:%fZ','now'),"
            " strftime('%Y-%m-%dT%H:%M:%fZ','now','+300 seconds'), 1, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
            (s.proposal_id, CARD_HASH, FACTS_HASH),
        )
        await s.web.execute("UPDATE proposals SET status = 'approved' WHERE id = ?", (s.proposal_id,))
        s.approval_id = "a-forged"
        await execution_start(s)
        await outcome(s)
        async with s.exe.execute("SELECT seq FROM audit WHERE kind = 'execution_start'") as cursor:
            (start_seq,) = await cursor.fetchone()
        result = await verify_audit(s.exe, anchors=s.exe_witness.anchors)
        assert (result.ok, result.first_bad_seq) == (False, start_seq), result
        assert f"execution {s.execution_id}" in (result.reason or "")
        assert "no approval row of approval a-forged" in (result.reason or "")


async def test_an_execution_of_another_card_than_the_one_approved_is_named(tmp_path: Path) -> None:
    async with services(tmp_path) as s:
        for step in FLOW[:2]:
            await step(s)
        await append_audit(
            s.exe,
            actor="executor",
            kind="execution_start",
            proposal_id=s.proposal_id,
            detail={"approval_id": s.approval_id, "execution_id": "x-other", "card_hash": "d" * 64},
        )
        result = await verify_audit(s.exe)
        assert (
            result.ok is False and "card hash" in (result.reason or "") and "x-other" in (result.reason or "")
        )


async def test_an_outcome_with_no_execution_start_is_named_and_a_whole_flow_verifies(tmp_path: Path) -> None:
    async with services(tmp_path) as s:
        for step in FLOW:
            await step(s)
        assert (await verify_audit(s.exe, anchors=s.exe_witness.anchors)).ok
        await append_audit(
            s.exe, actor="executor", kind="outcome", detail={"execution_id": "x-nowhere", "outcome": "ok"}
        )
        result = await verify_audit(s.exe)
        assert result.ok is False and "x-nowhere" in (result.reason or "")
