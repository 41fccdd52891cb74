"""``propose_change``: the assistant's own schema pre-check, and where proposals go.

`check_proposal` gives the model fast feedback with the same policy code the intake runs
(`ToolPolicy.rule_for`, `shared.canonical.canonicalize_arguments`, `ProposeRule.validate`), so
a malformed proposal never leaves the process. Passing it proves nothing: approval_web checks
everything again, and the executor binds the proposal against a fresh read of the sandbox team.

A `ProposalSink` is where a checked proposal goes, where the assistant learns which devices
a proposal may target, and where its audit records go (it holds no store: under the OS-user
fence its user cannot write it). In production it is `ApprovalSocketSink` (``approval.sock``:
`SubmitProposal`, `GetProposalState`, `ExpireTurn`, `ListWritable`, the last relayed to the
executor, which reads the sandbox team afresh: the assistant never holds the sandbox sign-in;
`RecordAsk`, `RecordRefusal` and `RecordPageSession`, written by approval_web as the
assistant's rows); tests pass
their own through the constructor. A sink answers with the intake's reply, or raises
`FleetwatchError` with the intake's code or the socket's (``service_unavailable``...); only
`record` never raises.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from services.assistant import AssistantError
from shared.canonical import canonical_json, canonicalize_arguments
from shared.errors import Code
from shared.policy.loader import ToolPolicy
from shared.wire import formats as wire
from shared.wire.approval import (
    ApprovalClient,
    ExpireTurn,
    GetProposalState,
    ProposalAccepted,
    ProposalExists,
    ProposalState,
    RecordAsk,
    RecordPageSession,
    RecordRefusal,
    SubmitProposal,
)
from shared.wire.client import CallError
from shared.wire.executor import ListWritable, WritableDevices

log = logging.getLogger(__name__)

MAX_REASON_CHARS: Final = wire.MAX_REASON_CHARS
"""Longest reason accepted (the intake's own cap; the page shows it escaped and capped)."""
_FIELDS: Final = frozenset({"tool", "arguments", "reason"})


@dataclass(frozen=True)
class CheckedProposal:
    """A proposal that passed the pre-check.

    Attributes:
        tool: the write tool proposed.
        arguments: canonical arguments (`canonicalize_arguments`).
        reason: the model's reason, unchanged (shown as "not checked").
        targets: the master IDs the change touches (`ProposeRule.target_device_ids`).
        key: tool + canonical arguments as text: two identical proposals have the same key.
    """

    tool: str
    arguments: dict[str, Any]
    reason: str
    targets: tuple[str, ...]
    key: str


def check_proposal(
    tool_input: Mapping[str, Any], tool_policy: ToolPolicy, *, allowlist: tuple[str, ...] = ()
) -> CheckedProposal:
    """Check a ``propose_change`` call's input; nothing is sent anywhere.

    Order: the input's own shape (exactly ``tool``, ``arguments``, ``reason``); the tool is
    proposable; the arguments have a canonical form; they name at most ``max_targets`` targets
    and fit the reviewed schema; every target is on ``FLEETWATCH_WRITE_DEVICE_IDS`` when that
    allowlist is set (`allowlist`).

    Raises:
        FleetwatchError: ``invalid_arguments`` (shape, schema: the message names each JSON
            path), ``not_proposable`` (a read tool, an unknown name, or a never-proposable
            tool), ``schema_not_reviewed``, ``hidden_character``, ``not_canonicalizable``,
            ``too_many_targets``, ``target_not_allowlisted``.
    """
    extra = sorted(set(tool_input) - _FIELDS)
    missing = sorted(_FIELDS - set(tool_input))
    if extra or missing:
        parts = [f"missing {', '.join(missing)}"] if missing else []
        parts += ["unexpected fields"] if extra else []
        raise AssistantError(
            Code.INVALID_ARGUMENTS, f"propose_change takes tool, arguments, reason: {'; '.join(parts)}"
        )
    tool, arguments, reason = tool_input["tool"], tool_input["arguments"], tool_input["reason"]
    if not isinstance(tool, str) or not isinstance(arguments, Mapping):
        raise AssistantError(Code.INVALID_ARGUMENTS, "tool must be text and arguments an object")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON_CHARS:
        raise AssistantError(
            Code.INVALID_ARGUMENTS, f"reason must be 1 to {MAX_REASON_CHARS} characters of text"
        )
    rule = tool_policy.rule_for(tool)
    canonical = canonicalize_arguments(arguments)
    rule.validate(canonical)
    targets = rule.target_device_ids(canonical)
    if allowlist:
        outside = [t for t in targets if t not in allowlist]
        if outside:
            raise AssistantError(
                Code.TARGET_NOT_ALLOWLISTED, "a target is not on FLEETWATCH_WRITE_DEVICE_IDS"
            )
    key = canonical_json({"tool": rule.tool, "arguments": canonical}).decode("utf-8")
    return CheckedProposal(tool=rule.tool, arguments=canonical, reason=reason, targets=targets, key=key)


class ProposalSink(Protocol):
    """Where proposals go (approval.sock in production). Every method but `record` returns its
    answer or raises `FleetwatchError` with the intake's code (a refusal) or the socket's
    (``service_unavailable``, ``service_no_answer``...)."""

    async def submit(self, proposal: SubmitProposal) -> ProposalAccepted | ProposalExists:
        """Submit one proposal; the intake's acceptance, or the identical proposal already
        waiting (nothing new queued). Raises `FleetwatchError`."""
        ...

    async def state(self, proposal_id: str) -> ProposalState:
        """A proposal's recorded state. Raises `FleetwatchError`."""
        ...

    async def writable(self) -> WritableDevices:
        """The devices a change may target now (the sandbox team within the allowlist, read
        afresh); names in it are display data only. Raises `FleetwatchError`."""
        ...

    async def expire_turn(self, turn_id: str) -> int:
        """Expire every pending proposal of a model turn; how many were expired.

        Raises:
            FleetwatchError: the expiry could not be recorded.
        """
        ...

    async def record(self, record: RecordAsk | RecordRefusal | RecordPageSession) -> None:
        """Have one audit row written for the assistant. Never raises: a row that cannot be
        written is logged with its code (the answer, or the refusal, still goes out)."""
        ...


class ApprovalSocketSink:
    """A `ProposalSink` over ``approval.sock`` (`shared.wire.approval.ApprovalClient`, one
    connection per request).

    Args:
        path: the socket (`Settings.approval_socket`).
        timeout_seconds: bound on each request; a submission waits for the executor's
            fresh sandbox read, so allow several seconds.
        record_timeout_seconds: bound on writing one audit record (a store write).
    """

    def __init__(
        self, path: Path, *, timeout_seconds: float = 30.0, record_timeout_seconds: float = 5.0
    ) -> None:
        self.path = path
        self.record_timeout_seconds = record_timeout_seconds
        self._client = ApprovalClient(path, timeout_seconds=timeout_seconds)

    async def submit(self, proposal: SubmitProposal) -> ProposalAccepted | ProposalExists:
        return await self._client.call(proposal)

    async def state(self, proposal_id: str) -> ProposalState:
        return await self._client.call(GetProposalState(proposal_id=proposal_id))

    async def writable(self) -> WritableDevices:
        return await self._client.call(ListWritable())

    async def expire_turn(self, turn_id: str) -> int:
        return (await self._client.call(ExpireTurn(turn_id=turn_id))).count

    async def record(self, record: RecordAsk | RecordRefusal | RecordPageSession) -> None:
        try:
            await self._client.call(record, timeout_seconds=self.record_timeout_seconds)
        except CallError as exc:
            log.error("could not record %s through approval.sock (%s)", type(record).__name__, exc.code)
