"""The session state machine's rules that no test caught when they were removed one at a time
(issue 11), each held here by a test that fails without it: only resolve tools resolve a target;
a question's session does not carry over to the next; a turn that crashes or is cancelled
expires its proposals; reads are never blocked while a proposal is pending; a proposal's rooms
stay held until its change is settled. The real SDK, the stand-in, the lab; the proposal sink is
the in-memory fake (the intake's own rules are tested against the real intake in
``tests/approval_web/test_one_change.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from services.lab.model_standin import Reply, ToolUse, say
from shared.wire.approval import ProposalAccepted, SubmitProposal
from tests.assistant.helpers import (
    DEVICES,
    ENG101,
    RECORD_ENG101,
    FakeSink,
    TrackingReader,
    error_codes,
    sequence,
)


def _calls(*calls: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(tuple(ToolUse(name, arguments) for name, arguments in calls))


PROPOSE = ("propose_change", RECORD_ENG101)
STOP_ENG101 = {**RECORD_ENG101, "arguments": {"action": "stop", "device_ids": [f"{ENG101}-1"]}}


async def test_a_read_that_returns_a_device_id_does_not_resolve_it(standin, make_assistant, transport):
    sink = FakeSink()
    standin.set_script(
        sequence(_calls(("get_device_info", {"device_id": ENG101})), _calls(PROPOSE), say("no"))
    )
    answer = await make_assistant(sink=sink).ask("Record ENG 101")
    assert transport.tool_calls == ["get_device_info"], "the read ran and returned the device"
    assert error_codes(standin.requests) == ["fsm_blocked"]
    assert sink.submissions == [] and answer.proposals == ()
    assert [r.code for r in answer.refusals] == ["fsm_blocked"]


async def test_a_device_resolved_in_one_question_is_not_resolved_in_the_next(standin, make_assistant):
    sink = FakeSink()
    assistant = make_assistant(sink=sink)
    standin.set_script(sequence(_calls((DEVICES, {})), say("read")))
    await assistant.ask("List the devices")
    standin.set_script(sequence(_calls(PROPOSE), say("no")))
    answer = await assistant.ask("Now record ENG 101")
    assert error_codes(standin.requests[-2:]) == ["fsm_blocked"]
    assert sink.submissions == [] and answer.proposals == ()


async def test_a_proposal_pending_in_one_question_does_not_block_the_next_questions_session(
    standin, make_assistant
):
    """The session is per question; across questions the intake holds the rooms (it would
    refuse ``target_busy``), so the next question's session submits and the intake decides."""
    sink = FakeSink()
    assistant = make_assistant(sink=sink)
    standin.set_script(sequence(_calls((DEVICES, {}), PROPOSE), say("proposed")))
    await assistant.ask("Record ENG 101")
    standin.set_script(sequence(_calls((DEVICES, {}), ("propose_change", STOP_ENG101)), say("proposed")))
    await assistant.ask("Stop ENG 101")
    assert [s.arguments["action"] for s in sink.submissions] == ["start", "stop"]


class _BlockingSink(FakeSink):
    """Accepts a proposal, then lets the test know (an event, never a sleep)."""

    def __init__(self) -> None:
        super().__init__()
        self.accepted = asyncio.Event()

    async def submit(self, proposal: SubmitProposal) -> ProposalAccepted:
        reply = await super().submit(proposal)
        self.accepted.set()
        return reply


async def test_a_cancelled_question_expires_the_proposals_it_made(standin, make_assistant):
    sink = _BlockingSink()
    never = asyncio.Event()

    async def hang(request: Any) -> Reply:
        await never.wait()
        return say("never")

    standin.set_script(sequence(_calls((DEVICES, {}), PROPOSE), hang))
    task = asyncio.create_task(make_assistant(sink=sink).ask("Record ENG 101"))
    async with asyncio.timeout(30):
        await sink.accepted.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (submitted,) = sink.submissions
    assert sink.expired_turns == [submitted.turn_id] and sink.states["p_1"].status == "expired"
    never.set()


class _CrashingReader(TrackingReader):
    """A reader that crashes (not a Fleetwatch error: a bug) on one tool."""

    async def call(self, tool: str, arguments: Any = None) -> Any:
        if tool == "get_device_sources":
            raise RuntimeError("a bug in a read")
        return await super().call(tool, arguments)

    async def call_batched(self, tool: str, arguments: Any = None) -> Any:
        if tool == "get_device_sources":
            raise RuntimeError("a bug in a read")
        return await super().call_batched(tool, arguments)


async def test_a_question_that_crashes_after_proposing_expires_its_proposals(standin, reader, make_assistant):
    sink = FakeSink()
    standin.set_script(
        sequence(_calls((DEVICES, {}), PROPOSE), _calls(("get_device_sources", {"device_id": ENG101})))
    )
    with pytest.raises(RuntimeError):
        await make_assistant(sink=sink, reader=_CrashingReader(reader)).ask("Record ENG 101")
    (submitted,) = sink.submissions
    assert sink.expired_turns == [submitted.turn_id] and sink.states["p_1"].status == "expired"


async def test_reads_run_while_a_proposal_of_the_question_is_pending(standin, make_assistant, transport):
    sink = FakeSink()
    standin.set_script(
        sequence(
            _calls((DEVICES, {}), PROPOSE),
            _calls(("get_device_info", {"device_id": ENG101}), ("get_device_sources", {"device_id": ENG101})),
            say("done"),
        )
    )
    answer = await make_assistant(sink=sink).ask("Record ENG 101 and check its inputs")
    assert sink.states["p_1"].status == "pending"
    assert transport.tool_calls == [DEVICES, "get_device_info", "get_device_sources"]
    assert error_codes(standin.requests) == [] and answer.text == "done"


@pytest.mark.parametrize(
    ("status", "more", "held"),
    [
        ("approved", {}, True),
        ("executed", {"outcome": "running"}, True),
        ("executed", {"outcome": "unknown"}, True),
        ("executed", {"outcome": "ok", "verification": "not_observed"}, True),
        ("executed", {"outcome": "ok", "verification": "verified"}, False),
        ("executed", {"outcome": "unknown", "acknowledged": True}, False),
        ("executed", {"outcome": "error"}, False),
        ("not_run", {}, False),
        ("denied", {}, False),
    ],
)
async def test_a_target_stays_held_until_its_change_is_settled(standin, make_assistant, status, more, held):
    sink = FakeSink()

    def settle_then_retry(request: Any) -> Reply:
        sink.set_status("p_1", status, **more)
        return _calls(("get_proposal_state", {"proposal_id": "p_1"}), ("propose_change", STOP_ENG101))

    standin.set_script(sequence(_calls((DEVICES, {}), PROPOSE), settle_then_retry, say("done")))
    await make_assistant(sink=sink).ask("Record ENG 101, then stop it")
    assert len(sink.submissions) == (1 if held else 2)
    assert error_codes(standin.requests) == (["fsm_blocked"] if held else [])
