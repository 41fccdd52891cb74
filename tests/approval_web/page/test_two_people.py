"""The card of a change that needs two people (a firmware update), as one uid sees it: the
first Approve runs nothing and the card names who approved and when; the same uid cannot give
the second; with one operator account the change can only be denied. (Two real uids: the
Chromium test in ``tests/e2e/test_two_people_browser.py``.)"""

from __future__ import annotations

import os
from pathlib import Path

from shared.text.display import account_name
from tests.approval_web.page.helpers import OTHER_DEVICE, add_proposal, forms_of, page

FIRMWARE = {"tool": "batch_firmware_update", "arguments": {"device_ids": [OTHER_DEVICE]}}


async def test_the_first_approve_runs_nothing_and_the_card_names_who_approved(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db, **FIRMWARE)
        await h.login()
        text, forms = await h.card()
        assert "This change needs two people" in text
        step = await h.post("/approve", forms.forms["/approve"])
        confirm = forms_of(await step.text()).forms["/confirm"]
        first = await h.post("/confirm", confirm)
        assert first.status == 303 and first.headers["Location"] == "/"
        assert h.executor.executed == [] and await h.status_of(proposal_id) == "pending"
        text, forms = await h.card()
        me = account_name(os.getuid())
        assert f"Approved by {me} at " in text and "needs a second person" in text
        assert "/approve" not in forms.forms and "/deny" in forms.forms  # only another uid approves
        replayed = await h.post("/confirm", confirm)  # the first approval's form again
        assert replayed.status == 409
        assert h.executor.executed == [] and await h.status_of(proposal_id) == "pending"
        codes = [r["detail"].get("code") for r in await h.audit_rows() if r["kind"] == "refusal"]
        assert codes == ["approver_not_distinct"]


async def test_the_card_says_it_in_spanish(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db, **FIRMWARE)
        await h.login()
        text, _ = await h.card(**{"Accept-Language": "es"})
        assert "Este cambio necesita dos personas" in text
        _, forms = await h.card()
        step = await h.post("/approve", forms.forms["/approve"])
        await h.post("/confirm", forms_of(await step.text()).forms["/confirm"])
        text, _ = await h.card(**{"Accept-Language": "es"})
        assert "Aprobado por" in text and "necesita una segunda persona" in text


async def test_with_one_operator_account_a_two_person_change_can_only_be_denied(tmp_path: Path) -> None:
    async with page(tmp_path, operator_uids=frozenset({os.getuid()})) as h:
        proposal_id = await add_proposal(h.db, **FIRMWARE)
        await h.login()
        text, forms = await h.card()
        assert "it can only be denied" in text
        assert "/approve" not in forms.forms
        denied = await h.post("/deny", forms.forms["/deny"])
        assert denied.status == 303 and await h.status_of(proposal_id) == "denied"


async def test_a_deny_after_the_first_approval_ends_it(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db, **FIRMWARE)
        await h.login()
        _, forms = await h.card()
        step = await h.post("/approve", forms.forms["/approve"])
        await h.post("/confirm", forms_of(await step.text()).forms["/confirm"])
        _, forms = await h.card()
        await h.post("/deny", forms.forms["/deny"])
        assert await h.status_of(proposal_id) == "denied" and h.executor.executed == []


async def test_the_page_shows_the_operator_their_own_decisions_and_flags_fast_approvals(
    tmp_path: Path,
) -> None:
    async with page(tmp_path) as h:
        await add_proposal(h.db)
        await h.login()
        text, forms = await h.card()
        assert "Your decisions in the last 7 days" not in text  # nothing decided yet
        await h.decide("/approve", forms.forms["/approve"])  # at once: under the 3 s threshold
        text, _ = await h.card()
        assert "Your decisions in the last 7 days" in text
        assert "1 proposal decided: 1 approved, 0 denied." in text
        assert "1 approval decided faster than the card can be read (under 3 s)." in text
        spanish, _ = await h.card(**{"Accept-Language": "es"})
        assert "más rápido de lo que se puede leer la tarjeta" in spanish
