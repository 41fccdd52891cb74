"""approval.sock's handler: who may call what, one refusal = one code + one audit row, and the
four jobs that answer (`proposals`: the intake; `operators`: the admin operations; `relays`: to
the executor; `records`: the assistant's audit rows), one handler per row of
`shared.wire.approval.OPERATIONS`.

`ApprovalService.handle` answers one request from one peer (already on the socket's uid
allowlist): the role check of `services.approval_web.intake.check_caller` (``operation_not_allowed``),
then the request's job. A refusal raised by a job (`IntakeRefused`) leaves one ``refusal``
audit row unless the store wrote it already. A request refused before its handler (malformed,
an ID not of its format, a text over its cap: `shared.wire.protocol`) leaves one ``refusal``
row too (`on_refused_request`), naming the operation, the field and the frame's size, never
the value.
"""

from __future__ import annotations

import functools

import aiosqlite

from services.approval_web import operators, proposals, records, relays
from services.approval_web.desk import ACTOR, Desk
from services.approval_web.intake import IntakeRefused, check_caller
from shared.config import Settings
from shared.errors import Code
from shared.policy.loader import Policy, ToolPolicy
from shared.store import approvals
from shared.store.audit_witness import Witness
from shared.wire.approval import OPERATIONS
from shared.wire.executor import ExecutorClient
from shared.wire.protocol import Message, message_tag
from shared.wire.server import PeerCred, RefusedRequest, dispatch


class ApprovalService:
    """The handler behind approval.sock; see the module doc.

    Args:
        conn: an open, migrated store connection (this service's own).
        settings: uids, the executor socket, the fence.
        policy, tool_policy: loaded once at start.
        witness: approval_web's audit anchor (`shared.store.audit_witness`); None: none kept.
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        *,
        settings: Settings,
        policy: Policy,
        tool_policy: ToolPolicy,
        witness: Witness | None = None,
    ) -> None:
        executor = ExecutorClient(settings.executor_socket)
        self.desk = Desk(conn, settings, policy, tool_policy, executor, witness=witness)
        jobs = proposals.JOBS | operators.JOBS | relays.JOBS | records.JOBS
        self._answer = dispatch(OPERATIONS, {t: functools.partial(job, self.desk) for t, job in jobs.items()})

    @property
    def allowed_uids(self) -> frozenset[int]:
        """Uids that may connect: the assistant's and the operators'."""
        return self.desk.settings.assistant_uids | self.desk.settings.approval_uids

    @property
    def allowed_gids(self) -> frozenset[int]:
        """Groups whose members may connect (as operators)."""
        return self.desk.settings.approval_gids

    async def handle(self, request: Message, peer: PeerCred) -> Message:
        """Answer one request (the `shared.wire.server.Handler` of approval.sock).

        Raises:
            FleetwatchError: the refusal; `serve_unix` sends it as an `ErrorReply`.
        """
        settings, witness = self.desk.settings, self.desk.witness
        try:
            check_caller(
                request,
                peer.uid,
                operator_uids=settings.approval_uids,
                assistant_uids=settings.assistant_uids,
            )
            return await self._answer(request, peer)
        except IntakeRefused as exc:
            if not exc.audited:
                async with self.desk.db:
                    await approvals.audit_refusal(
                        self.desk.conn,
                        actor=self.desk.actor(peer),
                        operation=message_tag(type(request)),
                        code=exc.code,
                        message=exc.message,
                        detail={"uid": peer.uid, **exc.detail},
                    )
            raise
        finally:
            if witness is not None:
                # The rows this request wrote are in the anchor before it is answered.
                await witness.settle()
                witness.nudge()

    async def on_refused_peer(self, peer: PeerCred) -> None:
        """A connection from a uid not on the allowlist: one ``refusal`` audit row."""
        async with self.desk.db:
            await approvals.audit_refusal(
                self.desk.conn,
                actor=f"peer:{peer.uid}",
                operation="connect",
                code=Code.PEER_NOT_ALLOWED,
                message=f"uid {peer.uid} may not use approval.sock",
                detail={"uid": peer.uid, "gid": peer.gid, "pid": peer.pid},
            )

    async def on_refused_request(self, peer: PeerCred, refused: RefusedRequest) -> None:
        """A request refused before its handler (`shared.wire.server.RefusedRequest`): one
        ``refusal`` audit row naming the operation, the field and the frame's size."""
        async with self.desk.db:
            await approvals.audit_refusal(
                self.desk.conn,
                actor=self.desk.actor(peer),
                operation=refused.operation,
                code=refused.code,
                detail={"uid": peer.uid, **refused.detail()},
            )

    async def expire_due(self) -> int:
        """Expire every pending proposal past its ``expires_at`` (database clock); the count."""
        async with self.desk.db:
            return await approvals.expire_due(self.desk.conn, actor=ACTOR)

    async def expire_all_pending(self, reason: str) -> int:
        """Expire every pending proposal (on start); the count."""
        async with self.desk.db:
            return await approvals.expire_all_pending(self.desk.conn, actor=ACTOR, reason=reason)
