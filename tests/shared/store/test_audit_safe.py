"""What a refusal's audit row may copy of what it refuses: short plain text as it is, anything
long or with a hidden character as its length, a short visible prefix and a short hash; and
the approval state's refusal rows, fed a 512 KiB forged ID, stay small."""

from __future__ import annotations

import hashlib
import json

import aiosqlite

from services.executor.executions import claim_approval
from shared.errors import Code
from shared.store.approvals import approve, deny, end_unclaimed
from shared.store.audit_safe import MAX_ITEMS, MAX_TEXT_CHARS, safe_message, safe_value, stand_in
from tests.caps import HUGE, MAX_ROW_BYTES, big
from tests.shared.store.approval_helpers import conn

__all__ = ["conn"]  # the fixture


def test_short_plain_text_numbers_and_none_are_kept_as_they_are():
    value = {"approval_id": "a-0123456789ab", "uid": 1000, "ok": True, "none": None, "ids": ["p-1"]}
    assert safe_value(value) == value


def test_long_or_hidden_text_becomes_its_length_a_short_visible_prefix_and_a_hash():
    forged = big("a-0")
    assert safe_value(forged) == {
        "length": HUGE,
        "prefix": forged[:16],
        "sha256": hashlib.sha256(forged.encode()).hexdigest()[:16],
    }
    assert safe_value("x" * MAX_TEXT_CHARS) == "x" * MAX_TEXT_CHARS
    hidden = safe_value("a-\u202e1")
    assert hidden == stand_in("a-\u202e1") and hidden["prefix"] == "a-⟦U+202E⟧1"


def test_maps_and_lists_are_cut_and_their_keys_made_safe():
    many = safe_value({"ids": list(range(MAX_ITEMS + 5)), big("k"): 1})
    assert many["ids"][:MAX_ITEMS] == list(range(MAX_ITEMS)) and many["ids"][-1] == "… 5 more"
    (key,) = [k for k in many if k != "ids"]
    assert len(key) < 100 and key.startswith("kkkk")
    assert (
        safe_message("m\u202e" + "x" * 1000).startswith("m⟦U+202E⟧") and len(safe_message("x" * 1000)) == 300
    )


async def refusal_rows(conn: aiosqlite.Connection) -> list[str]:
    async with conn.execute("SELECT detail_json FROM audit WHERE kind = 'refusal' ORDER BY seq") as cursor:
        return [row[0] for row in await cursor.fetchall()]


async def test_a_huge_forged_id_leaves_small_refusal_rows_everywhere_the_approval_state_refuses(conn):
    forged_approval, forged_proposal = big("a-0"), big("p-0")
    approved = await approve(
        conn,
        proposal_id=forged_proposal,
        session_id=big("s"),
        card_hash=big("c"),
        facts_hash=big("f"),
        facts=None,
        shown_at=big("2"),
        ttl_seconds=300,
    )
    assert not approved.ok and approved.code == "proposal_not_found"
    assert not (
        await claim_approval(
            conn, forged_approval, proposal_id=forged_proposal, card_hash=big("c"), facts_hash=big("f")
        )
    ).ok
    assert not await deny(conn, forged_proposal, actor="operator")
    assert await end_unclaimed(  # an approval that does not exist was never claimed
        conn,
        approval_id=forged_approval,
        proposal_id=forged_proposal,
        code=Code.SERVICE_UNAVAILABLE,
        message="m",
        actor="approval_web",
        step="execute_not_answered",
    )
    rows = await refusal_rows(conn)
    assert len(rows) == 4
    for row in rows:
        assert len(row.encode()) < MAX_ROW_BYTES  # a 16-character prefix at most, never the value
        assert big("a-0")[:40] not in row and big("p-0")[:40] not in row and "s" * 40 not in row
        assert json.loads(row)["code"] in {"approval_not_found", "proposal_not_found", "service_unavailable"}
