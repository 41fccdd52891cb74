"""What every job of approval.sock's socket side works with: the store connection and its lock,
the settings and policies loaded at start, and the executor's client.

`Desk.relay` is the one way a job asks the executor: its refusal comes back as `IntakeRefused`
with the executor's code unchanged (``service_unavailable`` / ``service_no_answer`` when it was
not reached or did not answer), its words made visible.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiosqlite

from services.approval_web.intake import IntakeRefused, role_of
from shared.config import Settings
from shared.policy.loader import Policy, ToolPolicy
from shared.store.audit_export import AuditSink
from shared.store.audit_witness import Witness
from shared.text.display import visible
from shared.wire.client import CallError
from shared.wire.executor import ExecutorClient
from shared.wire.protocol import Message, Request
from shared.wire.server import PeerCred

R = TypeVar("R", bound=Message)

ACTOR = "approval_web"
"""The audit actor of this service's own steps (expiry, start)."""


@dataclass
class Desk:
    """The socket side's shared state; one coroutine uses the connection at a time (`db`).

    Attributes:
        conn: an open, migrated store connection (this service's own).
        settings: uids, the executor socket, the fence.
        policy, tool_policy: loaded once at start.
        executor: executor.sock's client.
        witness: approval_web's audit anchor (`shared.store.audit_witness`); None: none kept.
        page_url: the approval page's address once it serves (``ListProposalHistory`` names it).
        audit_sink: the continuous audit export (``FLEETWATCH_AUDIT_EXPORT``), or None; the page's
            connections send to it too.
    """

    conn: aiosqlite.Connection
    settings: Settings
    policy: Policy
    tool_policy: ToolPolicy
    executor: ExecutorClient
    witness: Witness | None = None
    page_url: str | None = None
    audit_sink: AuditSink | None = None
    db: asyncio.Lock = field(default_factory=asyncio.Lock)
    """The lock of the store connection (one user at a time)."""
    submitting: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held through a whole `SubmitProposal` (checks, limits, Prepare, insert)."""

    def actor(self, peer: PeerCred, name: str | None = None) -> str:
        """The audit actor of a peer's step: ``<name or role>:<uid>``."""
        role = role_of(
            peer.uid, operator_uids=self.settings.approval_uids, assistant_uids=self.settings.assistant_uids
        )
        who = visible(name, 40) if name else str(role)
        return f"{who}:{peer.uid}"

    async def relay(self, request: Request[R]) -> R:
        """`request` on executor.sock; its reply.

        Raises:
            IntakeRefused: the executor's refusal code, unchanged, or ``service_unavailable`` /
                ``service_no_answer``.
        """
        try:
            return await self.executor.call(request)
        except CallError as exc:
            raise IntakeRefused(exc.code, visible(exc.message, 400)) from exc


Job = Callable[[Desk, Any, PeerCred], Awaitable[Message]]
"""One operation's handler: the desk, its request, the peer."""
Jobs = Mapping[type[Message], Job]
"""A job module's handlers by request type (its ``JOBS``)."""
