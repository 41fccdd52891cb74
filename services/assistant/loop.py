"""The model loop: the Anthropic Messages API with tool use, streaming and prompt caching.

One question: the first user message, then model call, tool calls (`pipeline.ToolRunner`),
model call... until the model answers without tools, asks the operator, or a budget is spent.
The system prompt and the tool list are sent unchanged every time, both marked with
``cache_control`` (the cached prefix is the same bytes across calls and questions).

The model's content blocks are echoed back with ``block.to_dict()`` (SDK 2.x; never
``model_dump()``, which would add fields the API refuses). Prompts are kept in memory only.

Errors: any SDK error (HTTP 4xx/5xx, 529 overloaded, connection, timeout), a broken stream,
a ``refusal`` stop reason, or the per-call timeout raise `ModelUnavailable` (the caller gives
the keyword answer and expires the turn's proposals). A spent budget is not an error: the loop
returns with ``stop="budget_exceeded"`` and the words said so far.
"""

from __future__ import annotations

import asyncio
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

DEFAULT_MAX_TOKENS: Final = 2048
"""Largest answer per model call, in tokens."""


@dataclass(frozen=True)
class LoopResult:
    """How one question's loop ended.

    Attributes:
        text: the model's final words (``end_turn``), or everything it said so far.
        stop: ``end_turn``, ``max_tokens``, ``ask_operator`` or ``budget_exceeded``.
        limit: the budget that was spent (``model_calls``, ``tokens``, ``tool_calls``,
            ``wall_seconds``), or None.
    """

    text: str
    stop: str
    limit: str | None = None


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
        self, runner: ToolRunner, first: dict[str, Any], spent: Spent, *, on_text: TextSink | None = None
    ) -> LoopResult:
        """Run one question to its end. `runner` holds the session; `spent` is shared with it.

        Raises:
            ModelUnavailable: see the module docstring.
        """
        messages: list[dict[str, Any]] = [first]
        said: list[str] = []
        while True:
            limit = over_before_model_call(self.budget, spent, self._clock())
            if limit is not None:
                return LoopResult(_join(said), "budget_exceeded", limit)
            left = seconds_left(self.budget, spent, self._clock())
            message = await self._call(
                messages, min(self._call_timeout, left), by_budget=left < self._call_timeout, on_text=on_text
            )
            if message is None:
                return LoopResult(_join(said), "budget_exceeded", "wall_seconds")
            spent.model_calls += 1
            spent.add_usage(message.usage)
            text = "".join(block.text for block in message.content if block.type == "text").strip()
            if text:
                said.append(text)
            if message.stop_reason == "refusal":
                raise ModelUnavailable("refusal", "the model refused to answer")
            calls = [
                ToolCall(
                    id=block.id, name=block.name, input=block.input if isinstance(block.input, dict) else {}
                )
                for block in message.content
                if block.type == "tool_use"
            ]
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
        self, messages: list[dict[str, Any]], seconds: float, *, by_budget: bool, on_text: TextSink | None
    ) -> Any:
        """One streamed model call; None when the wall budget ran out during it."""
        import anthropic  # the SDK is loaded with the first question (the client made it)

        try:
            async with asyncio.timeout(seconds):
                async with self._client.messages.stream(
                    model=self._model,
                    max_tokens=self._max_tokens,
                    system=self._system,
                    tools=self._tools,
                    messages=messages,
                ) as stream:
                    if on_text is not None:
                        async for chunk in stream.text_stream:
                            await on_text(chunk)
                    return await stream.get_final_message()
        except TimeoutError as exc:
            if by_budget:
                return None
            raise ModelUnavailable("timeout", f"no answer from the model within {seconds:g} s") from exc
        except anthropic.AnthropicError as exc:
            raise ModelUnavailable("api_error", f"model API error: {type(exc).__name__}") from exc
        except ValueError as exc:  # the SDK could not parse a streamed tool input
            raise ModelUnavailable("bad_response", "the model's answer could not be read") from exc


def _join(said: list[str]) -> str:
    return "\n\n".join(said)
