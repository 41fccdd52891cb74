"""Bad input to the intake is said with a code that names it, never ``internal_error``: every
argument of every proposable tool fed values of the wrong shape, and IDs in the other case
where Epiphan compares them case-insensitively (a stream destination's UUID). approval_web and
the executor as real processes over their sockets, the campus lab as Epiphan. Every refusal
changes nothing but one audit row; nothing is written to the lab."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from shared import ids
from shared.errors import Code
from shared.policy.loader import load_policies
from shared.store.approvals import get_proposal
from shared.wire.approval import ProposalAccepted, SubmitProposal, codes_of
from shared.wire.protocol import TRANSPORT_CODES, ErrorReply
from tests.approval_web.helpers import (
    SANDBOX_DEVICES,
    Backend,
    Stack,
    ask,
    audit,
    backend,
    reader,
    rows,
    stack,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

A = SANDBOX_DEVICES[0]
STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"
"""The sandbox team's "Sandbox test stream" (campus scenario), listed in lower case."""
EXAMPLES = {
    ids.MASTER_ID: A,
    ids.CHANNEL_ID: f"{A}-1",
    ids.CHANNEL_NUMBER: "1",
    ids.STREAM_ID: STREAM,
    ids.EVENT_ID: "e1",
}
"""A well-formed value for each ID pattern an argument schema uses (`shared.ids`)."""
BAD_SHAPES: tuple[Any, ...] = (29088800003, "29088800003", "", "all", [], ["x"], {"k": "v"}, None, True)
"""Values of the wrong shape for some argument or other: a bare number, text, empty text and
lists, a map, null, a boolean."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("bad_input")) as running:
        yield running


def example(spec: dict[str, Any]) -> Any:
    """A well-formed value for one property of an argument schema."""
    if spec.get("enum"):
        return spec["enum"][0]
    if spec.get("type") == "array":
        return [example(spec["items"])]
    return EXAMPLES[spec["pattern"]]


def variants(spec: dict[str, Any]) -> list[Any]:
    """Bad shapes for a property, and its well-formed value in the other case (and in upper
    case inside a list)."""
    good = example(spec)
    out = list(BAD_SHAPES)
    if isinstance(good, str):
        out += [good.upper(), good.swapcase(), f" {good}"]
    if isinstance(good, list):
        out += [[good[0].upper()], good[0], [good[0], good[0]]]
    return out


async def submitted(s: Stack, tool: str, arguments: dict[str, Any]) -> str:
    """Submit; the code of the refusal, or ``accepted``. A refusal changed nothing but its one
    audit row; an accepted proposal is cleared from the store (so the next reaches Prepare)."""
    before, seen = await rows(s.settings), len(await audit(s.settings))
    message = SubmitProposal(tool=tool, arguments=arguments, reason="bad input", proposed_by="operator")
    reply = await ask(s.settings, message, ProposalAccepted)
    if isinstance(reply, ProposalAccepted):
        await s.backend.clean()
        return "accepted"
    assert isinstance(reply, ErrorReply), reply
    assert reply.code in codes_of("submit_proposal") | TRANSPORT_CODES, reply
    assert await rows(s.settings) == before
    added = (await audit(s.settings))[seen:]
    assert [(a["kind"], a["detail"]["code"]) for a in added] == [("refusal", reply.code)], added
    return reply.code


async def test_no_argument_of_any_tool_in_any_bad_shape_is_answered_internal_error(shared: Backend) -> None:
    _, tool_policy = load_policies(shared.settings.policy_dir, shared.settings.policy_override)
    answered: dict[tuple[str, str, str], str] = {}
    async with stack(shared) as s:
        for tool, rule in sorted(tool_policy.propose.items()):
            properties = rule.arguments_schema["properties"]
            good = {name: example(spec) for name, spec in properties.items()}
            for name, spec in properties.items():
                for value in variants(spec):
                    code = await submitted(s, tool, {**good, name: value})
                    answered[(tool, name, repr(value))] = code
        assert s.lab.writes() == []
    assert [key for key, code in answered.items() if code == Code.INTERNAL_ERROR] == []
    # every tool and every argument was tried, each value reached a decision
    assert {tool for tool, _, _ in answered} == set(tool_policy.propose)
    assert answered[("start_stream_endpoint", "stream_id", repr(STREAM.upper()))] == "accepted"


async def test_a_stream_destination_proposed_in_upper_case_is_bound_as_the_sandbox_team_lists_it(
    shared: Backend,
) -> None:
    async with stack(shared) as s:
        arguments = {"stream_id": STREAM.upper(), "device_id": A, "channel_id": "1"}
        message = SubmitProposal(
            tool="start_stream_endpoint", arguments=arguments, reason="rehearsal", proposed_by="operator"
        )
        reply = await ask(s.settings, message, ProposalAccepted)
        assert isinstance(reply, ProposalAccepted), reply
        async with reader(s.settings) as conn:
            row = await get_proposal(conn, reply.proposal_id)
        assert row is not None and row.arguments["stream_id"] == STREAM
        assert s.lab.writes() == []
