"""Stream destinations as the live Edge reports them, and controls Epiphan applies a moment after
it answers (issue 26 items 3 and 4), against the real executor process and the lab:

- a start on a destination another room uses, or a stop of one that is not streaming, is
  refused at Prepare (before any card) and again at Execute when it became so after the card;
- the card's facts say which room uses the destination and whether it streams, and both are
  bound (a change after the card is named);
- verification reads again once, after the executor's bounded wait, when the first read does not
  show the change yet: ``verified`` when the second read shows it, ``contradicted`` only then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import pytest

from shared.errors import Code
from shared.store.approvals import proposal_state
from shared.store.db import parse_db_text
from shared.wire.executor import Inspection
from shared.wire.protocol import ErrorReply
from tests.executor.harness import CLASSROOM, IDLE, SANDBOX_STREAM, Harness
from tests.support import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

START = {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
RECORD = {"action": "start", "device_ids": [f"{IDLE}-1"]}
NEVER = 600.0
"""A lab delay far longer than the executor's wait: the change is never seen in the test."""


def lock_to_classroom(harness: Harness) -> None:
    """The sandbox stream starts on the classroom's channel 1 (not through the write log)."""
    world = harness.lab.state
    endpoint = world.teams["sandbox"].endpoints[SANDBOX_STREAM]
    device = world.devices[CLASSROOM]
    assert world.set_stream(device, "1", endpoint, True, harness.lab.now) is None
    assert world.endpoint_use(SANDBOX_STREAM) == (CLASSROOM, True)


async def test_a_start_on_a_destination_another_room_uses_is_refused_before_the_card(
    harness: Harness,
) -> None:
    lock_to_classroom(harness)
    reply = await harness.prepare("start_stream_endpoint", START)
    assert isinstance(reply, ErrorReply) and reply.code is Code.STREAM_IN_USE, reply
    assert "Sandbox Classroom" in reply.message
    assert harness.lab.writes() == []


async def test_a_stop_of_a_destination_that_is_not_streaming_is_refused_before_the_card(
    harness: Harness,
) -> None:
    reply = await harness.prepare("stop_stream_endpoint", START)
    assert isinstance(reply, ErrorReply) and reply.code is Code.STREAM_NOT_STREAMING, reply
    assert harness.lab.writes() == []


async def test_the_card_says_who_uses_the_destination_and_whether_it_streams(harness: Harness) -> None:
    start = await harness.propose("start_stream_endpoint", START)
    card = await harness.facts(start)
    assert card.stream is not None
    assert (card.stream.locked_by, card.stream.locked_by_name, card.stream.streaming) == (None, None, False)
    assert card.facts[f"stream {SANDBOX_STREAM} in use by"] == ""
    assert card.facts[f"stream {SANDBOX_STREAM} streaming"] == "no"
    lock_to_classroom(harness)
    locked = await harness.inspect(start)
    assert isinstance(locked, Inspection) and locked.stream is not None
    assert (locked.stream.locked_by, locked.stream.locked_by_name, locked.stream.streaming) == (
        CLASSROOM,
        "Sandbox Classroom",
        True,
    )
    assert locked.would_refuse is Code.STREAM_IN_USE
    assert locked.facts_hash != card.facts_hash


async def test_a_lock_that_appears_after_the_card_is_refused_at_execute_with_nothing_written(
    harness: Harness,
) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved("start_stream_endpoint", START)
    lock_to_classroom(harness)
    before = await harness.audit_seq()
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", Code.STREAM_IN_USE), report
    assert harness.lab.writes() == []
    state = await proposal_state(harness.conn, proposal_id)
    assert state is not None and state.status == "not_run"
    rows = await harness.audit(before)
    assert any(Code.STREAM_IN_USE in row["detail_json"] for row in rows), rows
    assert harness.lab.state.endpoint_use(SANDBOX_STREAM) == (CLASSROOM, True)


async def test_a_stream_start_is_verified_from_currently_streaming(harness: Harness) -> None:
    _, approval_id = await harness.proposed_and_approved("start_stream_endpoint", START)
    report = await harness.execute(approval_id)
    assert (report.outcome, report.verification) == ("ok", "verified"), report
    assert harness.lab.state.endpoint_use(SANDBOX_STREAM) == (IDLE, True)
    _, stop = await harness.proposed_and_approved("stop_stream_endpoint", START)
    report = await harness.execute(stop)
    assert (report.outcome, report.verification) == ("ok", "verified"), report
    assert harness.lab.state.endpoint_use(SANDBOX_STREAM) == (None, False)


def first_read_after(harness: Harness, write: str, read: str) -> Callable[[], bool]:
    """True once the lab has answered `read` after the write `write` (the verification's
    first read)."""

    def seen() -> bool:
        calls = [tool for tool, _session in harness.lab.calls()]
        return write in calls and read in calls[calls.index(write) + 1 :]

    return seen


@pytest.mark.parametrize(
    ("tool", "arguments", "read"),
    [
        ("batch_recording", RECORD, "get_recorder_status_for_devices"),
        ("start_stream_endpoint", START, "get_stream_endpoints"),
    ],
)
async def test_a_change_the_lab_applies_after_the_first_read_is_verified_on_the_second(
    harness: Harness, tool: str, arguments: dict[str, object], read: str
) -> None:
    _, approval_id = await harness.proposed_and_approved(tool, arguments)
    harness.lab.state.control_delay = NEVER
    running = asyncio.create_task(harness.execute(approval_id))
    await wait_until(first_read_after(harness, tool, read), what="the verification's first read", seconds=20)
    harness.lab.lab.clock.advance(NEVER)  # the lab applies it now, between the two reads
    report = await running
    assert (report.outcome, report.verification) == ("ok", "verified"), report
    assert len(harness.lab.writes()) == 1
    state = await proposal_state(harness.conn, report.proposal_id)
    assert state is not None and state.verification == "verified"
    rows = [r for r in await harness.audit() if r["kind"] == "verification"]
    assert "second read" in rows[-1]["detail_json"], rows[-1]
    async with harness.conn.execute(
        "SELECT started_at FROM executions WHERE id = ?", (report.execution_id,)
    ) as cursor:
        (started_at,) = await cursor.fetchone() or (None,)
    assert report.verified_at is not None and started_at is not None
    waited = parse_db_text(report.verified_at) - parse_db_text(started_at)
    assert waited >= timedelta(seconds=harness.settings.verify_reread_seconds)  # the second read's time


@pytest.mark.parametrize(
    ("tool", "arguments"), [("batch_recording", RECORD), ("start_stream_endpoint", START)]
)
async def test_a_change_the_lab_never_applies_is_contradicted_only_after_the_second_read(
    harness: Harness, tool: str, arguments: dict[str, object]
) -> None:
    _, approval_id = await harness.proposed_and_approved(tool, arguments)
    harness.lab.state.control_delay = NEVER
    report = await harness.execute(approval_id)
    assert (report.outcome, report.verification) == ("ok", "contradicted"), report
    rows = [r for r in await harness.audit() if r["kind"] == "verification"]
    assert "second read" in rows[-1]["detail_json"], rows[-1]
    reads = [tool_ for tool_, _s in harness.lab.calls()]
    after = reads[reads.index(tool) + 1 :]
    assert after.count("get_devices_in_my_team") == 2, after  # two reads, no loop
