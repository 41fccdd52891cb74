"""The executor's sandbox sign-in after its token ended: a read Epiphan refuses in-band is
refreshed and repeated once, and the write still happens once; a write Epiphan refuses is never
repeated (its outcome is unknown)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from shared.epiphan.signin import oauth_sign_in
from shared.epiphan.signin_oauth import http_client
from shared.epiphan.slots import read_slot, write_slot
from tests.deploy.person import Person
from tests.executor.harness import IDLE, Harness

pytestmark = pytest.mark.asyncio(loop_scope="module")
TTL = 3600
START = ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})


@pytest_asyncio.fixture(loop_scope="module")
async def oauth(harness: Harness) -> AsyncIterator[Harness]:
    """The harness with a refreshable OAuth sign-in to the sandbox team in its slot."""
    person = Person("sandbox")
    async with http_client() as http:
        try:
            sign_in = await oauth_sign_in(
                harness.lab.mcp_url, show_url=person.show, http=http, timeout_seconds=30
            )
        finally:
            await person.done()
    write_slot(harness.settings.sandbox_token_file, sign_in)
    try:
        yield harness
    finally:
        harness.lab.clear_faults()
        harness.sign_in()


def refused(harness: Harness) -> list[str]:
    return [r["tool"] for r in harness.lab.rejected() if r["reason"] == "not signed in"]


async def test_reads_refused_after_the_token_ended_are_refreshed_and_the_write_runs_once(oauth: Harness):
    proposal_id, approval_id = await oauth.proposed_and_approved(*START)
    before, writes = read_slot(oauth.settings.sandbox_token_file), len(oauth.lab.writes())
    refused_before = len(refused(oauth))
    oauth.lab.advance(TTL + 60)  # Epiphan ends the token; the slot (this machine's clock) does not
    report = await oauth.execute(approval_id)
    assert (report.outcome, report.refusal_code) == ("ok", None), report
    assert [w["tool"] for w in oauth.lab.writes()[writes:]] == ["batch_recording"]
    assert refused(oauth)[refused_before:] == ["get_devices_in_my_team"]  # one refusal, then all went on
    assert read_slot(oauth.settings.sandbox_token_file).access_token != before.access_token


async def test_a_write_epiphan_refuses_in_band_is_never_repeated(oauth: Harness):
    proposal_id, approval_id = await oauth.proposed_and_approved(*START)
    writes = len(oauth.lab.writes())
    oauth.lab.set_fault("batch_recording", "auth_401")
    report = await oauth.execute(approval_id)
    assert report.outcome == "unknown", report
    tried = [r for r in oauth.lab.rejected() if r["tool"] == "batch_recording"]
    assert len(tried) == 1 and len(oauth.lab.writes()) == writes
