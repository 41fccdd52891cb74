"""Budgets per question: model calls, tokens, tool calls and wall time. Pure (pass `now`).

Repeated reads are not blocked (the peer's later state, seed 002); they are bounded by these
budgets. A question over budget ends with what was learned so far, and any proposal made in
it expires (`services.assistant.service`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """Limits of one question. Seconds are wall-clock seconds from the question's start."""

    model_calls: int = 8
    tokens: int = 250_000
    tool_calls: int = 48
    wall_seconds: float = 120.0


@dataclass
class Spent:
    """What one question used so far (mutable: owned by one question's loop)."""

    started: float
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    tool_calls: int = 0

    @property
    def tokens(self) -> int:
        """Every token counted: input, output, and cache writes and reads."""
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens

    def add_usage(self, usage: object) -> None:
        """Add a Messages-API ``usage`` (missing fields count as 0)."""
        self.input_tokens += int(getattr(usage, "input_tokens", 0) or 0)
        self.output_tokens += int(getattr(usage, "output_tokens", 0) or 0)
        self.cache_creation_tokens += int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        self.cache_read_tokens += int(getattr(usage, "cache_read_input_tokens", 0) or 0)


def over_before_model_call(budget: Budget, spent: Spent, now: float) -> str | None:
    """Which limit stops another model call (``model_calls``, ``tokens``, ``wall_seconds``), or None."""
    if spent.model_calls >= budget.model_calls:
        return "model_calls"
    if spent.tokens >= budget.tokens:
        return "tokens"
    if now - spent.started >= budget.wall_seconds:
        return "wall_seconds"
    return None


def over_before_tool_call(budget: Budget, spent: Spent, now: float) -> str | None:
    """Which limit stops another tool call (``tool_calls``, ``wall_seconds``), or None."""
    if spent.tool_calls >= budget.tool_calls:
        return "tool_calls"
    if now - spent.started >= budget.wall_seconds:
        return "wall_seconds"
    return None


def seconds_left(budget: Budget, spent: Spent, now: float) -> float:
    """Wall seconds left (never below zero)."""
    return max(0.0, budget.wall_seconds - (now - spent.started))
