"""One change per room at a time, across questions and sessions: approval_web as a real process
over approval.sock, the executor as a real process, the campus lab.

Each rule has a test that fails when the rule is removed: an identical pending proposal is
answered with the one waiting (never queued twice, whoever asks); another change in the way
(pending, approved and not run) refuses ``target_busy``; a last change that ended ``unknown``
or ran without being verified refuses ``target_unverified`` until the executor's fresh read
verifies it or an operator acknowledges it (audited). A change's outcome or verification that
the lab cannot produce on demand is set in the store, the way these tests move time."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from shared.errors import Code
from shared.store.approvals import approve
from shared.store.db import db_now
from shared.wire.approval import (
    Acknowledge,
    GetProposalState,
    GetStatus,
    ProposalAccepted,
    ProposalExists,
    ProposalState,
    Status,
    SubmitProposal,
)
from shared.wire.protocol import ErrorReply
from tests.approval_web.helpers import (
    CLASSROOM,
    SANDBOX_DEVICES,
    Backend,
    Stack,
    approve_and_execute,
    ask,
    audit,
    backend,
    reader,
    rows,
    stack,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

A, B, _ = SANDBOX_DEVICES


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("one_change")) as running:
        yield running


def record(action: str = "start", channel: str = f"{CLASSROOM}-1", **fields: Any) -> SubmitProposal:
    fields.setdefault("reason", "the class starts soon")
    fields.setdefault("proposed_by", "assistant")
    return SubmitProposal(
        tool="batch_recording", arguments={"action": action, "device_ids": [channel]}, **fields
    )


async def submit(s: Stack, message: SubmitProposal) -> ProposalAccepted | ProposalExists | ErrorReply:
    return await ask(s.settings, message, ProposalAccepted | ProposalExists)


async def refused(s: Stack, message: SubmitProposal, code: Code, *, rechecked: int = 0) -> dict[str, Any]:
    """Refused with `code`: no proposal or approval stored, no write; the audit gains the
    fresh reads' `rechecked` ``verification`` rows (recorded on the execution) and one
    ``refusal`` row (returned)."""
    before, seen, writes = await rows(s.settings), len(await audit(s.settings)), len(s.lab.writes())
    reply = await submit(s, message)
    assert isinstance(reply, ErrorReply) and reply.code == code, reply
    after = await rows(s.settings)
    assert {k: v for k, v in after.items() if k != "executions"} == {
        k: v for k, v in before.items() if k != "executions"
    }
    assert rechecked or after["executions"] == before["executions"]
    added = (await audit(s.settings))[seen:]
    assert [a["kind"] for a in added] == ["verification"] * rechecked + ["refusal"]
    assert added[-1]["detail"]["code"] == code
    assert len(s.lab.writes()) == writes
    return added[-1]


SETTINGS_SQL = {
    "not_verified": "UPDATE executions SET verification = 'not_observed' WHERE proposal_id = ?",
    "unknown": "UPDATE executions SET outcome = 'unknown', verification = NULL WHERE proposal_id = ?",
}


async def set_execution(s: Stack, proposal_id: str, how: str) -> None:
    """Make a change's execution `how` (`SETTINGS_SQL`) in the store: what the lab cannot do on demand."""
    async with reader(s.settings) as conn:
        await conn.execute(SETTINGS_SQL[how], (proposal_id,))


async def test_the_same_change_asked_twice_is_queued_once_and_answered_with_the_one_waiting(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        first = await submit(s, record(turn_id="t_" + "1" * 32))
        assert isinstance(first, ProposalAccepted), first
        again = await submit(s, record(reason="other words, same change", turn_id="t_" + "2" * 32))
        assert again == ProposalExists(
            proposal_id=first.proposal_id, status="pending", expires_at=first.expires_at
        )
        drafted = await submit(s, record(proposed_by="operator"))
        assert isinstance(drafted, ProposalExists) and drafted.proposal_id == first.proposal_id
        assert [r[0] for r in (await rows(s.settings))["proposals"]] == [first.proposal_id]
        repeated = [a for a in await audit(s.settings) if a["kind"] == "proposal_repeated"]
        assert [(a["proposal_id"], a["detail"]["turn_id"]) for a in repeated] == [
            (first.proposal_id, "t_" + "2" * 32),
            (first.proposal_id, None),
        ]
        state = await ask(s.settings, GetProposalState(proposal_id=first.proposal_id), ProposalState)
        assert (state.action, state.target_names) == ("start", ("Sandbox Classroom",))


async def test_an_expired_or_denied_identical_proposal_does_not_stop_a_new_one(shared: Backend) -> None:
    async with stack(shared) as s:
        first = await submit(s, record())
        assert isinstance(first, ProposalAccepted)
        async with reader(s.settings) as conn:
            await conn.execute(
                "UPDATE proposals SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 seconds')"
            )
        second = await submit(s, record())
        assert isinstance(second, ProposalAccepted) and second.proposal_id != first.proposal_id


async def test_another_change_for_a_room_with_one_pending_is_refused_as_target_busy(shared: Backend) -> None:
    async with stack(shared) as s:
        waiting = await submit(s, record())
        assert isinstance(waiting, ProposalAccepted)
        row = await refused(
            s,
            SubmitProposal(
                tool="batch_reboot",
                arguments={"device_ids": [CLASSROOM]},
                reason="stuck",
                proposed_by="operator",
            ),
            Code.TARGET_BUSY,
        )
        assert waiting.proposal_id in row["detail"]["message"]
        other_room = await submit(s, record(channel=f"{A}-1"))
        assert isinstance(other_room, ProposalAccepted)


async def test_a_room_whose_change_was_approved_and_has_not_run_is_busy(shared: Backend) -> None:
    async with stack(shared) as s:
        waiting = await submit(s, record())
        assert isinstance(waiting, ProposalAccepted)
        async with reader(s.settings) as conn:
            approved = await approve(
                conn,
                proposal_id=waiting.proposal_id,
                session_id="s",
                card_hash="c" * 64,
                facts_hash="f" * 64,
                facts=None,
                shown_at=await db_now(conn),
                ttl_seconds=300,
            )
        assert approved.ok
        await refused(s, record(action="stop"), Code.TARGET_BUSY)


async def test_a_verified_change_leaves_its_room_free(shared: Backend) -> None:
    async with stack(shared) as s:
        ran = await submit(s, record())
        assert isinstance(ran, ProposalAccepted)
        report = await approve_and_execute(s, ran.proposal_id)
        assert (report.outcome, report.verification) == ("ok", "verified")
        stop = await submit(s, record(action="stop"))
        assert isinstance(stop, ProposalAccepted), stop
        assert (await ask(s.settings, GetStatus(), Status)).unsettled == ()


async def test_an_unverified_change_is_settled_by_a_fresh_read_that_verifies_it(shared: Backend) -> None:
    async with stack(shared) as s:
        ran = await submit(s, record())
        assert isinstance(ran, ProposalAccepted)
        await approve_and_execute(s, ran.proposal_id)
        await set_execution(s, ran.proposal_id, "not_verified")
        (unsettled,) = (await ask(s.settings, GetStatus(), Status)).unsettled
        assert (unsettled.proposal_id, unsettled.target_names, unsettled.outcome) == (
            ran.proposal_id,
            ("Sandbox Classroom",),
            "ok",
        )
        stop = await submit(s, record(action="stop"))
        assert isinstance(stop, ProposalAccepted), stop
        state = await ask(s.settings, GetProposalState(proposal_id=ran.proposal_id), ProposalState)
        assert state.verification == "verified"
        rechecks = [
            a for a in await audit(s.settings) if a["kind"] == "verification" and a["detail"].get("recheck")
        ]
        assert [(a["proposal_id"], a["detail"]["verification"]) for a in rechecks] == [
            (ran.proposal_id, "verified")
        ]
        assert [w["tool"] for w in s.lab.writes()] == ["batch_recording"]


async def test_an_unknown_change_holds_its_room_until_an_operator_acknowledges_it(shared: Backend) -> None:
    async with stack(shared) as s:
        ran = await submit(s, record())
        assert isinstance(ran, ProposalAccepted)
        await approve_and_execute(s, ran.proposal_id)
        await set_execution(s, ran.proposal_id, "unknown")
        s.lab.reset()  # the room is not recording: a fresh read cannot verify the start
        row = await refused(s, record(), Code.TARGET_UNVERIFIED, rechecked=1)
        assert f"fleetwatch acknowledge {ran.proposal_id}" in row["detail"]["message"]
        await refused(s, record(action="stop"), Code.TARGET_UNVERIFIED, rechecked=1)
        state = await ask(s.settings, GetProposalState(proposal_id=ran.proposal_id), ProposalState)
        assert (state.outcome, state.verification, state.acknowledged) == ("unknown", "contradicted", False)
        other_room = await submit(s, record(channel=f"{B}-1", action="stop"))
        assert isinstance(other_room, ProposalAccepted), other_room

        acknowledged = await ask(
            s.settings, Acknowledge(proposal_id=ran.proposal_id, actor="dana"), ProposalState
        )
        assert isinstance(acknowledged, ProposalState) and acknowledged.acknowledged
        (ack,) = [a for a in await audit(s.settings) if a["kind"] == "acknowledgement"]
        assert (ack["proposal_id"], ack["actor"], ack["detail"]["outcome"]) == (
            ran.proposal_id,
            f"dana:{os.getuid()}",
            "unknown",
        )
        assert (await ask(s.settings, GetStatus(), Status)).unsettled == ()
        again = await submit(s, record())
        assert isinstance(again, ProposalAccepted), again
        twice = await ask(s.settings, Acknowledge(proposal_id=ran.proposal_id), ProposalState)
        assert isinstance(twice, ErrorReply) and twice.code == Code.NOTHING_TO_ACKNOWLEDGE


async def test_a_change_that_never_ran_has_nothing_to_acknowledge(shared: Backend) -> None:
    async with stack(shared) as s:
        waiting = await submit(s, record())
        assert isinstance(waiting, ProposalAccepted)
        reply = await ask(s.settings, Acknowledge(proposal_id=waiting.proposal_id), ProposalState)
        assert isinstance(reply, ErrorReply) and reply.code == Code.NOTHING_TO_ACKNOWLEDGE
        (row,) = [a for a in (await audit(s.settings))[-1:] if a["kind"] == "refusal"]
        assert row["detail"]["operation"] == "acknowledge"
