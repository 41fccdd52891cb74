"""approval_web as a real process over the real approval.sock, with a fake executor on
executor.sock that records what it is asked and answers what the real one never does (a
record that differs from the request, a code outside the registry)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec

from shared.config import REPO_POLICY_DIR, Settings, load_settings
from shared.errors import Code
from shared.policy.loader import load_policies
from shared.wire.approval import (
    Deny,
    ListProposalHistory,
    ProposalAccepted,
    ProposalHistory,
    ProposalState,
    SubmitProposal,
    codes_of,
)
from tests.approval_web.helpers import FakeExecutor, ask, audit, error_code, fake_executor, rows
from tests.procs import base_env, running_service

_, TOOL_POLICY = load_policies(REPO_POLICY_DIR)
DEVICE = "29088800001"


REBOOT = SubmitProposal(
    tool="batch_reboot", arguments={"device_ids": [DEVICE]}, reason="frozen", proposed_by="assistant"
)


def reboot(**changes: object) -> SubmitProposal:
    return msgspec.structs.replace(REBOOT, **changes)


@asynccontextmanager
async def with_fake(home: Path) -> AsyncIterator[tuple[Settings, FakeExecutor]]:
    env = base_env(home, FLEETWATCH_WRITE_DEVICE_IDS=DEVICE)
    settings = load_settings(env)
    async with fake_executor(settings, TOOL_POLICY) as fake, running_service("services.approval_web", env):
        yield settings, fake


async def test_policy_and_limit_refusals_never_ask_the_executor_to_prepare(tmp_path: Path) -> None:
    async with with_fake(tmp_path) as (settings, fake):
        for bad in (reboot(tool="get_device_info"), reboot(arguments={"device_ids": ["x"]})):
            assert await error_code(settings, bad, ProposalAccepted) != ""
        assert fake.prepared == []
        for _ in range(3):
            accepted = await ask(settings, reboot(), ProposalAccepted)
            assert isinstance(accepted, ProposalAccepted)
            await ask(settings, Deny(proposal_id=accepted.proposal_id), ProposalState)
        assert len(fake.prepared) == 3
        assert await error_code(settings, reboot(), ProposalAccepted) == Code.DENIAL_PAUSE
        assert len(fake.prepared) == 3
        assert [p.arguments for p in fake.prepared] == [{"device_ids": [DEVICE]}] * 3


async def test_a_record_that_differs_from_the_request_is_refused_and_not_stored(tmp_path: Path) -> None:
    async with with_fake(tmp_path) as (settings, fake):
        fake.tamper = True
        before = await rows(settings)
        assert await error_code(settings, reboot(), ProposalAccepted) == Code.INTERNAL_ERROR
        assert await rows(settings) == before
        last = (await audit(settings))[-1]
        assert (last["kind"], last["detail"]["code"]) == ("refusal", "internal_error")
        assert "differs" in last["detail"]["message"]


async def test_an_executor_code_outside_the_registry_becomes_internal_error(tmp_path: Path) -> None:
    async with with_fake(tmp_path) as (settings, fake):
        fake.refuse_with = "made_up_code"
        assert await error_code(settings, reboot(), ProposalAccepted) == Code.INTERNAL_ERROR
        fake.refuse_with = "stream_not_found"
        assert await error_code(settings, reboot(), ProposalAccepted) == Code.STREAM_NOT_FOUND
        assert Code.STREAM_NOT_FOUND in codes_of("submit_proposal")
        assert (await rows(settings))["proposals"] == []
        assert [a["detail"]["code"] for a in await audit(settings)] == ["internal_error", "stream_not_found"]


async def test_the_proposal_history_lists_proposals_with_their_state_and_the_pages_address(
    tmp_path: Path,
) -> None:
    async with with_fake(tmp_path) as (settings, fake):
        before = await ask(settings, ListProposalHistory(since="2000-01-01T00:00:00.000Z"), ProposalHistory)
        assert isinstance(before, ProposalHistory) and before.items == ()
        first = await ask(settings, reboot(), ProposalAccepted)
        await ask(settings, Deny(proposal_id=first.proposal_id), ProposalState)
        second = await ask(settings, reboot(proposed_by="operator"), ProposalAccepted)
        history = await ask(settings, ListProposalHistory(since="2000-01-01T00:00:00.000Z"), ProposalHistory)
        assert [(i.proposal_id, i.status, i.proposed_by) for i in history.items] == [
            (second.proposal_id, "pending", "operator"),
            (first.proposal_id, "denied", "assistant"),
        ]
        newest = history.items[0]
        assert newest.tool == "batch_reboot" and newest.targets == (DEVICE,) and newest.expires_at
        assert newest.arguments == {"device_ids": [DEVICE]} and newest.outcome is None
        assert history.page_url is not None and history.page_url.startswith("http://127.0.0.1:")
        later = await ask(settings, ListProposalHistory(since=history.read_at), ProposalHistory)
        assert later.items == ()
        refused = await error_code(settings, ListProposalHistory(since="last tuesday"), ProposalHistory)
        assert refused == Code.INVALID_MESSAGE
