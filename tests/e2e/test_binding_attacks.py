"""What a person approves is exactly what runs: the four attacks of issue 10, against the real
executor and approval_web processes, the lab and one store.

1. An approval re-pointed in the store at another sealed proposal (a reboot) never runs that
   proposal: at the moment it is recorded (a trigger) and at every moment of the POST (a loop
   rewriting the row).
2. A stream destination changed in Epiphan after the card was shown (its host, or only its
   key) is refused ``card_facts_changed``.
3. The executor down at Approve leaves the proposal ``not_run`` with an audit row, readable on
   approval.sock (what ``fleetwatch pending show`` prints), and the approval dead.
4. A GET, prefetch included, writes nothing.

Each: zero wrong writes at the lab, one audit row naming the refusal, the proposal in a final
state a person can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, CookieJar

from shared.wire.approval import ListPending, PendingList, ProposalDetail, ShowProposal
from shared.wire.client import request
from tests.approval_web.page.helpers import forms_of
from tests.e2e.stack import IDLE, RECORDING, Stack, running_stack
from tests.support import store_rows as read_rows

SANDBOX_STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"
START_RECORDING = ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-2"]})
REBOOT = ("batch_reboot", {"device_ids": [RECORDING]})
"""The other proposal an attack re-points an approval at: another room (one change per room at a
time: the intake would refuse a second proposal for the idle room while the first is pending)."""


@contextlib.asynccontextmanager
async def browser(stack: Stack) -> AsyncIterator[tuple[ClientSession, dict[str, str]]]:
    """A browser session signed in to the page, and the headers its forms send."""
    origin = stack.url.rstrip("/")
    headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    async with ClientSession(base_url=origin, cookie_jar=CookieJar(unsafe=True)) as session:
        login = await session.post(
            "/login", data={"secret": stack.secret}, headers=headers, allow_redirects=False
        )
        assert login.status == 303
        yield session, headers


async def card_form(session: ClientSession) -> dict[str, str]:
    text = await (await session.get("/")).text()
    forms = forms_of(text).forms
    assert "/approve" in forms, text
    return forms["/approve"]


async def store_rows(stack: Stack, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    return await read_rows(stack.settings.db, sql, params)


async def status(stack: Stack, proposal_id: str) -> tuple[str, str | None]:
    (row,) = await store_rows(stack, "SELECT status, status_code FROM proposals WHERE id = ?", (proposal_id,))
    return row["status"], row["status_code"]


async def refusals(stack: Stack, after: int) -> list[dict[str, Any]]:
    return await store_rows(
        stack,
        "SELECT seq, actor, proposal_id, detail_json FROM audit WHERE kind = 'refusal' AND seq > ?",
        (after,),
    )


async def audit_seq(stack: Stack) -> int:
    (row,) = await store_rows(stack, "SELECT coalesce(max(seq), 0) AS seq FROM audit")
    return int(row["seq"])


async def test_an_approval_re_pointed_when_it_is_recorded_never_runs_the_other_proposal(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path / "home") as stack:
        shown = await stack.propose(*START_RECORDING)
        other = await stack.propose(*REBOOT)
        async with browser(stack) as (session, headers):
            form = await card_form(session)
            assert form["proposal_id"] == shown
            attacker = sqlite3.connect(stack.settings.db)  # any store writer, as the attack was made
            attacker.execute("CREATE TABLE attack (target TEXT)")
            attacker.execute("INSERT INTO attack VALUES (?)", (other,))
            attacker.execute(
                "CREATE TRIGGER repoint AFTER INSERT ON approvals BEGIN "
                "UPDATE approvals SET proposal_id = (SELECT target FROM attack) WHERE id = NEW.id; END"
            )
            attacker.commit()
            attacker.close()
            seq = await audit_seq(stack)
            answer = await session.post("/approve", data=form, headers=headers, allow_redirects=False)
            assert answer.status == 303 and answer.headers["Location"] == f"/outcome/{shown}"
            text = await (await session.get(answer.headers["Location"])).text()
        assert "Nothing ran" in text
        assert stack.writes() == []
        assert await status(stack, shown) == ("not_run", "approval_mismatch")
        assert (await status(stack, other))[0] == "pending"
        (refusal,) = await refusals(stack, seq)
        assert refusal["proposal_id"] == shown and '"code":"approval_mismatch"' in refusal["detail_json"]
        detail = await request(
            stack.settings.approval_socket,
            ShowProposal(proposal_id=shown),
            ProposalDetail,
            timeout_seconds=10,
        )
        assert isinstance(detail, ProposalDetail) and detail.summary.status == "not_run"


def rewrite_until(
    db: Path, other: str, started: threading.Event, caught: threading.Event, stop: threading.Event
) -> int:
    """The attacker: re-point every unclaimed approval at `other`, as fast as SQLite lets it,
    until `stop` (`started` is set after its first pass, `caught` after its first rewritten row);
    how many rows it rewrote. Runs in a thread beside the POST."""
    hits = 0
    conn = sqlite3.connect(db, timeout=10, isolation_level=None)
    try:
        while not stop.is_set():
            cursor = conn.execute(
                "UPDATE OR IGNORE approvals SET proposal_id = ? WHERE proposal_id != ? AND claimed = 0",
                (other, other),
            )
            hits += max(cursor.rowcount, 0)
            started.set()
            if hits:
                caught.set()
    finally:
        conn.close()
    return hits


async def test_a_loop_rewriting_the_approval_row_during_every_approve_never_runs_the_other_proposal(
    tmp_path: Path,
) -> None:
    """Two Approves with the attacker looping through each. In the first the executor is frozen
    from the click until the attacker has rewritten the recorded approval (the window between
    record and claim held open, so the attack lands on every machine); in the second everything
    runs at full speed and the loop races the claim. Whatever the loop caught, the other proposal
    never runs; a caught approval ends ``not_run``/``approval_mismatch``."""
    async with running_stack(tmp_path / "home") as stack:
        other = await stack.propose(*REBOOT)
        attacker = sqlite3.connect(stack.settings.db)  # the attacker also reorders the queue
        attacker.execute(
            "UPDATE proposals SET created_at = '2999-01-01T00:00:00.000Z' WHERE id = ?", (other,)
        )
        attacker.commit()
        attacker.close()
        outcomes, hits = [], []
        async with browser(stack) as (session, headers):
            for channel, freeze in ((f"{IDLE}-1", True), (f"{IDLE}-2", False)):
                shown = await stack.propose("batch_recording", {"action": "start", "device_ids": [channel]})
                form = await card_form(session)
                assert form["proposal_id"] == shown
                started, caught, stop = threading.Event(), threading.Event(), threading.Event()
                attack = asyncio.create_task(
                    asyncio.to_thread(rewrite_until, stack.settings.db, other, started, caught, stop)
                )
                assert await asyncio.to_thread(started.wait, 30), "the attacker never started"
                if freeze:
                    os.kill(stack.executor.pid, signal.SIGSTOP)
                try:
                    click = asyncio.ensure_future(
                        session.post("/approve", data=form, headers=headers, allow_redirects=False)
                    )
                    if freeze:
                        assert await asyncio.to_thread(caught.wait, 30), "the attacker never caught the row"
                finally:
                    if freeze:
                        os.kill(stack.executor.pid, signal.SIGCONT)
                await click
                stop.set()
                hits.append(await attack)
                outcomes.append(await status(stack, shown))
        assert [w["tool"] for w in stack.writes() if w["tool"] != "batch_recording"] == []
        assert (await status(stack, other))[0] == "pending"
        assert hits[0] >= 1 and outcomes[0] == ("not_run", "approval_mismatch"), (hits, outcomes)
        assert outcomes[1][0] == "executed" or outcomes[1] == ("not_run", "approval_mismatch"), outcomes


async def test_a_stream_destination_changed_after_the_card_was_shown_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path / "home") as stack:
        proposal_id = await stack.propose(
            "start_stream_endpoint", {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
        )
        async with browser(stack) as (session, headers):
            text = await (await session.get("/")).text()
            assert "test.example.net" in text and "sbx_sk_" not in text
            form = forms_of(text).forms["/approve"]
            endpoint = stack.lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM]
            endpoint.url = "rtmp://evil.example.net/live"  # a colleague edits it in Epiphan's own UI
            seq = await audit_seq(stack)
            answer = await (await session.post("/approve", data=form, headers=headers)).text()
        assert "Nothing ran" in answer and "something the card showed changed" in answer
        assert stack.writes() == []
        assert await status(stack, proposal_id) == ("not_run", "card_facts_changed")
        (refusal,) = await refusals(stack, seq)
        assert '"code":"card_facts_changed"' in refusal["detail_json"]
        assert "evil.example.net" in refusal["detail_json"] and "test.example.net" in refusal["detail_json"]


async def test_a_stream_key_changed_after_the_card_was_shown_is_refused_though_no_card_shows_it(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path / "home") as stack:
        proposal_id = await stack.propose(
            "start_stream_endpoint", {"stream_id": SANDBOX_STREAM, "device_id": IDLE, "channel_id": "1"}
        )
        async with browser(stack) as (session, headers):
            form = await card_form(session)
            stack.lab.state.teams["sandbox"].endpoints[SANDBOX_STREAM].key = "sbx_sk_someone_elses"
            await session.post("/approve", data=form, headers=headers)
        assert stack.writes() == []
        assert await status(stack, proposal_id) == ("not_run", "card_facts_changed")
        rows = await store_rows(stack, "SELECT detail_json FROM audit WHERE kind = 'refusal'")
        assert any("full address or stream key changed" in r["detail_json"] for r in rows)
        assert not any(
            "sbx_sk_" in r["detail_json"] for r in await store_rows(stack, "SELECT detail_json FROM audit")
        )


async def test_with_the_executor_down_at_approve_the_proposal_ends_not_run_with_an_audit_row(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path / "home") as stack:
        proposal_id = await stack.propose(*START_RECORDING)
        async with browser(stack) as (session, headers):
            form = await card_form(session)
            await stack.executor.stop()
            seq = await audit_seq(stack)
            answer = await (await session.post("/approve", data=form, headers=headers)).text()
        assert "Nothing ran: the executor could not be reached." in answer
        assert stack.writes() == []
        assert await status(stack, proposal_id) == ("not_run", "service_unavailable")
        (refusal,) = await refusals(stack, seq)
        assert refusal["proposal_id"] == proposal_id and '"not_run":true' in refusal["detail_json"]
        (approval,) = await store_rows(stack, "SELECT ended_code, claimed FROM approvals")
        assert approval == {"ended_code": "service_unavailable", "claimed": 0}
        detail = await request(
            stack.settings.approval_socket,
            ShowProposal(proposal_id=proposal_id),
            ProposalDetail,
            timeout_seconds=10,
        )
        assert isinstance(detail, ProposalDetail)
        assert (detail.summary.status, detail.summary.status_code) == ("not_run", "service_unavailable")
        listed = await request(stack.settings.approval_socket, ListPending(), PendingList, timeout_seconds=10)
        assert isinstance(listed, PendingList) and listed.items == ()
        assert [(s.proposal_id, s.status_code) for s in listed.not_run] == [
            (proposal_id, "service_unavailable")
        ]


async def test_a_get_of_the_page_prefetch_included_writes_nothing(tmp_path: Path) -> None:
    async with running_stack(tmp_path / "home") as stack:
        await stack.propose(*START_RECORDING)
        async with browser(stack) as (session, _):
            before = await store_rows(stack, "SELECT count(*) AS n FROM audit")
            for headers in ({"Sec-Purpose": "prefetch"}, {"Sec-Purpose": "prefetch;prerender"}, {}):
                response = await session.get("/", headers=headers)
                assert response.status == 200
            assert await store_rows(stack, "SELECT * FROM approvals") == []
            assert await store_rows(stack, "SELECT count(*) AS n FROM audit") == before
