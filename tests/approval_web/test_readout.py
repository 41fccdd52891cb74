"""approval.sock's read-only answers from the store while the services are stopped (issue 28,
item 8): the same handlers over a read-only connection; nothing else is answered, nothing is
written."""

from __future__ import annotations

from pathlib import Path

from services.approval_web.readout import CODEC, answer
from shared.config import load_settings
from shared.errors import Code
from shared.wire.approval import AuditReport, AuditVerify, Deny, ProposalDetail, ShowProposal
from shared.wire.protocol import ErrorReply
from tests.approval_web.page.helpers import add_proposal, new_store
from tests.procs import base_env


async def test_a_read_only_operation_is_answered_from_the_store_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    settings = load_settings(base_env(tmp_path))
    await new_store(settings.db)
    proposal_id = await add_proposal(settings.db, names={"29088800001": "Sandbox Pearl-2"})
    before = {p.name: p.stat().st_mtime_ns for p in settings.db.parent.iterdir()}
    shown = await answer(CODEC.encode(ShowProposal(proposal_id=proposal_id)), lambda: settings)
    assert isinstance(shown, ProposalDetail) and shown.summary.proposal_id == proposal_id
    verified = await answer(CODEC.encode(AuditVerify()), lambda: settings)
    assert isinstance(verified, AuditReport) and not verified.ok and verified.first_bad_seq is None
    assert verified.reason is None and all(not c.ok and c.reason is None for c in verified.checks)
    missing = await answer(CODEC.encode(ShowProposal(proposal_id="p-000000000000")), lambda: settings)
    assert isinstance(missing, ErrorReply) and missing.code == Code.PROPOSAL_NOT_FOUND
    assert {p.name: p.stat().st_mtime_ns for p in settings.db.parent.iterdir()} == before


async def test_an_operation_that_writes_is_never_answered(tmp_path: Path) -> None:
    settings = load_settings(base_env(tmp_path))
    refused = await answer(CODEC.encode(Deny(proposal_id="p-000000000001")), lambda: settings)
    assert isinstance(refused, ErrorReply) and refused.code == Code.UNKNOWN_MESSAGE
    assert not settings.db.exists()
