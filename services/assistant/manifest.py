"""assistant.sock's manifest: each operation, and each tool the model is offered, with its codes.

Four kinds of entries, all in the one `Capabilities` reply:

- the socket's operations (``ask``, ``get_fleet``, ``get_model``, the watch's
  ``get_watch_status``, ``get_history``, ``run_digest``, ``set_note``, ``list_notes``, and
  ``get_capabilities``: the rows of `shared.wire.assistant.OPERATIONS`). ``ask`` lists the codes an `Answer` may
  carry in ``code`` (a fallback, a spent budget, a failed read).
- ``model_tool:<group>`` entries: the codes that reach the **model** inside a data block, per
  tool group (``read``, ``list_writable_devices``, ``propose_change``, ``get_proposal_state``,
  ``get_room_notes``, ``ask_operator``, ``not_offered``). They are not socket requests; the contract tests check them against the
  tools offered and against the codes the package's code can emit, both ways.
- ``page:ask``, ``page:login``, ``page:wall``: what the local ask page answers a POST with,
  and the wall screen a GET (HTTP surfaces, not a socket).
- ``slack:ask``: an ask from Slack over Socket Mode, and the codes its refusals are audited
  with (not a socket request either).

Codes relayed unchanged from elsewhere are named as such: `READ_CODES` (the guarded read
client), `SUBMIT_CODES` (approval.sock's ``submit_proposal``, which includes the executor's
Prepare), `STATE_CODES` (``get_proposal_state``), `WRITABLE_CODES` (``list_writable``, the
executor's ListWritable relayed), each taken from approval.sock's contract
(`shared.wire.approval.codes_of`).
"""

from __future__ import annotations

from typing import Final

from shared.errors import Code
from shared.wire import approval
from shared.wire.assistant import ASK_CODES, OPERATIONS, READ_CODES
from shared.wire.client import CALL_CODES
from shared.wire.protocol import Capabilities, Operation

SERVICE: Final = OPERATIONS.service
SOCKET_OPERATIONS: Final = OPERATIONS.manifest.operations
"""assistant.sock's own operations (`shared.wire.assistant.OPERATIONS`)."""
TOOL_PREFIX: Final = "model_tool:"

SOCKET_CODES: Final[frozenset[Code]] = CALL_CODES
"""What any request on approval.sock may fail with, from the socket itself (the client's
`CALL_CODES`)."""

SUBMIT_CODES: Final[frozenset[Code]] = SOCKET_CODES | approval.codes_of("submit_proposal")
"""approval.sock's answers to ``submit_proposal``, relayed to the model unchanged."""

STATE_CODES: Final[frozenset[Code]] = (
    SOCKET_CODES | approval.codes_of("get_proposal_state") | {Code.OPERATION_NOT_ALLOWED}
)
"""approval.sock's answers to ``get_proposal_state``, relayed unchanged (and the role check's
refusal, should the assistant's uid ever be taken for an operator's)."""

WRITABLE_CODES: Final[frozenset[Code]] = (
    SOCKET_CODES | approval.codes_of("list_writable") | {Code.OPERATION_NOT_ALLOWED}
)
"""approval.sock's answers to ``list_writable`` (the executor's fresh sandbox read), relayed
unchanged (and the role check's refusal)."""

OWN_PROPOSE_CODES: Final[frozenset[Code]] = frozenset(
    {
        Code.INVALID_ARGUMENTS,
        Code.NOT_PROPOSABLE,
        Code.SCHEMA_NOT_REVIEWED,
        Code.HIDDEN_CHARACTER,
        Code.NOT_CANONICALIZABLE,
        Code.TOO_MANY_TARGETS,
        Code.TARGET_NOT_ALLOWLISTED,
        Code.DUPLICATE_PROPOSAL,
        Code.FSM_BLOCKED,
        Code.BUDGET_EXCEEDED,
    }
)
"""The assistant's own refusals of ``propose_change`` (before anything is sent)."""

TOOL_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        f"{TOOL_PREFIX}read", READ_CODES | {Code.BUDGET_EXCEEDED}, "any read tool offered to the model"
    ),
    Operation(
        f"{TOOL_PREFIX}list_writable_devices",
        WRITABLE_CODES | {Code.BUDGET_EXCEEDED},
        "the devices a change may be proposed for (the sandbox team, read afresh by the executor)",
    ),
    Operation(
        f"{TOOL_PREFIX}propose_change", OWN_PROPOSE_CODES | SUBMIT_CODES, "propose one change for a person"
    ),
    Operation(
        f"{TOOL_PREFIX}get_proposal_state",
        STATE_CODES | {Code.BUDGET_EXCEEDED},
        "the recorded state of a proposal made in this conversation",
    ),
    Operation(
        f"{TOOL_PREFIX}get_room_notes",
        frozenset({Code.BUDGET_EXCEEDED, Code.STORE_BUSY, Code.UNKNOWN_TOOL}),
        "operators' one-line room notes, as data (offered when the watch keeps them)",
    ),
    Operation(
        f"{TOOL_PREFIX}ask_operator",
        frozenset({Code.INVALID_ARGUMENTS, Code.BUDGET_EXCEEDED, Code.FSM_BLOCKED}),
        "ask the operator; ends the turn (calls after it in the batch are not run: fsm_blocked)",
    ),
    Operation(
        f"{TOOL_PREFIX}not_asked",
        frozenset(
            {
                Code.CHANGE_NOT_ASKED,
                Code.ROOM_NOT_FOUND,
                Code.TARGET_NOT_IN_SANDBOX,
                Code.OBSERVE_MODE,
                Code.FENCE_NOT_CONFIGURED,
                Code.MODEL_UNAVAILABLE,
            }
        ),
        "a change asked for in words that no propose_change call asked for: the answer's "
        "code-built 'Not proposed' line (the model chose not to, or the keyword answer cannot)",
    ),
    Operation(
        f"{TOOL_PREFIX}not_offered",
        frozenset({Code.UNKNOWN_TOOL, Code.TOOL_NOT_ALLOWED, Code.OBSERVE_MODE}),
        "a name that was not offered: a write tool, an invented name, propose_change or "
        "list_writable_devices in observe mode",
    ),
)

PAGE_PREFIX: Final = "page:"
PAGE_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        f"{PAGE_PREFIX}ask",
        ASK_CODES
        | {
            Code.BAD_HOST,
            Code.CROSS_SITE,
            Code.CSRF_FAILED,
            Code.BODY_TOO_LARGE,
            Code.SECRET_REQUIRED,
            Code.SESSION_NOT_YOURS,
            Code.METHOD_NOT_ALLOWED,
            Code.PAGE_NOT_FOUND,
        },
        "the local ask page's POST /ask (a session begun with the page's secret by the same uid; and any address or method it does not serve)",
    ),
    Operation(
        f"{PAGE_PREFIX}login",
        frozenset({Code.BAD_HOST, Code.CROSS_SITE, Code.BODY_TOO_LARGE, Code.SECRET_WRONG, Code.SLOW_DOWN}),
        "the local ask page's POST /login (its secret, slowed down after wrong entries)",
    ),
    Operation(
        f"{PAGE_PREFIX}wall",
        frozenset({Code.BAD_HOST, Code.WATCH_NOT_READY}),
        "the wall screen's GET /wall (read-only, no secret)",
    ),
)
"""The ask page (HTTP, not a socket request): the refusals it answers with."""

SLACK_PREFIX: Final = "slack:"
SLACK_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        f"{SLACK_PREFIX}ask",
        ASK_CODES
        | {
            Code.SLACK_WRONG_TEAM,
            Code.SLACK_NOT_ALLOWED,
            Code.SLACK_CHANNEL_NOT_SERVED,
            Code.SLACK_RATE_LIMITED,
            Code.SLACK_QUESTION_TOO_LONG,
            Code.INVALID_MESSAGE,
        },
        "an ask from Slack over Socket Mode (services/assistant/slack.py): read-only, never a "
        "proposal; each refusal is audited with its code",
    ),
)
"""Asks from Slack (Socket Mode, not a socket request): the refusals they are audited with."""


def capabilities() -> Capabilities:
    """The reply to `GetCapabilities` on assistant.sock."""
    return Capabilities(
        service=SERVICE, operations=SOCKET_OPERATIONS + TOOL_OPERATIONS + PAGE_OPERATIONS + SLACK_OPERATIONS
    )


def all_codes() -> frozenset[Code]:
    """Every code the manifest declares: socket, model-tool, page and Slack entries together."""
    return frozenset(
        code
        for op in SOCKET_OPERATIONS + TOOL_OPERATIONS + PAGE_OPERATIONS + SLACK_OPERATIONS
        for code in op.codes
    )
