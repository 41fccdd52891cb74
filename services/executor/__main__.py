"""``python -m services.executor [--call-timeout SECONDS]``: run the executor.

Start: the settings (``FLEETWATCH_*``), the policy (refuses to start when it does not load),
its audit key (``FLEETWATCH_KEYS_DIR/executor.key``, made at the first start, kept after), the
store (migrated, its audit rows signed with that key), its audit anchor (watched while it
runs, `shared.store.audit_witness`), a new binding key in memory, every pending proposal expired (no earlier
seal verifies under the new key), every execution left ``running`` by a crash recorded as
``unknown`` (never retried), then executor.sock is served. SIGTERM or SIGINT: stop accepting,
wait for operations in flight (bounded), close, exit 0.

Exit status: 0 after a signal, 2 when the settings, the policy, the store or the socket refuse.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import secrets
import signal
import sys

from services.executor.executions import recover_running
from services.executor.runtime import DEFAULT_CALL_TIMEOUT_SECONDS, Runtime, db_time, utc_now
from services.executor.service import ExecutorService
from shared.binding import new_binding_key
from shared.config import Settings, configure_logging, load_settings
from shared.errors import Code, FleetwatchError, error_line
from shared.policy.loader import load_policies
from shared.store.approvals import EXECUTOR_ACTOR, end_stranded, expire_all_pending
from shared.store.audit_export import sink_for
from shared.store.audit_seal import EXECUTOR, Keyring, load_key
from shared.store.audit_witness import Witness
from shared.store.db import migrate, open_store
from shared.wire.executor import OPERATIONS
from shared.wire.server import serve_unix

log = logging.getLogger("services.executor")

START_REASON = "executor_start"
"""The ``reason`` of the expiry audit rows written when the executor starts."""


async def run(settings: Settings, *, call_timeout_seconds: float) -> int:
    """Serve executor.sock until SIGTERM/SIGINT; the exit status."""
    audit_key = load_key(settings.keys_dir, EXECUTOR, create=True)
    witness = Witness(settings.keys_dir, EXECUTOR)
    conn = await open_store(settings.db, keyring=Keyring(audit_key))
    witness.attach(conn)  # its own rows move its anchor as they commit
    sink = sink_for(settings.audit_export, db=settings.db, writer=EXECUTOR)
    if sink is not None:
        sink.attach(conn)  # and go to the continuous export (FLEETWATCH_AUDIT_EXPORT)
    try:
        await migrate(conn)
        await witness.observe(conn)
        expired = await expire_all_pending(conn, actor=EXECUTOR_ACTOR, reason=START_REASON)
        recovered = await recover_running(conn)
        stranded = await end_stranded(conn, actor=EXECUTOR_ACTOR, reason=Code.EXECUTOR_RESTARTED)
        await witness.settle()
        rt = Runtime(
            settings,
            conn,
            new_binding_key(),
            audit_key=audit_key,
            witness=witness,
            call_timeout_seconds=call_timeout_seconds,
        )
        watching = asyncio.create_task(witness.watch(conn, rt.db))
        service = ExecutorService(rt, started_at=db_time(utc_now()), boot_id=secrets.token_hex(8))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        server = await serve_unix(
            settings.executor_socket,
            service.handle,
            codec=OPERATIONS.codec,
            allowed_uids=settings.executor_uids,
            allowed_gids=settings.executor_gids,
            mode=0o660,
            on_refused_peer=service.on_refused_peer,
            on_refused_request=service.on_refused_request,
        )
        log.info(
            "executor serving %s (boot %s; expired %d pending, %d running -> unknown, %d approved -> not run;"
            " fence %s)",
            settings.executor_socket,
            service.boot_id,
            expired,
            recovered,
            stranded,
            "set" if rt.fence.configured else "NOT configured",
        )
        await stop.wait()
        log.info("stopping")
        server.close()
        if not await service.drain(call_timeout_seconds * 2 + 5):
            log.warning(
                "stopped with operations in flight; a running execution becomes unknown at next start"
            )
        await rt.close()
        with contextlib.suppress(FileNotFoundError):
            settings.executor_socket.unlink()
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        async with rt.db:
            await witness.observe(conn)
        return 0
    finally:
        await conn.close()


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m services.executor", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=DEFAULT_CALL_TIMEOUT_SECONDS,
        help="seconds each Epiphan call (reads and the one write) may take",
    )
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
        configure_logging(settings)
        load_policies(settings.policy_dir, settings.policy_override)
        return asyncio.run(run(settings, call_timeout_seconds=args.call_timeout))
    except FleetwatchError as exc:
        print(error_line("executor", exc.message, exc.code), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
