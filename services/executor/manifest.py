"""executor.sock's manifest: each operation and every stable code it may answer with.

A code is "answered" either as an `ErrorReply` or, for Execute, as the ``refusal_code`` of an
`ExecutionReport` with outcome ``refused``, and for Inspect as ``would_refuse``. Contract
tests check this manifest against the request union both ways
(`shared.protocol.manifest_problems`) and that every code the package can raise is declared.
"""

from __future__ import annotations

import typing
from typing import Final

from shared.errors import Code
from shared.messages import ExecutorRequest
from shared.protocol import Capabilities, Message, Operation

SERVICE: Final = "executor"
REQUESTS: Final[tuple[type[Message], ...]] = typing.get_args(ExecutorRequest)
"""The request types executor.sock serves."""

POLICY_CODES: Final = (
    Code.POLICY_INVALID,
    Code.OBSERVE_MODE,
    Code.NOT_PROPOSABLE,
    Code.SCHEMA_NOT_REVIEWED,
    Code.HIDDEN_CHARACTER,
    Code.NOT_CANONICALIZABLE,
    Code.TOO_MANY_TARGETS,
    Code.INVALID_ARGUMENTS,
)
READ_CODES: Final = (
    Code.NO_SIGN_IN,
    Code.DEVICE_LIST_UNREADABLE,
    Code.TEAM_MISMATCH,
    Code.TARGET_NOT_IN_SANDBOX,
    Code.TARGET_NOT_ALLOWLISTED,
    Code.CHANNEL_NOT_FOUND,
    Code.STREAM_NOT_FOUND,
    Code.STATE_READ_FAILED,
)

PREPARE_CODES: Final[frozenset[Code]] = frozenset(
    {*POLICY_CODES, Code.FENCE_NOT_CONFIGURED, *READ_CODES, Code.EVENT_NOT_CURRENT}
)
"""Prepare's refusals (ErrorReply). Prepare writes no audit row: the intake that asked does."""

EXECUTE_REFUSALS: Final[tuple[Code, ...]] = (
    Code.APPROVAL_NOT_FOUND,
    Code.PROPOSAL_NOT_FOUND,
    Code.APPROVAL_MISMATCH,
    Code.SEAL_INVALID,
    Code.APPROVAL_NOT_CONSUMED,
    Code.APPROVAL_EXPIRED,
    Code.APPROVAL_ALREADY_USED,
    Code.PROPOSAL_NOT_PENDING,
    *POLICY_CODES[:4],
    Code.SCHEMA_VERSION_CHANGED,
    *POLICY_CODES[4:],
    Code.FENCE_NOT_CONFIGURED,
    Code.KILL_SWITCH_ON,
    *READ_CODES,
    Code.FINGERPRINT_CHANGED,
    Code.EVENT_NOT_CURRENT,
    Code.TARGET_RECORDING,
    Code.TARGET_IN_EVENT_WINDOW,
    Code.CARD_FACTS_CHANGED,
)
"""Execute's refusals (``refusal_code`` of a ``refused`` report), in the order checked."""

START_CODES: Final[frozenset[Code]] = frozenset({Code.EXECUTOR_RESTARTED})
"""Codes the executor records at its start (on approved proposals it never took), never answered."""

INSPECT_WOULD_REFUSE: Final[frozenset[Code]] = frozenset(EXECUTE_REFUSALS) - {
    Code.APPROVAL_NOT_FOUND,
    Code.PROPOSAL_NOT_FOUND,
    Code.APPROVAL_MISMATCH,
    Code.CARD_FACTS_CHANGED,
    Code.APPROVAL_NOT_CONSUMED,
    Code.APPROVAL_EXPIRED,
    Code.APPROVAL_ALREADY_USED,
}
"""What Inspect's ``would_refuse`` may hold: Execute's checks that do not need an approval."""

LIST_WRITABLE_CODES: Final[frozenset[Code]] = frozenset(
    {Code.FENCE_NOT_CONFIGURED, Code.POLICY_INVALID, *READ_CODES[:3], Code.STATE_READ_FAILED}
)
"""ListWritable's refusals (ErrorReply): no fence, the policy, then the reads' own (the sandbox
sign-in, the device list, the team ID; the recorder status and events)."""

OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        "prepare", PREPARE_CODES | {Code.STORE_BUSY}, "bind a proposal: fresh sandbox read, fingerprint, seal"
    ),
    Operation(
        "inspect",
        INSPECT_WOULD_REFUSE | {Code.PROPOSAL_NOT_FOUND, Code.STORE_BUSY},
        "fresh facts for the approval card and what Execute would refuse now (read-only)",
    ),
    Operation(
        "execute",
        frozenset(EXECUTE_REFUSALS) | {Code.STORE_BUSY},
        "run one consumed approval once, or refuse (nothing ran)",
    ),
    Operation("health", frozenset({Code.STORE_BUSY}), "up, signed in to the sandbox, fence, kill switch"),
    Operation(
        "list_writable",
        LIST_WRITABLE_CODES,
        "the devices a change may target now: sandbox list and allowlist, read afresh (read-only)",
    ),
    Operation(
        "seal_kill_switch",
        frozenset({Code.KILL_SWITCH_NOT_CONFIRMED, Code.STORE_BUSY}),
        "confirm an operator's kill switch request under the executor's own key",
    ),
    Operation(
        "check_audit",
        frozenset({Code.CONFIG_INVALID, Code.STORE_BUSY}),
        "verify the audit log with the executor's own key and anchor",
    ),
    Operation("get_capabilities", frozenset(), "this manifest"),
)

CAPABILITIES: Final = Capabilities(service=SERVICE, operations=OPERATIONS)


def declared_codes() -> frozenset[Code]:
    """Every code some operation of executor.sock declares."""
    return frozenset(code for op in OPERATIONS for code in op.codes)
