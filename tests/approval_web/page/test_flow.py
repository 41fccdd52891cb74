"""The page's happy paths against the real app and store (the executor client records calls)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest

from services.approval_web.page.executor_client import ExecutorError
from shared import approvals
from shared.errors import Code
from shared.messages import ExecutionReport
from tests.approval_web.page.helpers import (
    DEVICE,
    OTHER_DEVICE,
    add_proposal,
    connection,
    executor_down,
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
    assert "Start recording" in text
    assert "Start or stop recording on one channel." in text  # the policy's summary
    assert "A started recording can be stopped." in text  # and its undo
    assert f"{DEVICE}-1" in text and "Room 001" in text and "Pearl-2" in text and "Program" in text
    assert "Written by the assistant, not checked" in text
    assert "The class starts in 10 minutes" in text
    assert [b.get("form") for b in forms.buttons][:2] == ["/deny", "/approve"]
    deny, approve = forms.buttons[0], forms.buttons[1]
    assert "autofocus" in deny and "autofocus" not in approve
    assert forms.forms["/approve"]["proposal_id"] == proposal_id
    assert [(r["proposal_id"], r["used"]) for r in approvals_rows] == [(proposal_id, 0)]
    assert forms.forms["/approve"]["approval_id"] == approvals_rows[0]["id"]


async def test_approve_consumes_once_runs_once_and_shows_done_with_the_verification(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        response = await h.post("/approve", forms.forms["/approve"])
        text = await response.text()
        status = await h.status_of(proposal_id)
        _, after = await h.card()
    assert response.status == 200
    assert "Done" in text and "Epiphan shows the change" in text
    assert "1 change approved in this browser session" in text
    assert h.executor.executed == [forms.forms["/approve"]["approval_id"]]
    assert status == "approved"
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
        assert response.status == 303
        _, forms = await h.card()
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
        assert "Disruptive change" in text
        response = await h.post("/approve", forms.forms["/approve"])
        step = await response.text()
        assert response.status == 200 and h.executor.executed == []
        assert await h.status_of(proposal_id) == "pending"
        confirm = forms_of(step)
        assert "Confirm the room" in step and "Room 003" in step
        assert [b.get("form") for b in confirm.buttons] == ["/deny", "/approve"]
        assert "autofocus" in confirm.buttons[0]
        fields = dict(confirm.forms["/approve"])
        assert fields["confirm_room"] == f"room:{OTHER_DEVICE}"
        unticked = {k: v for k, v in fields.items() if k != "confirm_room"}
        again = await h.post("/approve", unticked)
        assert "Confirm the room" in await again.text() and h.executor.executed == []
        done = await h.post("/approve", fields)
        text = await done.text()
    assert "Done" in text
    assert h.executor.executed == [fields["approval_id"]]


async def test_the_page_speaks_spanish_when_the_browser_asks_for_it(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        text, _ = await h.card(**{"Accept-Language": "es-419,es;q=0.9,en;q=0.5"})
    assert 'lang="es-419"' in text
    assert "Iniciar grabación" in text and "Rechazar" in text and "Aprobar" in text
    assert "Escrito por el asistente, sin verificar" in text
    assert "Iniciar o detener la grabación en un canal." in text


async def test_the_pages_own_forms_pass_with_the_headers_chromium_sends_under_no_referrer(
    tmp_path: Path,
) -> None:
    chromium = {"Sec-Fetch-Site": "same-origin", "Origin": "null"}
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        response = await h.post("/login", {"secret": h.secret.shown()}, headers=chromium)
        assert response.status == 303
        _, forms = await h.card()
        done = await h.post("/approve", forms.forms["/approve"], headers=chromium)
        assert done.status == 200 and "Done" in await done.text()
        async with h.client.get("/") as again:
            assert again.headers["Referrer-Policy"] == "no-referrer"


async def test_the_only_countdown_is_the_expiry_five_minutes_on_the_database_clock(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        text, _ = await h.card()
        (approval,) = await h.approvals_rows()
    created = dt.datetime.fromisoformat(approval["created_at"].replace("Z", "+00:00"))
    expires = dt.datetime.fromisoformat(approval["expires_at"].replace("Z", "+00:00"))
    assert abs((expires - created).total_seconds() - 300) < 1
    refresh = re.findall(r'<meta http-equiv="refresh" content="(\d+); url=/">', text)
    assert len(refresh) == 1 and 295 <= int(refresh[0]) <= 301
    assert f"This card expires at {expires:%Y-%m-%d %H:%M} UTC" in text


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
        (ExecutorError(Code.SERVICE_NO_ANSWER, "timeout"), None, "May or may not have run — check the room"),
        (ExecutorError(Code.INTERNAL_ERROR, "boom"), None, "May or may not have run — check the room"),
        (executor_down(), None, "Nothing ran: the executor could not be reached."),
        (None, {"outcome": "error", "detail": {OTHER_DEVICE: "<b>busy</b>"}}, "Epiphan reported a problem"),
        (None, {"outcome": "unknown"}, "May or may not have run — check the room"),
        (
            None,
            {"outcome": "refused", "refusal_code": "fingerprint_changed", "execution_id": None},
            "Nothing ran: the room changed since the proposal",
        ),
    ],
)
async def test_the_outcome_is_said_in_plain_words_and_never_as_failed_when_it_may_have_run(
    tmp_path: Path, failure: ExecutorError | None, report: dict[str, object] | None, headline: str
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
        response = await h.post("/approve", forms.forms["/approve"])
        text = await response.text()
    assert headline in text
    assert "failed" not in text.lower()
    assert "<b>busy</b>" not in text
    assert len(h.executor.executed) == 1


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
