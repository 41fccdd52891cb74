"""The kill switch as the executor trusts it: only a state it sealed under its own key. A store
writer who turns writes back on without a row, forges or removes the seal, or puts an older "off"
seal back gets paused writes, never running ones; a pause the executor could not seal pauses."""

from __future__ import annotations

import json

import pytest

from services.executor.kill_switch import SEAL_KEY
from shared.errors import Code
from shared.store.approvals import set_kill_switch
from shared.wire.client import request
from shared.wire.executor import HealthReport, SealKillSwitch
from shared.wire.protocol import ErrorReply
from tests.executor.harness import IDLE, TIMEOUT, Harness
from tests.shared.store.tampering import tamper

pytestmark = pytest.mark.asyncio(loop_scope="module")
START = ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})


async def seal_value(harness: Harness) -> str:
    async with harness.conn.execute("SELECT value FROM kv WHERE key = ?", (SEAL_KEY,)) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return str(row[0])


async def runs(harness: Harness) -> str:
    """Propose, approve and execute a recording start; the outcome."""
    _, approval_id = await harness.proposed_and_approved(*START)
    return (await harness.execute(approval_id)).outcome


async def test_a_sealed_pause_refuses_writes_and_a_sealed_resume_lets_them_run(harness: Harness) -> None:
    paused = await harness.set_kill_switch(True)
    assert paused.kill_switch
    _, approval_id = await harness.proposed_and_approved(*START)
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", Code.KILL_SWITCH_ON)
    mark = await harness.audit_seq()
    assert not (await harness.set_kill_switch(False)).kill_switch
    sealed = [(r["kind"], json.loads(r["detail_json"])) for r in await harness.audit(mark)]
    assert sealed == [
        ("kill_switch", {"on": False}),
        ("kill_switch_sealed", {"on": False, "request_seq": mark + 1}),
    ]
    assert await runs(harness) == "ok"


async def test_a_pause_the_executor_did_not_seal_still_pauses(harness: Harness) -> None:
    await set_kill_switch(harness.conn, True, actor="operator:0")  # recorded; the executor never asked
    assert (await harness.health()).kill_switch


async def test_writes_turned_back_on_in_the_store_without_the_executors_seal_stay_paused(
    harness: Harness,
) -> None:
    await harness.set_kill_switch(True)
    on = json.loads(await seal_value(harness))
    forged = {**on, "on": False}
    tamper(harness.settings.db, ("UPDATE kv SET value = ? WHERE key = ?", (json.dumps(forged), SEAL_KEY)))
    assert (await harness.health()).kill_switch, "a seal whose MAC does not verify"
    tamper(harness.settings.db, ("DELETE FROM kv WHERE key = ?", (SEAL_KEY,)))
    assert (await harness.health()).kill_switch, "no seal after a pause"
    # The pause's own seal back, and a newer "off" request written straight into the store.
    tamper(harness.settings.db, ("INSERT INTO kv (key, value) VALUES (?, ?)", (SEAL_KEY, json.dumps(on))))
    head = await harness.audit_seq()
    tamper(
        harness.settings.db,
        (
            "INSERT INTO audit (seq, at, actor, kind, detail_json, prev_hash, hash, writer, mac)"
            " SELECT seq + 1, at, 'operator:0', 'kill_switch', '{\"on\":false}', hash, 'forged', 'approval_web', 'x'"
            " FROM audit WHERE seq = ?",
            (head,),
        ),
    )
    assert (await harness.health()).kill_switch, "a resume request the executor never sealed"
    assert await runs(harness) == "refused"


async def test_an_older_off_seal_put_back_after_a_pause_stays_paused(harness: Harness) -> None:
    await harness.set_kill_switch(True)
    await harness.set_kill_switch(False)
    old_off = await seal_value(harness)
    before = await harness.audit_seq()
    await harness.set_kill_switch(True)
    # The pause's two rows removed, and the earlier (valid) "off" seal put back.
    tamper(
        harness.settings.db,
        ("DELETE FROM audit WHERE seq > ?", (before,)),
        ("UPDATE kv SET value = ? WHERE key = ?", (old_off, SEAL_KEY)),
    )
    assert (await harness.health()).kill_switch
    assert await runs(harness) == "refused"


async def test_the_executor_seals_only_the_newest_request_as_recorded(harness: Harness) -> None:
    older = await set_kill_switch(harness.conn, False, actor="operator:0")
    await set_kill_switch(harness.conn, True, actor="operator:0")
    for message in (
        SealKillSwitch(request_seq=older.seq, on=False),
        SealKillSwitch(request_seq=older.seq + 1, on=False),
    ):
        reply = await request(harness.executor.socket, message, HealthReport, timeout_seconds=TIMEOUT)
        assert isinstance(reply, ErrorReply) and reply.code == Code.KILL_SWITCH_NOT_CONFIRMED, reply
    assert (await harness.health()).kill_switch
