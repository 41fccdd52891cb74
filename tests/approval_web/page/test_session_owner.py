"""A page session belongs to the uid that signed in (issue 24 #1): the approval cookie replayed
by another local user (a real one, ``fw-other``) approves nothing, is refused
``session_not_yours`` with one audit row naming both uids, and ends the session."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from urllib.parse import urlencode

from tests.approval_web.page.helpers import add_proposal, page
from tests.approval_web.page.test_refusals import snapshot
from tests.other_uid import needs_root, other_user, request_as

pytestmark = needs_root


async def test_the_cookie_replayed_by_another_uid_approves_nothing_and_ends_the_session(
    tmp_path: Path,
) -> None:
    async with page(tmp_path) as h:
        proposal_id = await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        form = forms.forms["/approve"]
        (cookie,) = [c for c in h.client.session.cookie_jar if c.key == "fleetwatch_page"]
        before = await snapshot(h)
        headers = {
            **h.same_origin(),
            "Host": f"127.0.0.1:{h.client.port}",
            "Cookie": f"fleetwatch_page={cookie.value}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        answer = await asyncio.to_thread(
            request_as, "127.0.0.1", h.client.port, "POST", "/approve", headers, urlencode(form)
        )
        assert answer["status"] == 403, answer
        assert answer["headers"]["Fleetwatch-Code"] == "session_not_yours"
        after = await snapshot(h)
        assert {t: after[t] for t in ("proposals", "approvals", "executions")} == {
            t: before[t] for t in ("proposals", "approvals", "executions")
        }
        assert h.executor.executed == [] and await h.status_of(proposal_id) == "pending"
        rows = (await h.audit_rows())[before["audit"] :]
        assert [(r["kind"], r["detail"]["code"]) for r in rows] == [("refusal", "session_not_yours")]
        assert rows[0]["detail"]["uid"] == other_user().pw_uid
        assert rows[0]["detail"]["signed_in_uid"] == os.getuid()
        # the session is over, for its own uid too: the secret is asked again
        response = await h.client.get("/")
        assert "Enter the page secret" in await response.text()
        response = await h.post("/approve", form)
        assert response.status == 401 and h.executor.executed == []
