"""``propose_change``: the assistant's own schema pre-check, and where proposals go.

`check_proposal` gives the model fast feedback with the same policy code the intake runs
(`ToolPolicy.rule_for`, `shared.canonical.canonicalize_arguments`, `ProposeRule.validate`), so
a malformed proposal never leaves the process. Passing it proves nothing: approval_web checks
everything again, and the executor binds the proposal against a fresh read of the sandbox team.

A `ProposalSink` is where a checked proposal goes, where the assistant learns which devices
a proposal may target, and where its audit records go (it holds no store: under the OS-user
fence its user cannot write it). In production it is approval.sock's client (`approval_sink`:
`SubmitProposal`, `GetProposalState`, `ExpireTurn`, `ListWritable`, the last relayed to the
executor, which reads the sandbox team afresh: the assistant never holds the sandbox sign-in;
`RecordAsk`, `RecordRefusal` and `RecordPageSession`, written by approval_web as the
assistant's rows, through `write_record`, which never raises); tests pass their own through the
constructor. A sink answers with the intake's reply, or raises `FleetwatchError` with the
intake's code or the socket's (``service_unavailable``...).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from services.assistant import AssistantError
from shared.canonical import canonical_json, canonicalize_arguments
from shared.errors import Code
from shared.policy.loader import ToolPolicy
from shared.wire import formats as wire
from shared.wire.approval import ApprovalClient, RecordAsk, RecordPageSession, RecordRefusal
from shared.wire.client import CallError
from shared.wire.protocol import Message, Request

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Message)

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
    """Where proposals go and the assistant's audit rows are written: approval.sock's client
    in production (`approval_sink`). `call` returns the request's reply, or raises
    `FleetwatchError` with the intake's code or the socket's (``service_unavailable``...)."""

    async def call(self, request: Request[R], *, timeout_seconds: float | None = None) -> R: ...


def approval_sink(path: Path, *, timeout_seconds: float = 30.0) -> ApprovalClient:
    """approval.sock's client as a `ProposalSink` (`Settings.approval_socket`); a submission
    waits for the executor's fresh sandbox read, so allow several seconds."""
    return ApprovalClient(path, timeout_seconds=timeout_seconds)


RECORD_SECONDS: Final = 5.0
"""Bound on writing one audit record (a store write)."""


async def write_record(sink: ProposalSink, row: RecordAsk | RecordRefusal | RecordPageSession) -> None:
    """Have one audit row written for the assistant. Never raises: a row that cannot be written
    is logged with its code (the answer, or the refusal, still goes out)."""
    try:
        await sink.call(row, timeout_seconds=RECORD_SECONDS)
    except CallError as exc:
        log.error("could not record %s through approval.sock (%s)", type(row).__name__, exc.code)
