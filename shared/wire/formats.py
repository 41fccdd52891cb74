"""The formats and caps of what travels on the sockets: msgspec ``Annotated`` types for the
fields of the socket contracts (`shared.wire.executor`, `.approval`, `.assistant`).

Every ID a request carries has its format and every free string its cap, so decoding refuses a
malformed or over-long value (``invalid_message``, `shared.wire.protocol.Codec`) before a handler, or
an audit row, ever sees it. Patterns end in ``\\Z``, not ``$``: msgspec searches with Python's
``re``, whose ``$`` also matches before a trailing newline.

Fleetwatch's own IDs (`shared.store.approval_rows.new_id` makes them): a proposal ``p-`` and 12
lower-case hex characters, an approval ``a-``..., an execution ``x-``...; a model turn ``t_``
and 32 (``services.assistant.service``). Epiphan's IDs are `shared.ids`'s.

Pure: constants and types, no I/O.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Final, Literal

from msgspec import Meta

PROPOSAL_ID: Final = r"^p-[0-9a-f]{12}\Z"
APPROVAL_ID: Final = r"^a-[0-9a-f]{12}\Z"
EXECUTION_ID: Final = r"^x-[0-9a-f]{12}\Z"
TURN_ID: Final = r"^t_[0-9a-f]{32}\Z"
PAGE_SESSION_ID: Final = r"^k-[0-9a-f]{32}\Z"
"""An ask page session: ``k-`` and 32 hex characters (`services.assistant.page`; never the
cookie itself, which it is a keyed hash of)."""
TOOL_NAME: Final = r"^[a-z][a-z0-9_]{0,63}\Z"
"""An Epiphan tool's name (``batch_reboot``); whether it is proposable is the intake's call."""
NAME: Final = r"^[a-z][a-z0-9_]{0,47}\Z"
"""A snake_case word the code chose (an operation, an outcome)."""
SHA256_HEX: Final = r"^[0-9a-f]{64}\Z"
"""A SHA-256 digest in lower-case hex (a card's hash, the binding facts' hash)."""
SLACK_MEMBER_ID: Final = r"^[UW][A-Z0-9]{2,30}\Z"
"""A Slack member ID (``U0LABOPS``): who asked from Slack, in the audit (never their name)."""
UTC_TEXT: Final = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z\Z"
"""A UTC time as the database clock writes it (``2026-09-16T20:36:00.000Z``)."""

MAX_REASON_CHARS: Final = 2000
"""Longest reason of a proposal (the page shows it, escaped, in a capped box)."""
MAX_QUESTION_CHARS: Final = 2000
"""Longest question the assistant takes."""
MAX_ACTOR_CHARS: Final = 64
"""Longest operator name an admin command may give."""
MAX_MESSAGE_CHARS: Final = 2000
"""Longest ``message`` of an `ErrorReply` (the sender cuts it to fit)."""
MAX_ARGUMENTS: Final = 32
"""Most top-level arguments a proposal may carry (the reviewed schemas have a handful)."""
MAX_COUNT: Final = 10**12
"""Largest count or duration a record may carry."""

ProposalId = Annotated[str, Meta(pattern=PROPOSAL_ID)]
ApprovalId = Annotated[str, Meta(pattern=APPROVAL_ID)]
ExecutionId = Annotated[str, Meta(pattern=EXECUTION_ID)]
TurnId = Annotated[str, Meta(pattern=TURN_ID)]
PageSessionId = Annotated[str, Meta(pattern=PAGE_SESSION_ID)]
ToolName = Annotated[str, Meta(pattern=TOOL_NAME)]
Name = Annotated[str, Meta(pattern=NAME)]
Sha256Hex = Annotated[str, Meta(pattern=SHA256_HEX)]
UtcText = Annotated[str, Meta(pattern=UTC_TEXT)]
ArgumentName = Annotated[str, Meta(min_length=1, max_length=64)]
Reason = Annotated[str, Meta(max_length=MAX_REASON_CHARS)]
Question = Annotated[str, Meta(max_length=MAX_QUESTION_CHARS)]
Actor = Annotated[str, Meta(min_length=1, max_length=MAX_ACTOR_CHARS)]
ErrorText = Annotated[str, Meta(max_length=MAX_MESSAGE_CHARS)]
Count = Annotated[int, Meta(ge=0, le=MAX_COUNT)]
Uid = Annotated[int, Meta(ge=-1, le=2**32)]
SlackMemberId = Annotated[str, Meta(pattern=SLACK_MEMBER_ID)]
SlackChannelKind = Literal["dm", "channel"]
"""Where a Slack ask came from: a direct message with the app, or a channel (an ask channel)."""
"""A uid, gid or pid as ``SO_PEERCRED`` gives it (-1: the kernel could not say)."""
Arguments = Annotated[dict[ArgumentName, Any], Meta(max_length=MAX_ARGUMENTS)]
"""A proposal's arguments as sent: a map of at most `MAX_ARGUMENTS` named values (the reviewed
schema judges the values)."""


def matches(pattern: str, value: object) -> bool:
    """True when `value` is text of `pattern`'s form (the same test decoding makes)."""
    return isinstance(value, str) and re.search(pattern, value) is not None


AnsweredBy = Literal["model", "demo_model", "keyword"]
"""Which path answered: a real model's API, the lab's Messages-API stand-in (the demo model),
or the keyword answer (no model). Here, not in `shared.wire.assistant`, so approval.sock's
contract names it without importing the assistant's (and the fleet snapshot's) structs."""
