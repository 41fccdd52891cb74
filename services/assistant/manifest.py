"""assistant.sock's manifest: each operation, and each tool the model is offered, with its codes.

Three kinds of entries, all in the one `Capabilities` reply:

- the socket's operations (``ask``, ``get_capabilities``): `shared.protocol.manifest_problems`
  checks them against the request union both ways. ``ask`` lists the codes an `Answer` may
  carry in ``code`` (a fallback, a spent budget, a failed read).
- ``model_tool:<group>`` entries: the codes that reach the **model** inside a data block, per
  tool group (``read``, ``list_writable_devices``, ``propose_change``, ``get_proposal_state``,
  ``ask_operator``, ``not_offered``). They are not socket requests; the contract tests check them against the
  tools offered and against the codes the package's code can emit, both ways.
- ``page:ask``: what the local ask page answers a POST with (an HTTP surface, not a socket).

Codes relayed unchanged from elsewhere are named as such: `READ_CODES` (the guarded read
client), `SUBMIT_CODES` (approval.sock's ``submit_proposal``, which includes the executor's
Prepare), `STATE_CODES` (``get_proposal_state``), `WRITABLE_CODES` (``list_writable``, the
executor's ListWritable relayed). A test checks them against those manifests.
"""

from __future__ import annotations

import typing
from typing import Final

from shared.errors import Code
from shared.messages import AssistantRequest
from shared.protocol import Capabilities, Message, Operation

SERVICE: Final = "assistant"
TOOL_PREFIX: Final = "model_tool:"
REQUESTS: Final[tuple[type[Message], ...]] = typing.get_args(AssistantRequest)

EPIPHAN_CODES: Final[frozenset[Code]] = frozenset(
    {
        Code.EPIPHAN_AUTH,
        Code.EPIPHAN_TOOL_ERROR,
        Code.EPIPHAN_UNREACHABLE,
        Code.EPIPHAN_TIMEOUT,
        Code.EPIPHAN_BAD_RESULT,
    }
)
"""What a read through `shared.epiphan.EpiphanReadClient` may fail with (an offered tool is
never refused by its guard)."""

READ_CODES: Final[frozenset[Code]] = EPIPHAN_CODES | {
    Code.NO_SIGN_IN,
    Code.CONFIG_INVALID,
    Code.SIGN_IN_DEAD,
    Code.REFRESH_FAILED,
    Code.SIGN_IN_BUSY,
}
"""A read by the assistant (`services.assistant.reader.SlotReader`): the read client's codes,
plus the read slot's (empty, unsafe, dead, refresh failed, locked)."""

SOCKET_CODES: Final[frozenset[Code]] = frozenset(
    {Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER, Code.INTERNAL_ERROR, Code.PEER_NOT_ALLOWED}
)
"""What any request on approval.sock may fail with, from the socket itself."""

SUBMIT_CODES: Final[frozenset[Code]] = SOCKET_CODES | {
    Code.INVALID_MESSAGE,
    Code.POLICY_INVALID,
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
    Code.NO_SIGN_IN,
    Code.DEVICE_LIST_UNREADABLE,
    Code.TEAM_MISMATCH,
    Code.TARGET_NOT_IN_SANDBOX,
    Code.TARGET_NOT_ALLOWLISTED,
    Code.CHANNEL_NOT_FOUND,
    Code.STREAM_NOT_FOUND,
    Code.EVENT_NOT_CURRENT,
    Code.STATE_READ_FAILED,
    Code.STORE_BUSY,
}
"""approval.sock's answers to ``submit_proposal``, relayed to the model unchanged."""

STATE_CODES: Final[frozenset[Code]] = SOCKET_CODES | {Code.PROPOSAL_NOT_FOUND, Code.OPERATION_NOT_ALLOWED}
"""approval.sock's answers to ``get_proposal_state``, relayed unchanged."""

WRITABLE_CODES: Final[frozenset[Code]] = SOCKET_CODES | {
    Code.OPERATION_NOT_ALLOWED,
    Code.FENCE_NOT_CONFIGURED,
    Code.POLICY_INVALID,
    Code.NO_SIGN_IN,
    Code.DEVICE_LIST_UNREADABLE,
    Code.TEAM_MISMATCH,
    Code.STATE_READ_FAILED,
}
"""approval.sock's answers to ``list_writable`` (the executor's fresh sandbox read), relayed
unchanged."""

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
        f"{TOOL_PREFIX}not_offered",
        frozenset({Code.UNKNOWN_TOOL, Code.TOOL_NOT_ALLOWED, Code.OBSERVE_MODE}),
        "a name that was not offered: a write tool, an invented name, propose_change or "
        "list_writable_devices in observe mode",
    ),
)

ASK_CODES: Final[frozenset[Code]] = READ_CODES | {
    Code.MODEL_UNAVAILABLE,
    Code.BUDGET_EXCEEDED,
    Code.INVALID_MESSAGE,
}
"""What an `Answer`'s ``code`` (or the `ErrorReply` to an ``ask``) may hold."""

POST_CODES: Final[frozenset[Code]] = frozenset(
    {Code.POST_FAILED, Code.POST_TIMEOUT, Code.POST_DROPPED, Code.INTERNAL_ERROR}
)
"""What a destination's last failure may be (`WatchStatus.posts`): logged, counted, never retried."""

WATCH_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        "get_watch_status",
        READ_CODES | POST_CODES | {Code.STORE_BUSY},
        "is the heartbeat alive: last read, failed beats in a row and the last code, posts per destination",
    ),
    Operation(
        "get_history",
        frozenset({Code.STORE_BUSY}),
        "what changed in the last days, with proposals and outcomes",
    ),
    Operation(
        "run_digest",
        READ_CODES | {Code.STORE_BUSY},
        "one heartbeat now and the digest of what changed (posted with post=true)",
    ),
    Operation(
        "set_note",
        frozenset(
            {
                Code.WATCH_NOT_READY,
                Code.INVALID_MESSAGE,
                Code.ROOM_AMBIGUOUS,
                Code.ROOM_NOT_FOUND,
                Code.STORE_BUSY,
            }
        ),
        "keep an operator's one-line note on the one room a name matches (ambiguous: nothing saved)",
    ),
    Operation("list_notes", frozenset({Code.STORE_BUSY}), "the room notes"),
)
"""The watch's operations (`services.assistant.watch.answers`)."""

SOCKET_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation("ask", ASK_CODES, "answer one question (the model, or the keyword answer)"),
    *WATCH_OPERATIONS,
    Operation("get_capabilities", frozenset(), "this manifest"),
)

PAGE_PREFIX: Final = "page:"
PAGE_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        f"{PAGE_PREFIX}ask",
        ASK_CODES | {Code.BAD_HOST, Code.CROSS_SITE, Code.CSRF_FAILED, Code.BODY_TOO_LARGE},
        "the local ask page's POST /ask",
    ),
    Operation(
        f"{PAGE_PREFIX}wall",
        frozenset({Code.BAD_HOST, Code.WATCH_NOT_READY}),
        "the wall screen's GET /wall (read-only, no secret)",
    ),
)
"""The ask page (HTTP, not a socket request): the refusals it answers with."""


def capabilities() -> Capabilities:
    """The reply to `GetCapabilities` on assistant.sock."""
    return Capabilities(service=SERVICE, operations=SOCKET_OPERATIONS + TOOL_OPERATIONS + PAGE_OPERATIONS)


def all_codes() -> frozenset[Code]:
    """Every code the manifest declares: socket, model-tool and page entries together."""
    return frozenset(
        code for op in SOCKET_OPERATIONS + TOOL_OPERATIONS + PAGE_OPERATIONS for code in op.codes
    )
