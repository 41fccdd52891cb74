"""approval.sock's read-only answers straight from the store, for ``fleetwatch`` while the
services are stopped (issue 28).

``python -m services.approval_web.readout`` reads one request (a frame body: MessagePack, one
of `READ_ONLY`) on stdin and writes its reply, or an `ErrorReply`, on stdout. It answers with
the very handlers approval.sock uses (`services.approval_web.operators`), over a connection
opened read-only (`shared.store.db.open_store_read_only`) as the user who runs it: it writes
nothing (no audit row, no key, no anchor, no migration), it never asks the executor
(`NoExecutor`: the reply says the executor is not up), and it holds no audit key, so ``audit
verify`` checks the chain (hashes, links, the table's counter, executions that follow no
approval) and says the MACs were not checked: each service checks its own rows with its key
when it runs.

Refusals: the handlers' codes (``proposal_not_found``, ``invalid_message``), ``unknown_message``
for an operation that is not read-only, ``service_unavailable`` when the store cannot be read.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Final

from services.approval_web import operators, proposals
from services.approval_web.desk import Desk
from shared.config import Settings, load_settings
from shared.errors import Code, FleetwatchError
from shared.policy.loader import load_policies
from shared.store.audit_seal import APPROVAL_WEB, EXECUTOR
from shared.store.db import open_store_read_only, verify_audit
from shared.wire.approval import (
    AuditReport,
    AuditTail,
    AuditVerify,
    GetStatus,
    ListPending,
    ListProposalHistory,
    ShowProposal,
)
from shared.wire.client import CallError
from shared.wire.executor import WriterCheck
from shared.wire.protocol import Codec, ErrorReply, Message, ProtocolError, message_tag
from shared.wire.server import PeerCred


class NoExecutor:
    """The executor as the readout sees it: never asked (`call` raises ``service_unavailable``).
    The readout speaks for the store alone, whatever runs."""

    async def call(self, request: Message, **_: Any) -> Any:
        """Raises `CallError` (``service_unavailable``), always."""
        raise CallError(
            Code.SERVICE_UNAVAILABLE,
            "the store is read with the services stopped; the executor is not asked",
            service="the executor",
            operation=message_tag(type(request)),
        )


async def audit_verify(desk: Desk, message: AuditVerify, peer: PeerCred) -> AuditReport:
    """The chain checked without any key (`verify_audit`): ``ok`` is never true (no MAC was
    checked: each writer's check has no reason, "not checked"); a chain that holds has no
    reason either (``fleetwatch`` says it in words); a broken one names its first bad row."""
    result = await verify_audit(desk.conn)
    checks = tuple(WriterCheck(writer=w, ok=False, rows=result.rows) for w in (APPROVAL_WEB, EXECUTOR))
    return AuditReport(
        ok=False,
        rows=result.rows,
        first_bad_seq=result.first_bad_seq,
        reason=None if result.ok else result.reason,
        checks=checks,
    )


Handler = Callable[[Desk, Any, PeerCred], Awaitable[Message]]
READ_ONLY: Final[dict[type[Message], Handler]] = {
    ListPending: operators.list_pending,
    ShowProposal: operators.show,
    GetStatus: operators.status,
    AuditTail: operators.audit_tail,
    AuditVerify: audit_verify,
    ListProposalHistory: proposals.history,
}
"""The operations the readout answers, each with its handler."""
CODEC: Final = Codec(READ_ONLY)


async def answer(data: bytes, settings: Callable[[], Settings] = load_settings) -> Message:
    """The reply to the request in `data` (a frame body), read from the store the `settings`
    name (``db``); an `ErrorReply` for a refusal."""
    try:
        request = CODEC.decode(data)
        settings_ = settings()
        policy, tool_policy = load_policies(settings_.policy_dir, settings_.policy_override)
        try:
            conn = await open_store_read_only(settings_.db)
        except sqlite3.Error as exc:
            why = f"the store at {settings_.db} cannot be read: {exc}"
            raise FleetwatchError(Code.SERVICE_UNAVAILABLE, why) from exc
        try:
            desk = Desk(conn, settings_, policy, tool_policy, executor=NoExecutor())
            peer = PeerCred(pid=os.getpid(), uid=os.getuid(), gid=os.getgid())
            return await READ_ONLY[type(request)](desk, request, peer)
        finally:
            await conn.close()
    except (FleetwatchError, ProtocolError) as exc:
        return ErrorReply.of(exc)


def main() -> int:
    """One request on stdin, its reply on stdout; exit 0 (a refusal is a reply too)."""
    data = sys.stdin.buffer.read()
    reply = asyncio.run(answer(data))
    sys.stdout.buffer.write(CODEC.encode(reply))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
