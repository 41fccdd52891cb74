"""assistant.sock's contract: its messages, its operations with the codes each may answer, and
its client (`AssistantClient`).

Peers: operators and the ask page's process. Every socket also serves `GetCapabilities`.

    Ask → Answer
    GetModel → ModelInfo

The assistant's full manifest (`services.assistant.manifest`) adds, beside these operations,
the codes that reach the model per tool group and what the ask page answers with.
"""

from __future__ import annotations

import typing
from typing import Final, Literal

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


class RefusalLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A change the model tried to propose and that was not queued: the stable ``code`` (for
    scripts: ``ask --json``) and the code-built sentence a person reads (``text``, no code)."""

    code: Code
    text: str


AnsweredBy = Literal["model", "demo_model", "keyword"]
"""Which path answered: a real model's API, the lab's Messages-API stand-in (the demo model),
or the keyword answer (no model)."""


class Answer(Message):
    """The answer: ``text`` (the model's words or the keyword answer), the code-built proposal
    lines, the code-built lines of proposals that were refused (``refusals``), which path
    answered (`AnsweredBy`), the language used and the answer's own code (a fallback, a spent
    budget, a failed read)."""

    text: str
    language: str
    answered_by: AnsweredBy
    proposals: tuple[ProposalLine, ...] = ()
    code: Code | None = None
    refusals: tuple[RefusalLine, ...] = ()


class GetModel(Message):
    """Which model the running assistant answers with, and what it sends there."""


class ModelInfo(Message):
    """``kind``: ``model`` (a real model's API), ``demo_model`` (the lab's Messages-API stand-in
    on this machine: nothing leaves it) or ``keyword`` (no model: nothing is sent anywhere);
    ``model``: the model name asked for; ``endpoint``: where requests go (scheme, host and port,
    never a key; ``""`` for keyword)."""

    kind: AnsweredBy
    model: str = ""
    endpoint: str = ""


AssistantRequest = Ask | GetModel | GetCapabilities
AssistantReply = Answer | ModelInfo | Capabilities | ErrorReply

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
    Operation("get_model", frozenset(), "which model answers (real, the lab's demo model, keyword only)"),
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

    async def get_model(self, *, timeout_seconds: float | None = None) -> ModelInfo:
        """Which model the running assistant answers with, and where it sends. Raises
        `CallError`."""
        return await self.call(GetModel(), ModelInfo, timeout_seconds=timeout_seconds)
