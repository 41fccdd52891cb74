"""What a model script sees and returns (`services.lab.model_standin` plays scripts).

A script is a callable ``(ModelRequest) -> Reply`` (or an awaitable of one). `ModelRequest` is
one Messages-API request as the stand-in received it, with helpers to find the question, the
tools offered and the tool results so far; `Reply` is the model's next message (`Text` and
`ToolUse` blocks, a stop reason). `json_in` reads the JSON inside a tool result (the assistant
sends each result as one data block holding a JSON document).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolResult:
    """One ``tool_result`` block of the last user message, with the name of the tool it answers."""

    tool_use_id: str
    name: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class ModelRequest:
    """One request as received: ``body`` (parsed JSON), ``raw`` (the bytes), ``seq`` from 1."""

    seq: int
    body: Mapping[str, Any]
    raw: bytes

    @property
    def system(self) -> Any:
        return self.body.get("system")

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def tool_names(self) -> frozenset[str]:
        """The names of the tools offered in this request."""
        return frozenset(t.get("name", "") for t in self.tools)

    def question(self) -> str:
        """The text of the first user message."""
        first = self.messages[0] if self.messages else {}
        return _text_of(first.get("content"))

    def tool_uses(self) -> list[dict[str, Any]]:
        """Every ``tool_use`` block the model sent so far, oldest first."""
        return [
            block
            for message in self.messages
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]

    def tool_results(self) -> list[ToolResult]:
        """Every ``tool_result`` so far (all user messages), oldest first."""
        names = {u.get("id"): u.get("name", "") for u in self.tool_uses()}
        return [
            ToolResult(
                tool_use_id=block.get("tool_use_id", ""),
                name=names.get(block.get("tool_use_id"), ""),
                text=_text_of(block.get("content")),
                is_error=bool(block.get("is_error")),
            )
            for message in self.messages
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def json_in(text: str) -> Any:
    """The first JSON object or array inside `text` (e.g. inside a data block), or None."""
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char in "{[":
            try:
                return decoder.raw_decode(text, index)[0]
            except ValueError:
                continue
    return None


@dataclass(frozen=True)
class Text:
    """A text block of the answer."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block of the answer; ``id`` is made up when None."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """The model's next message. ``stop_reason`` None means ``tool_use`` when a block is a
    `ToolUse`, else ``end_turn``; ``output_tokens`` None means bytes / 4."""

    content: Sequence[Text | ToolUse]
    stop_reason: str | None = None
    output_tokens: int | None = None


def say(text: str) -> Reply:
    """A reply holding only `text` (``end_turn``)."""
    return Reply((Text(text),))


def call(name: str, arguments: Mapping[str, Any] | None = None, *, text: str | None = None) -> Reply:
    """A reply calling one tool, optionally after some text."""
    blocks: list[Text | ToolUse] = [Text(text)] if text else []
    return Reply((*blocks, ToolUse(name, dict(arguments or {}))))


Script = Callable[[ModelRequest], Reply | Awaitable[Reply]]
