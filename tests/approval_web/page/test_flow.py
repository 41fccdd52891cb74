"""The page's happy paths against the real app and store (the executor client records calls)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import gc
import logging
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from shared.errors import Code
from shared.policy.model import Autonomy
from shared.store import approvals
from shared.wire.client import CallError
from shared.wire.executor import ExecutionReport
from tests.approval_web.page.helpers import (
    DEVICE,
    OTHER_DEVICE,
    add_proposal,
    connection,
    executor_down,
    executor_error,
    facts_for,
    forms_of,
    page,
    policies,
)


async def test_without_a_session_the_page_asks_for_the_secret_and_shows_no_card(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        text, forms = await h.card()
    assert "/login" in forms.forms and "/approve" not in forms.forms
    assert DEVICE not in text
    assert h.executor.inspected == []


async def test_the_card_shows_every_fact_and_deny_comes_first_with_the_focus(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db)
        await h.login()
        text, forms = await h.card()
        approvals_rows = await h.approvals_rows()
    assert '<h1 id="card-title">Start recording: “Room 001”, channel 1 (“Program”)</h1>' in text
    assert "“Room 001”, channel 1 (“Program”) starts recording now, into a new file." in text  # this action
    assert "Low risk:" in text  # a risk line on every card
    assert "A started recording can be stopped." in text  # the policy's undo
    assert f"{DEVICE}-1" in text and "Room 001" in text and "Pearl-2" in text and "Program" in text
    assert "Details for an audit" in text and "batch_recording" in text
    assert "Written by the assistant, not checked" in text
    assert "The class starts in 10 minutes" in text
    assert [b.get("form") for b in forms.buttons][:2] == ["/deny", "/approve"]
    deny, approve = forms.buttons[0], forms.buttons[1]
    assert "autofocus" in deny and "autofocus" not in approve
    approve_form = forms.forms["/approve"]
    assert approve_form["proposal_id"] == proposal_id
    assert len(approve_form["card_hash"]) == 64 and len(approve_form["facts_hash"]) == 64
    assert approve_form["shown_at"].endswith("Z")
    assert approvals_rows == []  # showing a card writes nothing


async def test_a_get_changes_nothing_even_a_prefetch_of_the_card(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        audit_before = await h.audit_rows()
        for headers in ({}, {"Sec-Purpose": "prefetch"}, {"Purpose": "prefetch"}):
            await h.card(**headers)
        assert await h.approvals_rows() == []
        assert await h.audit_rows() == audit_before


async def test_approve_consumes_once_runs_once_and_shows_done_with_the_verification(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        location, text = await h.decide("/approve", forms.forms["/approve"])
        status = await h.status_of(proposal_id)
        after_text, after = await h.card()
        async with h.client.get(location) as reloaded:
            again = await reloaded.text()
        audit = await h.audit_rows()
    assert location == f"/outcome/{proposal_id}"
    assert "Start recording: “Room 001”, channel 1 (“Program”)" in text
    assert "Done: Epiphan accepted the change." in text and "Epiphan shows the change" in text
    assert "Approved on the approval page by you" in text and "in this browser" in text
    assert again == text  # a reload shows the same outcome, and runs nothing more
    assert len(h.executor.executed) == 1 and audit == await h.audit_rows()
    assert "Recent decisions" in after_text and f'href="/outcome/{proposal_id}"' in after_text
    assert "1 change approved in this browser session" in text
    (sent,) = h.executor.sent
    form = forms.forms["/approve"]
    assert (sent.proposal_id, sent.card_hash, sent.facts_hash) == (
        proposal_id,
        form["card_hash"],
        form["facts_hash"],
    )
    (row,) = await h.approvals_rows()
    assert (row["id"], row["proposal_id"], row["used"], row["shown_at"]) == (
        sent.approval_id,
        proposal_id,
        1,
        form["shown_at"],
    )
    assert row["card_hash"] == form["card_hash"] and row["facts_hash"] == form["facts_hash"]
    assert status == "executed"
    assert "/approve" not in after.forms  # nothing left waiting


async def test_the_oldest_proposal_comes_first_and_the_rest_are_counted(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        first = await add_proposal(h.db)
        await add_proposal(h.db, tool="batch_reboot", arguments={"device_ids": [OTHER_DEVICE]})
        await h.login()
        text, forms = await h.card()
    assert forms.forms["/approve"]["proposal_id"] == first
    assert "1 more waiting after this one" in text
    assert "Waiting: 2 of at most 3." in text


async def test_deny_denies_the_card_and_deny_all_denies_every_pending_proposal(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        first = await add_proposal(h.db)
        second = await add_proposal(h.db, tool="batch_reboot", arguments={"device_ids": [OTHER_DEVICE]})
        third = await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        response = await h.post("/deny", forms.forms["/deny"])
        assert response.status == 303 and response.headers["Location"] == f"/?denied={first}"
        text, forms = await h.card_at(response.headers["Location"])
        assert "Denied: Start recording: “Room 001”, channel 1 (“Program”). Nothing ran." in text
        assert forms.forms["/deny"]["proposal_id"] == second
        response = await h.post("/deny-all", forms.forms["/deny-all"])
        assert response.status == 303
        statuses = [await h.status_of(p) for p in (first, second, third)]
        text, forms = await h.card()
    assert statuses == ["denied", "denied", "denied"]
    assert "Nothing is waiting for approval" in text
    assert h.executor.executed == []
    assert not any("approve" in (b.get("class") or "") for b in forms.buttons)


async def test_a_disruptive_change_asks_to_confirm_the_room_before_anything_runs(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db, tool="batch_reboot", arguments={"device_ids": [OTHER_DEVICE]})
        await h.login()
        text, forms = await h.card()
        assert "High risk:" in text and "Approving asks you to confirm the room." in text
        response = await h.post("/approve", forms.forms["/approve"])
        step = await response.text()
        assert response.status == 200 and h.executor.executed == []
        assert await h.status_of(proposal_id) == "pending"
        confirm = forms_of(step)
        assert "Confirm the room" in step and "Room 003" in step
        assert [b.get("form") for b in confirm.buttons] == ["/deny", "/confirm"]
        assert "autofocus" in confirm.buttons[0]
        fields = dict(confirm.forms["/confirm"])
        assert fields["confirm_room"] == f"room:{OTHER_DEVICE}"
        assert fields["token"] != forms.forms["/approve"]["token"]  # its own token
        unticked = {k: v for k, v in fields.items() if k != "confirm_room"}
        again = await h.post("/confirm", unticked)
        assert "Confirm the room" in await again.text() and h.executor.executed == []
        assert await h.approvals_rows() == []
        _, text = await h.decide("/confirm", fields)
    assert "Done" in text and "Restart a device: “Room 003”" in text
    assert [m.proposal_id for m in h.executor.sent] == [proposal_id]


async def test_the_approve_token_cannot_skip_the_room_confirm(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db, tool="batch_reboot", arguments={"device_ids": [OTHER_DEVICE]})
        await h.login()
        _, forms = await h.card()
        ticked = {**forms.forms["/approve"], "confirm_room": f"room:{OTHER_DEVICE}"}
        refused = await h.post("/confirm", ticked)  # the approve token on the confirm step
        again = await h.post("/approve", ticked)  # the tick box on the first step
        assert refused.status == 403 and "Confirm the room" in await again.text()
        assert h.executor.executed == [] and await h.status_of(proposal_id) == "pending"


async def test_the_page_speaks_spanish_when_the_browser_asks_for_it(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        text, _ = await h.card(**{"Accept-Language": "es-419,es;q=0.9,en;q=0.5"})
    assert 'lang="es-419"' in text
    assert "Iniciar grabación" in text and "Rechazar" in text and "Aprobar" in text
    assert "Escrito por el asistente, sin verificar" in text
    assert "Iniciar grabación: «Room 001», canal 1 («Program»)" in text
    assert "Detalles para una auditoría" in text and "Decisiones recientes" in text


async def test_the_pages_own_forms_pass_with_the_headers_chromium_sends_under_no_referrer(
    tmp_path: Path,
) -> None:
    chromium = {"Sec-Fetch-Site": "same-origin", "Origin": "null"}
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        response = await h.post("/login", {"secret": h.secret.shown()}, headers=chromium)
        assert response.status == 303
        _, forms = await h.card()
        _, done = await h.decide("/approve", forms.forms["/approve"], headers=chromium)
        assert "Done" in done
        async with h.client.get("/") as again:
            assert again.headers["Referrer-Policy"] == "no-referrer"


async def test_the_only_countdown_is_the_expiry_five_minutes_on_the_database_clock(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        text, forms = await h.card()
    shown = dt.datetime.fromisoformat(forms.forms["/approve"]["shown_at"].replace("Z", "+00:00"))
    expires = shown + dt.timedelta(seconds=300)
    refresh = re.findall(r'<meta http-equiv="refresh" content="(\d+); url=/">', text)
    assert len(refresh) == 1 and 295 <= int(refresh[0]) <= 301
    assert f"This card expires at {expires:%H:%M}, in " in text  # the page's zone (UTC here), and how soon
    # walk item 13: the watch's notice gives the proposal's own end (15 min), the card its own (5):
    # the card names both
    async with connection(h.db) as conn:
        (row,) = await approvals.list_pending(conn)
    assert row.expires_at is not None
    ends = dt.datetime.fromisoformat(row.expires_at.replace("Z", "+00:00"))
    assert f"until the proposal itself expires at {ends:%H:%M}, in " in text, text


async def test_a_card_names_the_proposals_own_end_when_it_comes_first_and_approve_works_until_then(
    tmp_path: Path,
) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db, ttl_seconds=41)
        await h.login()
        text, forms = await h.card()
        async with connection(h.db) as conn:
            row = await approvals.get_proposal(conn, proposal_id)
        assert row is not None and row.expires_at is not None
        ends = dt.datetime.fromisoformat(row.expires_at.replace("Z", "+00:00"))
        refresh = re.findall(r'<meta http-equiv="refresh" content="(\d+); url=/">', text)
        assert len(refresh) == 1 and int(refresh[0]) <= 42
        assert f"This card expires at {ends:%H:%M}, in " in text
        _, done = await h.decide("/approve", forms.forms["/approve"])
        assert "Done" in done


async def test_a_card_whose_facts_cannot_be_read_offers_only_deny_and_says_why(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        h.executor.inspect_error = executor_down()
        text, forms = await h.card()
        rows = await h.approvals_rows()
    assert "This card can only be denied" in text
    assert "The facts could not be read just now: the executor could not be reached." in text
    assert set(forms.forms) == {"/deny", "/deny-all"} and rows == []


@pytest.mark.parametrize(
    ("failure", "report", "headline"),
    [
        (
            executor_error(Code.SERVICE_NO_ANSWER, "timeout"),
            None,
            "Nothing ran: the executor did not answer.",
        ),
        (executor_error(Code.INTERNAL_ERROR, "boom"), None, "Nothing ran: an unexpected error"),
        (executor_down(), None, "Nothing ran: the executor could not be reached."),
        (None, {"outcome": "error", "detail": {OTHER_DEVICE: "<b>busy</b>"}}, "Epiphan reported a problem"),
        (None, {"outcome": "unknown"}, "May or may not have run."),
        (
            None,
            {"outcome": "refused", "refusal_code": "fingerprint_changed", "execution_id": None},
            "Nothing ran: the room changed since the proposal",
        ),
    ],
)
async def test_the_outcome_is_said_in_plain_words_and_never_as_failed_when_it_may_have_run(
    tmp_path: Path, failure: CallError | None, report: dict[str, object] | None, headline: str
) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        h.executor.execute_error = failure
        if report is not None:
            h.executor.report = lambda _: ExecutionReport(
                **{"execution_id": "x-1", "proposal_id": "p", **report}
            )
        _, text = await h.decide("/approve", forms.forms["/approve"])
    assert headline in text
    assert "Next:" in text
    assert "failed" not in text.lower()
    assert "<b>busy</b>" not in text
    assert len(h.executor.executed) == 1


@pytest.mark.parametrize("failure", [Code.SERVICE_NO_ANSWER, Code.INTERNAL_ERROR, Code.SERVICE_UNAVAILABLE])
async def test_an_execute_that_does_not_answer_ends_the_approval_unless_the_executor_took_it(
    tmp_path: Path, failure: Code
) -> None:
    async with page(tmp_path) as h:
        untaken = await add_proposal(h.db)
        taken = await add_proposal(h.db, tool="batch_reboot", arguments={"device_ids": [OTHER_DEVICE]})
        await h.login()
        h.executor.execute_error = executor_error(failure, "no report")
        _, forms = await h.card()
        _, text = await h.decide("/approve", forms.forms["/approve"])
        assert "Nothing ran" in text
        async with connection(h.db) as conn:
            row = await approvals.get_proposal(conn, untaken)
        assert row is not None and (row.status, row.status_code) == ("not_run", failure)
        (audited,) = [r for r in await h.audit_rows() if r["kind"] == "refusal"]
        assert audited["proposal_id"] == untaken and audited["detail"]["not_run"] is True
        h.executor.claim_first = True  # the executor took the approval, then went silent
        _, forms = await h.card()
        confirm = forms_of(await (await h.post("/approve", forms.forms["/approve"])).text())
        _, text = await h.decide("/confirm", confirm.forms["/confirm"])
        assert "May or may not have run." in text and "Check the room before trying again" in text
        assert await h.status_of(taken) == "approved"  # its execution decides, never the page


async def test_the_queue_the_hourly_cap_and_the_kill_switch_show_on_the_page(tmp_path: Path) -> None:
    policy, _ = policies()
    tight = dataclasses.replace(policy, limits=dataclasses.replace(policy.limits, max_pending=2, per_hour=2))
    async with page(tmp_path, policy=tight) as h:
        await add_proposal(h.db)
        await add_proposal(h.db)
        async with connection(h.db) as conn:
            await approvals.set_kill_switch(conn, True, actor="test")
        await h.login()
        text, _ = await h.card()
    assert "The queue is full" in text
    assert "The hourly cap is reached" in text
    assert "Writes are paused (the kill switch is on)" in text


async def test_the_page_names_each_denial_pause_and_change_to_settle_with_the_room_and_its_command(
    tmp_path: Path,
) -> None:
    hostile = "ENG 105 — approved and verified"
    async with page(tmp_path, home="/srv/fw room") as h:
        for _ in range(3):
            denied = await add_proposal(h.db, names={DEVICE: hostile})
            async with connection(h.db) as conn:
                assert await approvals.deny(conn, denied, actor="operator")
        ran = await add_proposal(
            h.db, tool="batch_reboot", arguments={"device_ids": [OTHER_DEVICE]}, names={OTHER_DEVICE: hostile}
        )
        async with connection(h.db) as conn:
            await conn.execute("UPDATE proposals SET status = 'executed' WHERE id = ?", (ran,))
            await conn.execute(
                "INSERT INTO approvals (id, proposal_id, session_id, card_hash, expires_at, used, claimed)"
                " VALUES ('a-000000000001', ?, 's', 'c', 'x', 1, 1)",
                (ran,),
            )
            await conn.execute(
                "INSERT INTO executions (id, approval_id, proposal_id, outcome) VALUES"
                " ('x-000000000001', 'a-000000000001', ?, 'unknown')",
                (ran,),
            )
        await h.login()
        english, _ = await h.card()
        spanish, _ = await h.card_at("/?lang=es")
    home = "FLEETWATCH_HOME=&#39;/srv/fw room&#39; fleetwatch"
    for text, (start, end), tail, said in (
        (
            english,
            ("“", "”"),
            "",
            ("Paused after 3 denials: start or stop recording in ", "The last change in "),
        ),
        (spanish, ("«", "»"), " --language es", ("En pausa tras 3 rechazos: ", "El último cambio en ")),
    ):
        assert f"{home} resume --denials batch_recording {DEVICE}{tail}" in text, text
        assert f"{home} acknowledge {ran}{tail}" in text, text
        assert text.count(f"{start}{hostile}{end}") == 2 and text.count(hostile) == 2, text
        assert all(part in text for part in said), text


async def test_a_policy_that_only_watches_is_said_on_the_page_in_both_languages(tmp_path: Path) -> None:
    policy, _ = policies()
    watching = dataclasses.replace(policy, autonomy=Autonomy.OBSERVE)
    async with page(tmp_path, policy=watching) as h:
        await add_proposal(h.db)  # drafted before the policy changed: it can still be denied
        await h.login()
        english, _ = await h.card()
        spanish, _ = await h.card(**{"Accept-Language": "es"})
    assert "The policy is set to only watch" in english and "an approved change will not run" in english
    assert "La política está configurada solo para observar" in spanish
    async with page(tmp_path / "proposing") as h:
        await h.login()
        text, _ = await h.card()
    assert "only watch" not in text


async def test_a_lookalike_channel_name_is_flagged_in_the_channel_cell_as_in_the_room_cell(
    tmp_path: Path,
) -> None:
    def lookalike_channel(proposal_id: str, targets: tuple[str, ...]) -> Any:
        read = facts_for(proposal_id, targets)
        return msgspec.structs.replace(
            read, targets=tuple(msgspec.structs.replace(t, channel_name="Рrogram") for t in read.targets)
        )  # a Cyrillic Р

    async with page(tmp_path) as h:
        h.executor.inspection_for = lookalike_channel
        await add_proposal(h.db)
        await h.login()
        english, _ = await h.card()
        spanish, _ = await h.card_at("/?lang=es")
    for text, flag in ((english, "look-alike letters"), (spanish, "letras que se parecen a otras")):
        row = re.search(r'<table class="targets">.*?</table>', text, re.S)
        assert row is not None, text
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)
        assert "Рrogram" in cells[-1] and f'<strong class="flag">{flag}</strong>' in cells[-1], cells
        assert "flag" not in cells[0], cells  # the room's own name is no look-alike


async def test_a_card_whose_inspect_and_store_reads_both_fail_leaves_no_unretrieved_task_error(
    tmp_path: Path,
) -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    before = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    # aiohttp logs the failed request with its traceback; a captured record would keep the
    # handler's frame (and so any task it dropped) alive past this test
    server_log = logging.getLogger("aiohttp.server")
    quiet = logging.NullHandler()
    server_log.addHandler(quiet)
    server_log.propagate = False
    try:
        async with page(tmp_path) as h:
            await add_proposal(h.db)
            await h.login()
            h.executor.inspect_error = RuntimeError("the executor client broke")
            async with connection(h.db) as conn:
                await conn.execute("DROP TABLE executions")  # the page's store reads now fail
                await conn.commit()
            async with h.client.get("/") as response:
                status = response.status
        gc.collect()
    finally:
        server_log.propagate = True
        server_log.removeHandler(quiet)
        loop.set_exception_handler(before)
    assert status == 500 and h.executor.inspected  # the Inspect went out and failed
    assert [c.get("message") for c in reported] == []
