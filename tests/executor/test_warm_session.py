"""The executor's warm MCP session (issue 14), against the real executor process and the lab:
one session for the sandbox sign-in, kept while the slot holds the same token and re-read
before each operation, so a sign-in removed from its slot still stops the next write and the
next read at once; a rotated token moves the next operation to a new session. The lab records
the MCP session of every call (`LabHandle.calls`), which is how these tests see the session.
"""

from __future__ import annotations

import pytest

from shared.epiphan.slots import SignIn, write_slot
from shared.errors import Code
from shared.wire.executor import Inspection
from shared.wire.protocol import ErrorReply
from tests.executor.harness import IDLE, Harness

pytestmark = pytest.mark.asyncio(loop_scope="module")
START = {"action": "start", "device_ids": [f"{IDLE}-1"]}
STOP = {"action": "stop", "device_ids": [f"{IDLE}-1"]}


async def test_prepare_inspect_and_execute_reuse_one_session_while_the_slot_keeps_its_token(
    harness: Harness,
) -> None:
    _, first = await harness.proposed_and_approved("batch_recording", START)
    assert (await harness.execute(first)).outcome == "ok"
    _, second = await harness.proposed_and_approved("batch_recording", STOP)
    assert (await harness.execute(second)).outcome == "ok"
    tools = [tool for tool, _ in harness.lab.calls()]
    assert tools.count("batch_recording") == 2 and len(tools) > 10
    assert len({session for _, session in harness.lab.calls()}) == 1


async def test_a_sign_in_removed_from_its_slot_stops_the_next_write_and_the_next_read_on_a_warm_session(
    harness: Harness,
) -> None:
    _, warm = await harness.proposed_and_approved("batch_recording", START)
    assert (await harness.execute(warm)).outcome == "ok"  # the session is open and warm now
    proposal_id, approval_id = await harness.proposed_and_approved("batch_recording", STOP)
    reached = len(harness.lab.calls())
    harness.sign_out()

    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", Code.NO_SIGN_IN)
    inspected = await harness.inspect(proposal_id)  # the card: nothing read, no facts to approve
    assert isinstance(inspected, Inspection) and inspected.would_refuse == Code.NO_SIGN_IN
    assert not inspected.complete and inspected.facts_hash == ""
    assert inspected.targets == ()  # not read, so not "not found": the card says the refusal only
    prepared = await harness.prepare("batch_recording", START)
    assert isinstance(prepared, ErrorReply) and prepared.code == Code.NO_SIGN_IN
    assert len(harness.lab.calls()) == reached  # nothing more reached Epiphan: no read, no write
    assert [w["arguments"]["action"] for w in harness.lab.writes()] == ["start"]


def sign_in_with(harness: Harness, token: str) -> None:
    sandbox = harness.lab.teams["sandbox"]
    write_slot(
        harness.settings.sandbox_token_file,
        SignIn(access_token=token, server=harness.lab.mcp_url, team_id=sandbox.team_id, kind="lab"),
    )


async def test_a_rotated_token_moves_the_next_operation_to_a_new_session_and_never_uses_the_old_one(
    harness: Harness,
) -> None:
    before, after = harness.lab.issue_token("sandbox"), harness.lab.issue_token("sandbox")
    sign_in_with(harness, before)
    _, warm = await harness.proposed_and_approved("batch_recording", START)
    assert (await harness.execute(warm)).outcome == "ok"
    (old_session,) = {session for _, session in harness.lab.calls()}
    sign_in_with(harness, after)
    harness.lab.revoke_token(before)  # a call with the old token would now be refused in-band
    reached = len(harness.lab.calls())
    _, approval_id = await harness.proposed_and_approved("batch_recording", STOP)
    assert (await harness.execute(approval_id)).outcome == "ok"
    sessions = {session for _, session in harness.lab.calls()[reached:]}
    assert len(sessions) == 1 and old_session not in sessions
    assert harness.lab.rejected() == []  # no call went out with the revoked token


async def test_a_warm_session_the_server_ended_is_reopened_for_the_reads_and_the_write_runs_once(
    harness: Harness,
) -> None:
    _, warm = await harness.proposed_and_approved("batch_recording", START)
    assert (await harness.execute(warm)).outcome == "ok"
    _, approval_id = await harness.proposed_and_approved("batch_recording", STOP)
    (old_session,) = {session for _, session in harness.lab.calls()}
    harness.lab.end_sessions()  # as Epiphan reaping an idle session, or restarting
    reached = len(harness.lab.calls())
    assert (await harness.execute(approval_id)).outcome == "ok"
    after = harness.lab.calls()[reached:]
    assert len({session for _, session in after}) == 1 and after[0][1] != old_session
    assert [w["arguments"]["action"] for w in harness.lab.writes()] == ["start", "stop"]
