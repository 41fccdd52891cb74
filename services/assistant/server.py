"""assistant.sock and the production wiring of `Assistant`.

`build_assistant` puts the production parts together from the settings: the read slot's
guarded client (`reader.SlotReader`), approval.sock as the proposal sink, the model client
when a key is set (none: keyword answers only), and the store for the audit row.
`assistant_side` serves assistant.sock for an ``async with`` block; ``__main__`` runs it (and
the ask page with ``--page``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, Final, Protocol

import aiosqlite
import anthropic

from services.assistant import AssistantError
from services.assistant.manifest import REQUESTS, capabilities
from services.assistant.proposals import ApprovalSocketSink
from services.assistant.reader import SlotReader
from services.assistant.service import Assistant
from shared.config import Settings
from shared.errors import Code
from shared.messages import Answer, Ask
from shared.policy import Policy, ToolPolicy
from shared.protocol import Codec, GetCapabilities, Message, PeerCred, serve_unix

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS: Final = 2000
"""Longest question accepted, in characters."""
MODEL_RETRIES: Final = 1
"""Retries the SDK may make of one model call (a 529 or a dropped connection)."""


class Asker(Protocol):
    """What the socket and the ask page need: `Assistant.ask`."""

    async def ask(self, question: str, language: str | None = None) -> Answer: ...


def model_client(settings: Settings) -> anthropic.AsyncAnthropic | None:
    """The model client the settings describe, or None when no key is set (model off)."""
    if settings.anthropic_api_key is None:
        return None
    return anthropic.AsyncAnthropic(
        api_key=settings.anthropic_api_key.reveal(),
        base_url=settings.anthropic_base_url,
        max_retries=MODEL_RETRIES,
        timeout=settings.model_timeout_seconds,
    )


def build_assistant(
    settings: Settings,
    policy: Policy,
    tool_policy: ToolPolicy,
    store: aiosqlite.Connection | None,
    *,
    client: Any | None = None,
) -> tuple[Assistant, SlotReader]:
    """The production `Assistant` (and its reader, to close at the end). `client` overrides
    the model client the settings describe (None: from the settings)."""
    reader = SlotReader(settings.read_token_file, settings.epiphan_mcp_url, tool_policy.model_read_tools)
    assistant = Assistant(
        reader=reader,
        sink=ApprovalSocketSink(settings.approval_socket),
        policy=policy,
        tool_policy=tool_policy,
        model_client=client if client is not None else model_client(settings),
        model=settings.model,
        fence_configured=settings.fence_configured,
        allowlist=settings.write_device_ids,
        call_timeout_seconds=settings.model_timeout_seconds,
        store=store,
    )
    return assistant, reader


def handler(assistant: Asker) -> Any:
    """The assistant.sock request handler."""

    async def handle(request: Message, peer: PeerCred) -> Message:
        if isinstance(request, GetCapabilities):
            return capabilities()
        if isinstance(request, Ask):
            if not request.question.strip() or len(request.question) > MAX_QUESTION_CHARS:
                raise AssistantError(
                    Code.INVALID_MESSAGE, f"a question is 1 to {MAX_QUESTION_CHARS} characters"
                )
            if request.language not in (None, "en", "es"):
                raise AssistantError(Code.INVALID_MESSAGE, "language is en, es or left out")
            return await assistant.ask(request.question, request.language)
        raise AssistantError(Code.UNKNOWN_MESSAGE, f"{type(request).__name__} is not served here")

    return handle


@contextlib.asynccontextmanager
async def assistant_side(settings: Settings, assistant: Asker) -> AsyncIterator[None]:
    """Serve assistant.sock (``settings.assistant_socket``) for the ``async with`` block.

    Raises:
        ProtocolError: ``socket_in_use`` (another assistant is running).
    """
    server = await serve_unix(
        settings.assistant_socket,
        handler(assistant),
        codec=Codec(REQUESTS),
        allowed_uids=settings.assistant_uids,
        allowed_gids=settings.assistant_gids,
    )
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            settings.assistant_socket.unlink()
