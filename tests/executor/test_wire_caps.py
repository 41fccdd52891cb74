"""executor.sock against what reaches the audit from outside.

An approval or proposal ID not of its format, or a text over its cap, is refused by decoding
(``invalid_message``) before Execute, Inspect or Prepare runs: nothing is claimed or written,
and one small ``refusal`` row names the operation and the field, never the value. The executor
runs as a real process beside the campus lab.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.errors import Code
from shared.wire.client import request
from shared.wire.executor import Execute, ExecutionReport, Inspect, Inspection, Prepare, Prepared
from shared.wire.protocol import ErrorReply
from tests.caps import MAX_ROW_BYTES, big
from tests.executor.harness import IDLE, TIMEOUT, Harness

pytestmark = pytest.mark.asyncio(loop_scope="module")


def prepare(**fields: Any) -> Prepare:
    base: dict[str, Any] = {
        "proposal_id": "p-00000000cafe",
        "tool": "batch_reboot",
        "arguments": {"device_ids": [IDLE]},
        "reason": "a test",
    }
    return Prepare(**{**base, **fields})


def execute(**fields: Any) -> Execute:
    base: dict[str, Any] = {
        "approval_id": "a-00000000cafe",
        "proposal_id": "p-00000000cafe",
        "card_hash": "c" * 64,
        "facts_hash": "f" * 64,
    }
    return Execute(**{**base, **fields})


CASES: list[tuple[str, str, Any, Any, str]] = [
    ("execute", "$.approval_id", execute(approval_id=big("a-0")), ExecutionReport, big("a-0")),
    ("execute", "$.approval_id", execute(approval_id="a-00000000000G"), ExecutionReport, "a-00000000000G"),
    ("execute", "$.approval_id", execute(approval_id="p-000000000000"), ExecutionReport, "p-000000000000"),
    ("execute", "$.proposal_id", execute(proposal_id=big("p-3")), ExecutionReport, big("p-3")),
    ("execute", "$.card_hash", execute(card_hash=big("c")), ExecutionReport, big("c")),
    ("execute", "$.facts_hash", execute(facts_hash="F" * 64), ExecutionReport, "F" * 64),
    ("inspect", "$.proposal_id", Inspect(proposal_id=big("p-1")), Inspection, big("p-1")),
    ("inspect", "$.proposal_id", Inspect(proposal_id="p-1"), Inspection, "p-1"),
    ("prepare", "$.proposal_id", prepare(proposal_id=big("p-2")), Prepared, big("p-2")),
    ("prepare", "$.tool", prepare(tool=big("batch_reboot")), Prepared, big("batch_reboot")),
    ("prepare", "$.reason", prepare(reason=big("why ")), Prepared, big("why ")),
]


async def test_every_malformed_or_huge_id_or_text_is_refused_with_one_small_audit_row(
    harness: Harness,
) -> None:
    proposal_id, approval_id = await harness.proposed_and_approved("batch_reboot", {"device_ids": [IDLE]})
    before = await harness.rows()
    for op, field, message, reply_type, value in CASES:
        seq = await harness.audit_seq()
        reply = await request(harness.executor.socket, message, reply_type, timeout_seconds=TIMEOUT)
        assert isinstance(reply, ErrorReply) and reply.code == Code.INVALID_MESSAGE, (op, reply)
        added = await harness.audit(seq)
        assert [r["kind"] for r in added] == ["refusal"], (op, field)
        (row,) = added
        assert (
            '"code":"invalid_message"' in row["detail_json"] and f'"operation":"{op}"' in row["detail_json"]
        )
        assert f'"field":"{field}"' in row["detail_json"]
        assert len(row["detail_json"].encode()) < MAX_ROW_BYTES and value not in row["detail_json"]
    assert await harness.rows() == before
    assert harness.lab.writes() == []
    report = await harness.execute(approval_id)  # the real approval is untouched and still runs once
    assert (report.outcome, report.proposal_id) == ("ok", proposal_id)
