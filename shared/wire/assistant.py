"""assistant.sock's contract: its messages, its operations with the codes each may answer, and
its client (`AssistantClient`).

Peers: operators and the ask page's process. Every socket also serves `GetCapabilities`.

    Ask → Answer

The assistant's full manifest (`services.assistant.manifest`) adds, beside these operations,
the codes that reach the model per tool group and what the ask page answers with.
"""

from __future__ import annotations

import typing
from typing import Final

import msgspec

from shared.errors import Code
from shared.text.languages import Language
from shared.wire.client import SocketClient
from shared.wire.formats import Question
from shared.wire.protocol import Capabilities, ErrorReply, GetCapabilities, Message, Operation


class Ask(Message):
    """An operator's question (at most `shared.wire.formats.MAX_QUESTION_CHARS` characters).
    ``language`` ∈ en | es | None (detect)."""

    question: Question
    language: Language | None = None


class ProposalLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A code-built line about one proposal made in this answer (its recorded state)."""

    proposal_id: str
    state: str
    text: str


class Answer(Message):
    """The answer: ``text`` (the model's words or the keyword answer), the code-built proposal
    lines, which path answered (``model`` | ``keyword``), and the language used."""

    text: str
    language: str
    answered_by: str
    proposals: tuple[ProposalLine, ...] = ()
    code: Code | None = None


AssistantRequest = Ask | GetCapabilities
AssistantReply = Answer | Capabilities | ErrorReply

REQUESTS: Final[tuple[type[Message], ...]] = typing.get_args(AssistantRequest)
"""The request types assistant.sock serves."""

EPIPHAN_CODES: Final[frozenset[Code]] = frozenset(
    {
        Code.EPIPHAN_AUTH,
        Code.EPIPHAN_TOOL_ERROR,
        Code.EPIPHAN_UNREACHABLE,
        Code.EPIPHAN_TIMEOUT,
        Code.EPIPHAN_BAD_RESULT,
    }
)
"""What a read through `shared.epiphan.read_client.EpiphanReadClient` may fail with (an offered tool is
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

ASK_CODES: Final[frozenset[Code]] = READ_CODES | {
    Code.MODEL_UNAVAILABLE,
    Code.BUDGET_EXCEEDED,
    Code.INVALID_MESSAGE,
}
"""What an `Answer`'s ``code`` (or the `ErrorReply` to an ``ask``) may hold."""

OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation("ask", ASK_CODES, "answer one question (the model, or the keyword answer)"),
    Operation("get_capabilities", frozenset(), "this manifest"),
)


class AssistantClient(SocketClient):
    """assistant.sock's client (operators' ``fleetwatch ask``): the answer, or `CallError`.

    Args:
        path: ``settings.assistant_socket``.
        timeout_seconds: the default bound on one question (a model turn takes seconds).
    """

    service = "the assistant"

    async def ask(self, question: Ask, *, timeout_seconds: float | None = None) -> Answer:
        """Answer one question. Raises `CallError`."""
        return await self.call(question, Answer, timeout_seconds=timeout_seconds)
