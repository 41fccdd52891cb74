"""Every fact a card shows that decides what a write does is bound: changed between the
card (Inspect) and the click (Execute), the executor refuses ``card_facts_changed`` naming it,
and nothing is written. Against the real executor process and the lab.

Also: an upper-case stream UUID is bound in the form Epiphan lists. The pure side is in
``test_facts_rules.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from services.approval_web.page.card import build_card
from services.lab.server import LabHandle
from shared.binding import record_from_bytes
from shared.errors import Code
from shared.store.approvals import get_proposal
from shared.wire.executor import Prepared
from tests.executor.harness import IDLE, SANDBOX_STREAM, Harness, add_event

pytestmark = pytest.mark.asyncio(loop_scope="module")

EVENT = "sbx-facts-1"


def rename_device(lab: LabHandle) -> str:
    lab.state.devices[IDLE].name = "Sandbox Pearl-2 (moved to Room 9)"
    return f"device {IDLE} name"


def rename_channel(lab: LabHandle) -> str:
    channel = lab.state.devices[IDLE].channel("1")
    assert channel is not None
    channel.name = "Podium camera"
    return f"device {IDLE} channel 1 name"


def rename_stream(lab: LabHandle) -> str:
    lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM].name = "Someone else's stream"
    return f"stream {SANDBOX_STREAM} name"


def move_stream_host(lab: LabHandle) -> str:
    lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM].url = "rtmp://evil.example.net/live"
    return f"stream {SANDBOX_STREAM} host"


def change_stream_key(lab: LabHandle) -> str:
    lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM].key = "sbx_sk_other"
    return "full address or stream key changed"


def change_stream_path(lab: LabHandle) -> str:
    lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM].url = "rtmp://test.example.net/other-app"
    return "full address or stream key changed"


def retitle_event(lab: LabHandle) -> str:
    lab.state.events[EVENT].title = "Board meeting (private)"
    return f"event {EVENT} title"


def extend_event(lab: LabHandle) -> str:
    lab.state.events[EVENT].finish += timedelta(minutes=30)
    return f"event {EVENT} finish"


RECORD = ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
STREAM = ("start_stream_endpoint", {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"})
CONFIRM = ("confirm_cms_event_on_device", {"device_id": IDLE, "event_id": EVENT})

CHANGES: dict[str, tuple[tuple[str, dict], Callable[[LabHandle], str]]] = {
    "the room's name": (RECORD, rename_device),
    "the channel's name": (RECORD, rename_channel),
    "the stream destination's name": (STREAM, rename_stream),
    "the stream destination's host": (STREAM, move_stream_host),
    "the stream key, which no card shows": (STREAM, change_stream_key),
    "the stream URL's path, which no card shows": (STREAM, change_stream_path),
    "the event's title": (CONFIRM, retitle_event),
    "the event's end": (CONFIRM, extend_event),
}


@pytest.mark.parametrize("what", list(CHANGES))
async def test_a_fact_changed_after_the_card_is_refused_naming_it_and_nothing_runs(
    harness: Harness, what: str
) -> None:
    (tool, arguments), change = CHANGES[what]
    add_event(harness.lab, EVENT, IDLE, minutes=200, title="Sandbox rehearsal")
    proposal_id, approval_id = await harness.proposed_and_approved(tool, arguments)
    named = change(harness.lab)
    report = await harness.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("refused", Code.CARD_FACTS_CHANGED), report
    assert named in report.message
    assert harness.lab.writes() == []
    row = await get_proposal(harness.conn, proposal_id)
    assert row is not None and (row.status, row.status_code) == ("not_run", "card_facts_changed")
    assert "sbx_sk_" not in report.message


async def test_unchanged_facts_run_and_the_facts_never_hold_a_secret(harness: Harness) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved(*STREAM)
    report = await harness.execute(approval_id)
    assert report.outcome == "ok", report
    async with harness.conn.execute(
        "SELECT facts_json FROM approvals WHERE id = ?", (approval_id,)
    ) as cursor:
        (facts_json,) = await cursor.fetchone()
    assert "test.example.net" in facts_json
    assert "sbx_sk_" not in facts_json and "rtmp://" not in facts_json


async def test_an_upper_case_stream_uuid_is_bound_and_sent_as_the_sandbox_list_gives_it(
    harness: Harness,
) -> None:
    tool, arguments = STREAM
    prepared = await harness.prepare(tool, {**arguments, "stream_id": SANDBOX_STREAM.upper()})
    assert isinstance(prepared, Prepared), prepared
    assert record_from_bytes(prepared.record).arguments["stream_id"] == SANDBOX_STREAM
    _, approval_id = await harness.proposed_and_approved(
        tool, {**arguments, "stream_id": SANDBOX_STREAM.upper()}
    )
    report = await harness.execute(approval_id)
    assert report.outcome == "ok", report
    assert [w["arguments"]["stream_id"] for w in harness.lab.writes()] == [SANDBOX_STREAM]


async def test_an_execute_carrying_another_facts_hash_than_the_approval_is_a_mismatch(
    harness: Harness,
) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved(*RECORD)
    report = await harness.execute(approval_id, facts_hash="0" * 64)
    assert (report.outcome, report.refusal_code) == ("refused", Code.APPROVAL_MISMATCH), report
    assert harness.lab.writes() == []
    again = await harness.execute(approval_id)  # the approval is dead now
    assert again.refusal_code == Code.APPROVAL_ALREADY_USED
    row = await get_proposal(harness.conn, proposal_id)
    assert row is not None and row.status == "not_run"


async def test_no_secret_a_name_carries_reaches_the_inspection_or_the_card_built_from_it(
    harness: Harness,
) -> None:
    lab = harness.lab
    secrets = ("Sk1Hook9", "Sk2Mask8", "Sk3Whip7", "Sk4Pass6")
    lab.state.devices[IDLE].name = f"Sandbox Room https://hooks.slack.com/services/T1/B2/{secrets[0]}"
    channel = lab.state.devices[IDLE].channel("1")
    assert channel is not None
    channel.name = f"Program ****{secrets[1]}"
    endpoint = lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM]
    endpoint.name = f"Test stream https:\\/\\/whip.example.net\\/whip\\/{secrets[2]}"
    add_event(lab, EVENT, IDLE, minutes=30, title=f"Class (SRT passphrase {secrets[3]})")
    proposal_id = await harness.propose(*STREAM)
    inspection = await harness.facts(proposal_id)
    row = await get_proposal(harness.conn, proposal_id)
    assert row is not None
    card = build_card(row, rule=None, disruptive=False, inspection=inspection)
    shown = f"{inspection!r}\n{card!r}"
    assert [s for s in secrets if s in shown] == []
    assert all(word in shown for word in ("Sandbox Room", "Program", "Test stream", "Class (SRT passphrase"))
