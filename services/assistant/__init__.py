"""The assistant: the one process the model touches. It reads the fleet, answers in English or
Spanish, and can only **propose** a change; a person approves it on the approval page and the
executor (another process) runs it.

Holds: the **read** sign-in (``FLEETWATCH_READ_TOKEN_FILE``), the model key, the Slack tokens
(bot and app-level) and the watch's own store (``FLEETWATCH_WATCH_DB``), nothing else: never
the approval store.
It never reads the sandbox slot, never calls a write tool (the guarded read client has no path
to one), and has no approval power: a proposal goes to ``approval.sock`` and waits for a person.
Which devices a change may target (the sandbox team) it learns from ``list_writable_devices``,
which approval.sock relays to the executor, the one process holding the sandbox sign-in.
Everything the model says or names is untrusted, and so is every name in the fleet.

Layers (each may import only the ones above it)::

    watch/         the watch (`services.assistant.watch`): heartbeat, digests, readiness,
                   notices, notes, the wall screen; its own task, its own store, no model call;
                   it imports none of the modules below (its map is its own ``__init__``)
    tools.py       static tool definitions offered to the model, and tool kinds
    data_block.py  tool results as one escaped, capped data block
    fsm.py         the session state machine (pure)
    budget.py      per-question budgets (pure)
    language.py    language detection and the code-built words (proposal lines, notes)
    proposals.py   the schema pre-check of propose_change, and the proposal sink (approval.sock:
                   proposals, their states, and the writable devices the executor reads)
    pipeline.py    one provider turn's tool calls in three phases (pre-check, execute, post)
    prompt.py      the static system prompt and the first user message
    loop.py        the model loop (Anthropic SDK, streaming, prompt caching)
    keyword.py     the keyword answer (no model; read-only; can never propose)
    slack_rules.py asks from Slack decided (pure): the envelope, who may ask, the rate limit,
                   the reply's words and escaping
    service.py     `Assistant.ask`: loop or fallback, proposal lines, audit (counts only)
    manifest.py    the capabilities manifest of assistant.sock: its operations
                   (`shared.wire.assistant`), the model's tools, the page
    server.py      assistant.sock and the production wiring (the read slot's guarded client:
                   `shared.epiphan.signed_session.SignedReader`)
    | slack.py     asks from Slack over Socket Mode (read-only: never proposes)
    | readout.py   ``fleetwatch history`` while the services are stopped: the watch's history
                   from its store opened read-only (``python -m services.assistant.readout``)
    page.py        the local ask page
    __main__.py    runs them

Errors: `AssistantError` and `ModelUnavailable` (the tree is drawn in `shared.errors`).
"""

from __future__ import annotations

from shared.errors import Code, FleetwatchError


class AssistantError(FleetwatchError):
    """The assistant refused a request or could not answer it; ``code`` says why."""


class ModelUnavailable(AssistantError):
    """The model could not be used (no key, an API error, a refusal, a timeout); the keyword
    answer is given instead. ``reason`` is a short stable word (``api_error``, ``refusal``...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(Code.MODEL_UNAVAILABLE, message)
        self.reason = reason
