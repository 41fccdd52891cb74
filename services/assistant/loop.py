"""The model loop: the Anthropic Messages API with tool use, streaming and prompt caching.

One question: the first user message, then model call, tool calls (`pipeline.ToolRunner`),
model call... until the model answers without tools, asks the operator, or a budget is spent.
The system prompt and the tool list are sent unchanged every time, both marked with
``cache_control`` (the cached prefix is the same bytes across calls and questions).

The model's content blocks are echoed back with ``block.to_dict()`` (SDK 2.x; never
``model_dump()``, which would add fields the API refuses). Prompts are kept in memory only.

Errors: any SDK error (HTTP 4xx/5xx, 529 overloaded, connection, timeout), a broken stream
(an SSE ``error`` event or an HTTP status instead: both the SDK's errors), a ``refusal`` stop
reason, or the per-call timeout raise `ModelUnavailable` (one code, ``model_unavailable``; the
caller gives the keyword answer and expires the turn's proposals). A spent budget is not an
error: the loop returns with ``stop="budget_exceeded"`` and the words said so far.

Anthropic-compatible servers (Ollama, llama.cpp, vLLM, SGLang, LiteLLM; the lab's stand-in
reproduces each as a profile) depart from the API, so the loop trusts the content blocks, never
``stop_reason`` (a mismatch is logged), never sends ``tool_choice`` nor calls ``count_tokens``,
and checks every tool call before any runs (`bad_tool_call`): an empty or repeated ``id``, an
input that is not one JSON object, streamed ``input_json_delta`` fragments that do not parse
strictly to that input (dropped or merged calls; the SDK's own parser tolerates truncation), or
a tool call written as text. Then nothing of that answer runs and the loop returns with
``stop="bad_tool_call"`` (the caller says so in words).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from services.assistant import ModelUnavailable
from services.assistant.budget import Budget, Spent, over_before_model_call, seconds_left
from services.assistant.pipeline import ToolCall, ToolRunner
from services.assistant.prompt import system_blocks

if TYPE_CHECKING:
    import anthropic

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS: Final = 2048
"""Largest answer per model call, in tokens."""


@dataclass(frozen=True)
class LoopResult:
    """How one question's loop ended.

    Attributes:
        text: the model's final words (``end_turn``), or everything it said so far.
        stop: ``end_turn``, ``max_tokens``, ``ask_operator``, ``budget_exceeded`` or
            ``bad_tool_call``.
        limit: the budget that was spent (``model_calls``, ``tokens``, ``tool_calls``,
            ``wall_seconds``), or for ``bad_tool_call`` what was wrong (`bad_tool_call`), or None.
    """

    text: str
    stop: str
    limit: str | None = None


class _Unreadable(Exception):
    """The SDK could not parse a streamed tool input."""


def _text_call(text: str, offered: frozenset[str]) -> bool:
    """True when `text` holds a tool call written as text: ``<tool_call>``, or a JSON object
    naming an offered tool with its ``arguments``, ``input`` or ``parameters``."""
    if "<tool_call>" in text:
        return True
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char == "{":
            try:
                found = decoder.raw_decode(text, index)[0]
            except ValueError:
                continue
            if (
                isinstance(found, dict)
                and found.get("name") in offered
                and found.keys() & {"arguments", "input", "parameters"}
            ):
                return True
    return False


def bad_tool_call(blocks: Sequence[Any], streamed: dict[int, str], offered: frozenset[str]) -> str | None:
    """Why the tool calls of one model answer cannot be run, or None when they can.

    Args:
        blocks: the answer's content blocks (SDK objects: ``type``, ``id``, ``name``, ``input``,
            ``text``).
        streamed: each block index's ``input_json_delta`` fragments joined, as streamed.
        offered: the names of the tools offered.

    Returns:
        ``tool_call_id`` (an id empty, or repeated within the answer: split calls with mismatched
        ids), ``tool_input`` (not one JSON object, or fragments that do not parse strictly to
        it: dropped or merged calls), ``tool_call_as_text``, or None.
    """
    uses = [(i, b) for i, b in enumerate(blocks) if b.type == "tool_use"]
    ids = [b.id for _, b in uses]
    if any(not i for i in ids) or len(set(ids)) < len(ids):
        return "tool_call_id"
    for index, block in uses:
        if not isinstance(block.input, dict):
            return "tool_input"
        if index in streamed:
            try:
                whole = json.loads(streamed[index]) if streamed[index] else {}
            except ValueError:
                return "tool_input"
            if whole != block.input:
                return "tool_input"
    said = "".join(b.text for b in blocks if b.type == "text")
    return "tool_call_as_text" if not uses and _text_call(said, offered) else None


TextSink = Callable[[str], Awaitable[None]]


class ModelLoop:
    """Runs questions against one model.

    Args:
        client: an ``anthropic.AsyncAnthropic`` (its base URL, key, retries and timeout).
        model: the model name (`Settings.model`).
        tools: the tool definitions (`tools.tool_definitions`), sent as they are.
        budget: the per-question limits.
        call_timeout_seconds: bound on one model call (`Settings.model_timeout_seconds`).
        max_tokens: largest answer per call.
        clock: monotonic seconds (injectable).
    """

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        *,
        model: str,
        tools: Sequence[dict[str, Any]],
        budget: Budget,
        call_timeout_seconds: float = 60.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._model = model
        self._tools = list(tools)
        self._system = system_blocks()
        self.budget = budget
        self._call_timeout = call_timeout_seconds
        self._max_tokens = max_tokens
        self._clock = clock

    async def run(
        self,
        runner: ToolRunner,
        first: dict[str, Any],
        spent: Spent,
        *,
        on_text: TextSink | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> LoopResult:
        """Run one question to its end. `runner` holds the session; `spent` is shared with it;
        `tools` narrows the tools offered for this question (None: all of the loop's).

        Raises:
            ModelUnavailable: see the module docstring.
        """
        messages: list[dict[str, Any]] = [first]
        said: list[str] = []
        offer = list(tools) if tools is not None else self._tools
        offered = frozenset(str(t.get("name", "")) for t in offer)
        while True:
            limit = over_before_model_call(self.budget, spent, self._clock())
            if limit is not None:
                return LoopResult(_join(said), "budget_exceeded", limit)
            left = seconds_left(self.budget, spent, self._clock())
            try:
                answer = await self._call(
                    messages,
                    offer,
                    min(self._call_timeout, left),
                    by_budget=left < self._call_timeout,
                    on_text=on_text,
                )
            except _Unreadable:
                log.warning("the model's tool input could not be read; nothing of that answer runs")
                return LoopResult(_join(said), "bad_tool_call", "tool_input")
            if answer is None:
                return LoopResult(_join(said), "budget_exceeded", "wall_seconds")
            message, streamed = answer
            spent.model_calls += 1
            spent.add_usage(message.usage)
            if message.stop_reason == "refusal":
                raise ModelUnavailable("refusal", "the model refused to answer")
            uses = [block for block in message.content if block.type == "tool_use"]
            if bool(uses) != (message.stop_reason == "tool_use") and message.stop_reason != "max_tokens":
                log.warning(
                    "stop_reason %r with %d tool_use block(s): deciding by the blocks",
                    message.stop_reason,
                    len(uses),
                )
            why = bad_tool_call(message.content, streamed, offered)
            if why is not None:
                log.warning("the model's tool call is malformed (%s); nothing of that answer runs", why)
                return LoopResult(_join(said), "bad_tool_call", why)
            text = "".join(block.text for block in message.content if block.type == "text").strip()
            if text:
                said.append(text)
            calls = [ToolCall(id=block.id, name=block.name, input=block.input) for block in uses]
            if not calls:
                stop = "max_tokens" if message.stop_reason == "max_tokens" else "end_turn"
                return LoopResult(text or _join(said), stop)
            messages.append({"role": "assistant", "content": [block.to_dict() for block in message.content]})
            outcomes = await runner.run(calls)
            if runner.record.question is not None:
                return LoopResult(_join(said), "ask_operator")
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": o.call_id,
                            "content": o.content,
                            "is_error": o.is_error,
                        }
                        for o in outcomes
                    ],
                }
            )
            if runner.record.over_budget is not None:
                return LoopResult(_join(said), "budget_exceeded", runner.record.over_budget)

    async def _call(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        seconds: float,
        *,
        by_budget: bool,
        on_text: TextSink | None,
    ) -> tuple[Any, dict[int, str]] | None:
        """One streamed model call: the final message and each block's ``input_json_delta``
        fragments joined; None when the wall budget ran out during it.

        Raises:
            ModelUnavailable: see the module docstring.
            _Unreadable: the SDK could not parse a streamed tool input.
        """
        import anthropic  # the SDK is loaded with the first question (the client made it)

        try:
            async with asyncio.timeout(seconds):
                async with self._client.messages.stream(
                    model=self._model,
                    max_tokens=self._max_tokens,
                    system=self._system,
                    tools=tools,
                    messages=messages,
                ) as stream:
                    streamed: dict[int, list[str]] = {}
                    async for event in stream:
                        if event.type == "text" and on_text is not None:
                            await on_text(event.text)
                        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                            streamed.setdefault(event.index, []).append(event.delta.partial_json)
                    final = await stream.get_final_message()
                    return final, {index: "".join(parts) for index, parts in streamed.items()}
        except TimeoutError as exc:
            if by_budget:
                return None
            raise ModelUnavailable("timeout", f"no answer from the model within {seconds:g} s") from exc
        except anthropic.AnthropicError as exc:
            raise ModelUnavailable("api_error", f"model API error: {type(exc).__name__}") from exc
        except ValueError as exc:  # the SDK could not parse a streamed tool input
            raise _Unreadable from exc


def _join(said: list[str]) -> str:
    return "\n\n".join(said)
