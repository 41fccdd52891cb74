"""approval.sock's manifest: each operation and the stable codes it may answer with.

Every code here is declared in `shared.errors`; a contract test checks this manifest against
the socket's request union both ways (`shared.protocol.manifest_problems`), that every code
the handlers can raise is declared, and that `PREPARE_CODES` covers the executor's own
manifest for Prepare (those refusals pass through `SubmitProposal` unchanged).
"""

from __future__ import annotations

import typing
from typing import Final

from shared.errors import Code
from shared.messages import ApprovalRequest
from shared.protocol import Capabilities, Message, Operation

SERVICE: Final = "approval_web"

REQUESTS: Final[tuple[type[Message], ...]] = typing.get_args(ApprovalRequest)
"""The request types approval.sock serves."""

PREPARE_CODES: Final[frozenset[Code]] = frozenset(
    {
        Code.NO_SIGN_IN,
        Code.FENCE_NOT_CONFIGURED,
        Code.NOT_PROPOSABLE,
        Code.SCHEMA_NOT_REVIEWED,
        Code.INVALID_ARGUMENTS,
        Code.TOO_MANY_TARGETS,
        Code.HIDDEN_CHARACTER,
        Code.NOT_CANONICALIZABLE,
        Code.DEVICE_LIST_UNREADABLE,
        Code.TEAM_MISMATCH,
        Code.TARGET_NOT_IN_SANDBOX,
        Code.TARGET_NOT_ALLOWLISTED,
        Code.CHANNEL_NOT_FOUND,
        Code.STREAM_NOT_FOUND,
        Code.EVENT_NOT_CURRENT,
        Code.STATE_READ_FAILED,
        Code.EPIPHAN_AUTH,
        Code.EPIPHAN_TOOL_ERROR,
        Code.EPIPHAN_UNREACHABLE,
        Code.EPIPHAN_TIMEOUT,
        Code.EPIPHAN_BAD_RESULT,
        Code.STORE_BUSY,
    }
)
"""What the executor's Prepare may refuse with; passed through `SubmitProposal` unchanged."""

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
"""`SubmitProposal`'s own refusals, in the order they are checked (then the executor's)."""

_ADMIN: Final = frozenset({Code.OPERATION_NOT_ALLOWED})
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
