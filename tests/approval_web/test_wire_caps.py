"""approval.sock against what reaches the audit from outside, and the assistant's records.

IDs not of their format and texts over their caps are refused by decoding (``invalid_message``)
before any handler runs: nothing changes but one ``refusal`` audit row, which names the
operation and the field and stays small (never the value: a 512 KiB forged ID once made a 1 MB
row). The assistant holds no store, so approval_web writes its rows (`RecordAsk`,
`RecordRefusal`), only for the assistant's uid. approval_web runs as a real process beside a
real executor and the campus lab.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from shared.errors import Code
from shared.wire.approval import (
    AskTokens,
    Count,
    Deny,
    ExpireTurn,
    GetProposalState,
    ProposalAccepted,
    ProposalDetail,
    ProposalState,
    RecordAsk,
    RecordRefusal,
    RecordSilence,
    SetKillSwitch,
    ShowProposal,
    Status,
    SubmitProposal,
)
from shared.wire.protocol import ErrorReply
from tests.approval_web.helpers import SANDBOX_DEVICES, Backend, ask, audit, backend, rows, stack
from tests.caps import MAX_ROW_BYTES, big, raw_exchange

pytestmark = pytest.mark.asyncio(loop_scope="module")

TURN = "t_" + "ab" * 16
OTHER_UID = str(os.getuid() + 4242)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("approval_caps")) as running:
        yield running


def submit(**fields: Any) -> SubmitProposal:
    base: dict[str, Any] = {
        "tool": "batch_reboot",
        "arguments": {"device_ids": [SANDBOX_DEVICES[0]]},
        "reason": "the encoder froze",
        "proposed_by": "assistant",
    }
    return SubmitProposal(**{**base, **fields})


def ask_record(**fields: Any) -> RecordAsk:
    base: dict[str, Any] = {
        "turn_id": TURN,
        "question_chars": 12,
        "language": "en",
        "answered_by": "keyword",
        "outcome": "keyword_no_model",
        "code": None,
        "model_calls": 0,
        "tokens": AskTokens(),
        "tools": {"get_devices_in_my_team": 1},
        "codes": {},
        "proposal_ids": (),
        "expired": 0,
        "elapsed_ms": 25,
    }
    return RecordAsk(**{**base, **fields})


def refusal_record(**fields: Any) -> RecordRefusal:
    base: dict[str, Any] = {
        "operation": "connect",
        "code": "peer_not_allowed",
        "uid": 4242,
        "gid": 4242,
        "pid": 7,
    }
    return RecordRefusal(**{**base, **fields})


# (operation, field, the request with a bad value, its reply type, the bad value)
CASES: list[tuple[str, str, Any, Any, str]] = []


def case(op: str, field: str, make: Any, reply: Any, *values: str) -> None:
    for value in values:
        CASES.append((op, field, make(value), reply, value))


BIG_ID = big("p-0")
case(
    "get_proposal_state",
    "$.proposal_id",
    lambda v: GetProposalState(proposal_id=v),
    ProposalState,
    BIG_ID,
    "p-0000000000AB",
    "p-000000000000\n",
)
case(
    "show_proposal",
    "$.proposal_id",
    lambda v: ShowProposal(proposal_id=v),
    ProposalDetail,
    BIG_ID,
    "a-000000000000",
)
case("deny", "$.proposal_id", lambda v: Deny(proposal_id=v), ProposalState, BIG_ID, "p-1")
case(
    "deny",
    "$.actor",
    lambda v: Deny(proposal_id="p-000000000000", actor=v),
    ProposalState,
    big("x"),
)
case("set_kill_switch", "$.actor", lambda v: SetKillSwitch(on=True, actor=v), Status, big("y"))
case("expire_turn", "$.turn_id", lambda v: ExpireTurn(turn_id=v), Count, big("t_0"), "turn-1")
case("submit_proposal", "$.turn_id", lambda v: submit(turn_id=v), ProposalAccepted, big("t_1"), "t-fence")
case(
    "submit_proposal",
    "$.tool",
    lambda v: submit(tool=v),
    ProposalAccepted,
    big("batch_reboot"),
    "Batch Reboot",
)
case("submit_proposal", "$.reason", lambda v: submit(reason=v), ProposalAccepted, big("because "))
case("submit_proposal", "$.proposed_by", lambda v: submit(proposed_by=v), ProposalAccepted, big("assistant"))
case("record_ask", "$.turn_id", lambda v: ask_record(turn_id=v), Count, big("t_2"), "t_xyz")
case("record_ask", "$.proposal_ids[0]", lambda v: ask_record(proposal_ids=(v,)), Count, BIG_ID, "p-nope")
case(
    "record_refusal", "$.operation", lambda v: refusal_record(operation=v), Count, big("connect"), "Connect!"
)
case("record_refusal", "$.code", lambda v: refusal_record(code=v), Count, big("peer_not_allowed"), "Peer Not")


async def test_every_malformed_or_huge_id_or_text_is_refused_with_one_small_audit_row(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        before_rows = await rows(s.settings)
        for op, field, message, reply_type, value in CASES:
            seen = len(await audit(s.settings))
            reply = await ask(s.settings, message, reply_type)
            assert isinstance(reply, ErrorReply) and reply.code == Code.INVALID_MESSAGE, (op, field, reply)
            assert len(reply.message) <= 300
            added = (await audit(s.settings))[seen:]
            assert [(a["kind"], a["detail"]["code"]) for a in added] == [("refusal", "invalid_message")], op
            (row,) = added
            assert (row["detail"]["operation"], row["detail"]["field"]) == (op, field)
            assert len(row["detail_json"].encode()) < MAX_ROW_BYTES, (op, field)
            assert value.strip() not in row["detail_json"] and row["proposal_id"] is None, (op, field)
        assert await rows(s.settings) == before_rows
        assert s.lab.writes() == []


async def test_too_many_arguments_are_refused_before_the_intake_sees_them(shared: Backend) -> None:
    async with stack(shared) as s:
        seen = len(await audit(s.settings))
        arguments = {f"k{i}": "v" for i in range(33)}
        reply = await ask(s.settings, submit(arguments=arguments), ProposalAccepted)
        assert isinstance(reply, ErrorReply) and reply.code == Code.INVALID_MESSAGE
        (row,) = (await audit(s.settings))[seen:]
        assert row["detail"]["field"] == "$.arguments" and (await rows(s.settings))["proposals"] == []


async def test_an_unknown_operation_with_a_huge_tag_leaves_a_small_row_that_does_not_repeat_it(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        seen = len(await audit(s.settings))
        body = msgspec.msgpack.encode({"op": big("approve"), "proposal_id": "p-000000000000"})
        reply = await raw_exchange(s.settings.approval_socket, body)
        assert reply["code"] == Code.UNKNOWN_MESSAGE and len(reply["message"]) < 100
        (row,) = (await audit(s.settings))[seen:]
        assert row["detail"]["operation"] == "unknown" and len(row["detail_json"]) < MAX_ROW_BYTES
        assert "zzzz" not in row["detail_json"]


async def test_the_assistants_ask_record_becomes_one_ask_row_written_by_approval_web(shared: Backend) -> None:
    async with stack(shared) as s:
        seen = len(await audit(s.settings))
        record = ask_record(proposal_ids=("p-0123456789ab",), codes={"queue_full": 1})
        reply = await ask(s.settings, record, Count)
        assert isinstance(reply, Count) and reply.count == 1
        (row,) = (await audit(s.settings))[seen:]
        assert (row["actor"], row["kind"]) == ("assistant", "ask")
        expected = msgspec.json.decode(msgspec.json.encode(record))
        del expected["op"]
        assert row["detail"] == expected


async def test_a_watch_silence_becomes_one_watch_silence_row_naming_who_what_why_and_until(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        seen = len(await audit(s.settings))
        record = RecordSilence(
            action="silence",
            silence_id=7,
            target_kind="room",
            target="19012340205",
            reason="projector swap",
            until="2026-09-16T14:00:00.000Z",
            uid=1000,
            user="ana",
        )
        reply = await ask(s.settings, record, Count)
        assert isinstance(reply, Count) and reply.count == 1
        (row,) = (await audit(s.settings))[seen:]
        assert (row["actor"], row["kind"]) == ("assistant", "watch_silence")
        assert {
            k: row["detail"][k] for k in ("action", "silence_id", "target", "reason", "until", "uid", "user")
        } == {
            "action": "silence",
            "silence_id": 7,
            "target": "19012340205",
            "reason": "projector swap",
            "until": "2026-09-16T14:00:00.000Z",
            "uid": 1000,
            "user": "ana",
        }


async def test_a_refusal_on_assistant_sock_is_recorded_as_the_assistants_refusal_row(shared: Backend) -> None:
    async with stack(shared) as s:
        seen = len(await audit(s.settings))
        reply = await ask(s.settings, refusal_record(field=None, frame_bytes=None), Count)
        assert isinstance(reply, Count) and reply.count == 1
        undeclared = await ask(s.settings, refusal_record(code="no_such_code"), Count)
        assert isinstance(undeclared, ErrorReply) and undeclared.code == Code.INVALID_MESSAGE
        first, second = (await audit(s.settings))[seen:]
        assert (first["actor"], first["kind"]) == ("assistant", "refusal")
        assert {k: first["detail"][k] for k in ("socket", "operation", "code", "uid", "gid", "pid")} == {
            "socket": "assistant.sock",
            "operation": "connect",
            "code": "peer_not_allowed",
            "uid": 4242,
            "gid": 4242,
            "pid": 7,
        }
        assert (second["kind"], second["detail"]["code"], second["detail"]["operation"]) == (
            "refusal",
            "invalid_message",
            "record_refusal",
        )


async def test_only_the_assistants_uid_may_send_the_assistants_records(shared: Backend) -> None:
    async with stack(shared, FLEETWATCH_ASSISTANT_UIDS=OTHER_UID) as s:  # this uid: an operator only
        for record in (ask_record(), refusal_record()):
            seen = len(await audit(s.settings))
            reply = await ask(s.settings, record, Count)
            assert isinstance(reply, ErrorReply) and reply.code == Code.OPERATION_NOT_ALLOWED
            added = [(a["actor"], a["kind"], a["detail"]["code"]) for a in (await audit(s.settings))[seen:]]
            assert added == [(f"operator:{os.getuid()}", "refusal", "operation_not_allowed")]
