"""The socket side of the approval_web process: the store, approval.sock and the expiry task.

`socket_side` is an async context manager so ``__main__`` can run the approval page (a later
issue) beside it in the same process, sharing nothing but the settings and the policy.

On start: its audit key (``FLEETWATCH_KEYS_DIR/approval_web.key``, made at the first start and
kept after; every audit row this process writes carries its MAC), migrate the store, look at
the audit head (its anchor, `shared.store.audit_witness`, watched while it runs), expire every
pending proposal (the executor's seals may be from an
earlier key, and nobody reviewed them in this run), then serve. While running: every
`expiry_interval_seconds` the proposals past their ``expires_at`` become ``expired``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from services.approval_web.desk import ACTOR
from services.approval_web.service import ApprovalService
from shared.config import Settings
from shared.errors import Code, FleetwatchError
from shared.policy.loader import Policy, ToolPolicy
from shared.store import approvals
from shared.store.audit_export import sink_for
from shared.store.audit_seal import APPROVAL_WEB, Keyring, own_keyring
from shared.store.audit_witness import Witness
from shared.store.db import migrate, open_store
from shared.wire.approval import OPERATIONS
from shared.wire.server import serve_unix

logger = logging.getLogger(__name__)

START_REASON = "approval_web_start"
"""The ``reason`` of the expiry audit rows written when the service starts."""


async def expiry_loop(service: ApprovalService, interval_seconds: float) -> None:
    """Expire unreviewed proposals every `interval_seconds`, until cancelled. A busy store is
    logged and tried again next round."""
    while True:
        await asyncio.sleep(interval_seconds)
        try:
            count = await service.expire_due()
        except FleetwatchError as exc:
            logger.warning("expiry round skipped: %s", exc)
            continue
        if count:
            logger.info("expired %d unreviewed proposal(s)", count)


@contextlib.asynccontextmanager
async def socket_side(
    settings: Settings,
    policy: Policy,
    tool_policy: ToolPolicy,
    *,
    expiry_interval_seconds: float = 5.0,
    keyring: Keyring | None = None,
) -> AsyncIterator[ApprovalService]:
    """Serve approval.sock (``settings.approval_socket``) for the ``async with`` block.
    `keyring`: approval_web's audit key (default: its own, from ``FLEETWATCH_KEYS_DIR``).

    Raises:
        StoreError: the store could not be opened or migrated.
        AuditKeyError: the audit key or anchor file is unsafe or malformed.
        ProtocolError: ``socket_in_use`` (another approval_web is running).
    """
    witness = Witness(settings.keys_dir, APPROVAL_WEB)
    conn = await open_store(settings.db, keyring=keyring or own_keyring(settings.keys_dir, APPROVAL_WEB))
    witness.attach(conn)  # its own rows move its anchor as they commit
    sink = sink_for(settings.audit_export, db=settings.db, writer=APPROVAL_WEB)
    if sink is not None:
        sink.attach(conn)  # and go to the continuous export (FLEETWATCH_AUDIT_EXPORT)
    try:
        await migrate(conn)
        await witness.observe(conn)
        service = ApprovalService(
            conn, settings=settings, policy=policy, tool_policy=tool_policy, witness=witness
        )
        service.desk.audit_sink = sink
        expired = await service.expire_all_pending(START_REASON)
        if expired:
            logger.info("expired %d proposal(s) left pending by an earlier run", expired)
        stranded = await approvals.end_stranded(conn, actor=ACTOR, reason=Code.APPROVAL_WEB_RESTARTED)
        if stranded:
            logger.info("%d approved proposal(s) the executor never took ended as not run", stranded)
        server = await serve_unix(
            settings.approval_socket,
            service.handle,
            codec=OPERATIONS.codec,
            allowed_uids=service.allowed_uids,
            allowed_gids=service.allowed_gids,
            on_refused_peer=service.on_refused_peer,
            on_refused_request=service.on_refused_request,
        )
        expiry = asyncio.create_task(expiry_loop(service, expiry_interval_seconds))
        watching = asyncio.create_task(witness.watch(conn, service.desk.db))
        try:
            yield service
        finally:
            for task in (expiry, watching):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            server.close()
            await server.wait_closed()
            with contextlib.suppress(FileNotFoundError):
                settings.approval_socket.unlink()
    finally:
        await conn.close()
