"""approval.sock's manifest: each operation and the stable codes it may answer with.

Every code here is declared in `shared.errors`; contract tests check this manifest against
the socket's request union both ways (`shared.protocol.manifest_problems`), that every code
the handlers can raise is declared, and that nothing is declared that nothing produces.
`PREPARE_CODES` and `LIST_WRITABLE_CODES` are read from the executor's manifest (constants
only: importing it loads no sign-in); those refusals pass through `SubmitProposal` and
`ListWritable` unchanged.
"""

from __future__ import annotations

import typing
from typing import Final

from services.executor.manifest import OPERATIONS as EXECUTOR_OPERATIONS
from shared.errors import Code
from shared.messages import ApprovalRequest
from shared.protocol import Capabilities, Message, Operation

SERVICE: Final = "approval_web"

REQUESTS: Final[tuple[type[Message], ...]] = typing.get_args(ApprovalRequest)
"""The request types approval.sock serves."""

PREPARE_CODES: Final[frozenset[Code]] = next(op.codes for op in EXECUTOR_OPERATIONS if op.name == "prepare")
"""What the executor's Prepare may refuse with, from its own manifest (the one source); passed
through `SubmitProposal` unchanged."""
LIST_WRITABLE_CODES: Final[frozenset[Code]] = next(
    op.codes for op in EXECUTOR_OPERATIONS if op.name == "list_writable"
)
"""What the executor's ListWritable may refuse with (its manifest); relayed unchanged."""

INTAKE_CODES: Final[tuple[Code, ...]] = (
    Code.INVALID_MESSAGE,
    Code.OPERATION_NOT_ALLOWED,
    Code.OBSERVE_MODE,
    Code.NOT_PROPOSABLE,
    Code.SCHEMA_NOT_REVIEWED,
    Code.HIDDEN_CHARACTER,
    Code.NOT_CANONICALIZABLE,
    Code.TOO_MANY_TARGETS,
    Code.INVALID_ARGUMENTS,
    Code.FENCE_NOT_CONFIGURED,
    Code.QUEUE_FULL,
    Code.HOURLY_CAP_REACHED,
    Code.DENIAL_PAUSE,
    Code.SERVICE_UNAVAILABLE,
    Code.SERVICE_NO_ANSWER,
)
"""`SubmitProposal`'s own refusals, in the order they are checked; then the executor's. An
executor record that differs from the request, or a code outside the registry, is answered
``internal_error`` (a transport code, declared for every operation)."""

START_CODES: Final[frozenset[Code]] = frozenset({Code.APPROVAL_WEB_RESTARTED})
"""Codes recorded at start (on approved proposals the executor never took), never answered."""

_ADMIN: Final = frozenset({Code.OPERATION_NOT_ALLOWED})
_RECORDS: Final = frozenset({Code.OPERATION_NOT_ALLOWED})
"""A record from a uid that is not the assistant's (`intake.check_recorder`)."""
_WRITES: Final = frozenset({Code.STORE_BUSY})

OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        "submit_proposal",
        frozenset(INTAKE_CODES) | PREPARE_CODES | _WRITES,
        "store a proposal the executor prepared (it still needs a person on the page)",
    ),
    Operation("get_proposal_state", frozenset({Code.PROPOSAL_NOT_FOUND}), "a proposal's recorded state"),
    Operation("expire_turn", frozenset(_WRITES), "expire the pending proposals of a failed model turn"),
    Operation("list_pending", frozenset(_ADMIN), "the pending proposals, oldest first"),
    Operation(
        "show_proposal",
        _ADMIN | {Code.PROPOSAL_NOT_FOUND},
        "one proposal in full, with its outcome and verification if it ran",
    ),
    Operation(
        "deny",
        _ADMIN | _WRITES | {Code.PROPOSAL_NOT_FOUND, Code.PROPOSAL_NOT_PENDING},
        "deny one pending proposal",
    ),
    Operation("deny_all", _ADMIN | _WRITES, "deny every pending proposal"),
    Operation("set_kill_switch", _ADMIN | _WRITES, "pause or resume every write (the executor obeys it)"),
    Operation("get_status", frozenset(_ADMIN), "queue, caps, pauses, kill switch, executor, fence, autonomy"),
    Operation("audit_tail", _ADMIN | {Code.INVALID_MESSAGE}, "the newest audit rows"),
    Operation("audit_verify", frozenset(_ADMIN), "walk the audit hash chain"),
    Operation(
        "record_ask",
        _RECORDS | _WRITES,
        "the assistant's audit row of one question (counts only; the assistant's user only)",
    ),
    Operation(
        "record_refusal",
        _RECORDS | _WRITES | {Code.INVALID_MESSAGE},
        "the audit row of a refusal on assistant.sock (the assistant's user only)",
    ),
    Operation(
        "list_writable",
        LIST_WRITABLE_CODES | {Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER},
        "the devices a change may target now, read afresh by the executor (relayed; read-only)",
    ),
    Operation(
        "list_proposal_history",
        frozenset(),
        "the proposals made since a time, with their outcomes, and the page's address (the watch; read-only)",
    ),
    Operation("get_capabilities", frozenset(), "this manifest"),
)


def capabilities() -> Capabilities:
    """The reply to `GetCapabilities` on approval.sock."""
    return Capabilities(service=SERVICE, operations=OPERATIONS)


def codes_of(operation: str) -> frozenset[Code]:
    """The codes `operation` declares (without the transport codes).

    Raises:
        KeyError: no such operation.
    """
    for op in OPERATIONS:
        if op.name == operation:
            return op.codes
    raise KeyError(operation)
