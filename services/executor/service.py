"""executor.sock's handler: one handler per row of `shared.wire.executor.OPERATIONS`.

`ExecutorService.handle` is the `shared.wire.server.Handler` given to `serve_unix` (which checks
the peer's uid against ``FLEETWATCH_EXECUTOR_UIDS``, and its groups against
``FLEETWATCH_EXECUTOR_GIDS``, first; a refused peer gets ``peer_not_allowed`` and
`on_refused_peer` writes its audit row; a request refused before the handler, malformed or with
an ID not of its format, gets its row from `on_refused_request`). Refusals of Prepare,
Inspect, ListWritable and Recheck travel as `ErrorReply`; Execute answers every refusal as an
`ExecutionReport` with outcome ``refused``. In-flight operations are counted so a clean stop can wait for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from services.executor import ExecutorError, kill_switch
from services.executor.execute import execute
from services.executor.inspection import inspect
from services.executor.prepare import prepare
from services.executor.recheck import recheck
from services.executor.runtime import Runtime
from services.executor.world import sandbox_sign_in
from services.executor.writable import list_writable
from shared.errors import Code
from shared.store.approvals import EXECUTOR_ACTOR, audit_refusal
from shared.store.audit_seal import EXECUTOR
from shared.store.db import verify_audit
from shared.wire.executor import (
    OPERATIONS,
    AuditChecked,
    CheckAudit,
    Execute,
    ExecutionReport,
    Health,
    HealthReport,
    Inspect,
    ListWritable,
    Prepare,
    Recheck,
    SealKillSwitch,
    WriterCheck,
)
from shared.wire.protocol import Message
from shared.wire.server import PeerCred, RefusedRequest, dispatch

log = logging.getLogger(__name__)


class ExecutorService:
    """Answers executor.sock requests over one `Runtime`.

    Args:
        rt: the shared runtime (settings, store, key, clock, timeouts).
        started_at: when this process started (DB-clock text), for Health.
        boot_id: a random ID of this process's life, for Health (a new one means a new key).
    """

    def __init__(self, rt: Runtime, *, started_at: str, boot_id: str) -> None:
        self.rt = rt
        self.started_at = started_at
        self.boot_id = boot_id
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._answer = dispatch(
            OPERATIONS,
            {
                Prepare: lambda request, _peer: prepare(self.rt, request),
                Inspect: lambda request, _peer: inspect(self.rt, request),
                Execute: self._execute,
                Health: lambda _request, _peer: self.health(),
                ListWritable: lambda _request, _peer: list_writable(self.rt),
                Recheck: lambda request, _peer: recheck(self.rt, request),
                SealKillSwitch: self._seal_kill_switch,
                CheckAudit: self._check_audit,
            },
        )

    @contextlib.asynccontextmanager
    async def _counted(self) -> AsyncIterator[None]:
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def drain(self, timeout_seconds: float) -> bool:
        """Wait until no operation is in flight, at most `timeout_seconds`; True when idle."""
        try:
            async with asyncio.timeout(timeout_seconds):
                await self._idle.wait()
        except TimeoutError:
            return False
        return True

    async def handle(self, request: Message, peer: PeerCred) -> Message:
        """Answer one request.

        Raises:
            FleetwatchError: a refusal of Prepare, Inspect or ListWritable (sent as an
                `ErrorReply`).
        """
        async with self._counted():
            try:
                return await self._answer(request, peer)
            finally:
                if self.rt.witness is not None:
                    # The rows this request wrote are in the anchor before it is answered.
                    await self.rt.witness.settle()
                    self.rt.witness.nudge()

    async def _execute(self, request: Execute, peer: PeerCred) -> ExecutionReport:
        report = await execute(self.rt, request)
        log.info(
            "execute %s: %s %s %s",
            request.approval_id,
            report.outcome,
            report.refusal_code or "",
            report.verification or "",
        )
        return report

    async def _seal_kill_switch(self, request: SealKillSwitch, peer: PeerCred) -> HealthReport:
        await kill_switch.seal(self.rt, request.request_seq, request.on)
        return await self.health()

    async def _check_audit(self, request: CheckAudit, peer: PeerCred) -> AuditChecked:
        return AuditChecked(check=await self.check_audit())

    async def health(self) -> HealthReport:
        """Up since when, whether the sandbox slot holds a usable sign-in (read, not used), the
        fence, and the kill switch."""
        try:
            sandbox_sign_in(self.rt.settings.sandbox_token_file)
            signed_in = True
        except ExecutorError:
            signed_in = False
        paused = await kill_switch.paused(self.rt)
        return HealthReport(
            started_at=self.started_at,
            boot_id=self.boot_id,
            sandbox_signed_in=signed_in,
            fence_configured=self.rt.fence.configured,
            kill_switch=paused,
        )

    async def check_audit(self) -> WriterCheck:
        """The whole audit log verified with the executor's own key (its rows' MACs) and its
        anchor (rows removed from the end), after bringing the anchor up to date."""
        witness = self.rt.witness
        if witness is not None:
            async with self.rt.db:
                await witness.observe(self.rt.conn)
        anchors = witness.anchors if witness else ()
        # The walk takes the store lock one chunk at a time: a change can run meanwhile.
        result = await verify_audit(self.rt.conn, anchors=anchors, lock=self.rt.db)
        ok = result.ok and self.rt.audit_key is not None
        reason = result.reason if self.rt.audit_key is not None else "the executor holds no audit key"
        return WriterCheck(
            writer=EXECUTOR,
            ok=ok,
            rows=result.rows,
            signed=result.signed_by(EXECUTOR),
            first_bad_seq=result.first_bad_seq,
            reason=reason,
            anchor_seq=witness.anchor.seq if witness and witness.anchor else None,
        )

    async def on_refused_request(self, peer: PeerCred, refused: RefusedRequest) -> None:
        """A request refused before the handler: one ``refusal`` audit row naming the operation,
        the field and the frame's size, never the value."""
        log.warning("refused a %s request from uid %d (%s)", refused.operation, peer.uid, refused.code)
        async with self.rt.db:
            await audit_refusal(
                self.rt.conn,
                actor=EXECUTOR_ACTOR,
                operation=refused.operation,
                code=refused.code,
                detail={"uid": peer.uid, "pid": peer.pid, **refused.detail()},
            )

    async def on_refused_peer(self, peer: PeerCred) -> None:
        """A connection from a uid not on ``FLEETWATCH_EXECUTOR_UIDS`` (nor in a group of
        ``FLEETWATCH_EXECUTOR_GIDS``): one ``refusal`` audit row."""
        log.warning("refused a connection from uid %d (pid %d)", peer.uid, peer.pid)
        async with self.rt.db:
            await audit_refusal(
                self.rt.conn,
                actor=EXECUTOR_ACTOR,
                operation="connect",
                code=Code.PEER_NOT_ALLOWED,
                message=f"uid {peer.uid} may not use executor.sock",
                detail={"uid": peer.uid, "pid": peer.pid},
            )
