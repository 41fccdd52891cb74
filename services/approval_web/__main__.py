"""``python -m services.approval_web``: run approval_web until SIGINT or SIGTERM.

It serves the socket side (approval.sock: proposals from the assistant, admin commands from
operators) and, beside it, the approval page on ``127.0.0.1`` and ``[::1]`` at ``FLEETWATCH_APPROVE_PORT``
(`services.approval_web.page.page_side`): the page's secret is printed on a terminal,
otherwise written to ``FLEETWATCH_APPROVE_SECRET_FILE`` (0600) with only its path printed, and
that file is deleted at a clean stop. Without a write fence (neither
``FLEETWATCH_WRITE_DEVICE_IDS`` nor ``FLEETWATCH_WRITE_TEAM_ID``) the page does not start
(`page_refusal`): nothing could ever be proposed, so there is nothing to approve; approval.sock
still serves the admin commands and refuses every proposal with ``fence_not_configured``.
Exit status: 0 after a signal, 2 when an option, the settings, the policy or the store refuse
to start. ``--expiry-seconds S``: how often unreviewed proposals past their expiry are marked
expired (default 5). ``--after-executor``: after its imports, the settings and the policy, wait
until executor.sock accepts a connection (bounded by `AFTER_EXECUTOR_SECONDS`, polled every
`AFTER_EXECUTOR_POLL_SECONDS`; exit 2 when it does not) before anything else (the keys, the
store, approval.sock, the page): ``fleetwatch up`` starts this process beside the executor's,
so the slow part of a cold start overlaps while the order executor → approval_web holds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from services.approval_web import ApprovalWebError
from services.approval_web.page import SecretSink, page_side
from services.approval_web.server import socket_side
from shared.config import Settings, configure_logging, load_settings
from shared.errors import Code, FleetwatchError, error_line
from shared.policy.loader import Policy, ToolPolicy, load_policies
from shared.store.audit_seal import APPROVAL_WEB, own_keyring

logger = logging.getLogger("services.approval_web")

AFTER_EXECUTOR_SECONDS = 60.0
"""How long ``--after-executor`` waits for executor.sock to accept a connection."""
AFTER_EXECUTOR_POLL_SECONDS = 0.02
"""How often ``--after-executor`` tries executor.sock again."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m services.approval_web",
        description="Run approval_web: approval.sock (proposals and admin commands) and the approval page."
        " Settings come from FLEETWATCH_*.",
    )
    parser.add_argument(
        "--expiry-seconds",
        type=float,
        default=5.0,
        help="how often unreviewed proposals past their expiry are marked expired (default: 5)",
    )
    parser.add_argument(
        "--after-executor",
        action="store_true",
        help="start serving only once executor.sock accepts a connection (a supervisor starts this"
        " process beside the executor's; the order executor -> approval_web holds)",
    )
    return parser


def executor_answers(path: Path) -> bool:
    """True when the unix socket `path` accepts a connection (closed at once, nothing sent: the
    executor takes approval_web's connections, and an empty one is no request)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def wait_for_executor(path: Path, *, seconds: float = AFTER_EXECUTOR_SECONDS) -> None:
    """Return once `path` accepts a connection (`executor_answers`), polling.

    Raises:
        ApprovalWebError: ``service_unavailable`` after `seconds`.
    """
    print(f"approval_web: waiting for the executor on {path}", file=sys.stderr, flush=True)
    deadline = time.monotonic() + seconds
    while not executor_answers(path):
        if time.monotonic() > deadline:
            raise ApprovalWebError(
                Code.SERVICE_UNAVAILABLE, f"the executor did not answer on {path} within {seconds:g} s"
            )
        time.sleep(AFTER_EXECUTOR_POLL_SECONDS)  # another process gets ready: a bounded poll


def page_refusal(settings: Settings) -> ApprovalWebError | None:
    """Why the approval page may not start, or None. Without a fence nothing can be proposed
    or run (seed 003, "Fence"), so the page refuses to start (``fence_not_configured``)."""
    if settings.fence_configured:
        return None
    return ApprovalWebError(
        Code.FENCE_NOT_CONFIGURED,
        "the approval page is not started: set FLEETWATCH_WRITE_DEVICE_IDS, FLEETWATCH_WRITE_TEAM_ID"
        " or both (approval.sock still answers, and refuses every proposal)",
    )


async def run(
    settings: Settings, policy: Policy, tool_policy: ToolPolicy, *, expiry_interval_seconds: float = 5.0
) -> None:
    """Serve until SIGINT or SIGTERM (the page only with a fence: `page_refusal`)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    refusal = page_refusal(settings)
    if refusal is not None:
        print(error_line("approval_web", refusal.message, refusal.code), file=sys.stderr, flush=True)
    keyring = own_keyring(settings.keys_dir, APPROVAL_WEB)
    async with contextlib.AsyncExitStack() as stack:
        service = await stack.enter_async_context(
            socket_side(
                settings,
                policy,
                tool_policy,
                expiry_interval_seconds=expiry_interval_seconds,
                keyring=keyring,
            )
        )
        where = "no page (no fence)"
        if refusal is None:
            sink = SecretSink.for_stream(settings.approve_secret_file, sys.stdout)
            page = await stack.enter_async_context(
                page_side(
                    settings,
                    policy,
                    tool_policy,
                    sink=sink,
                    keyring=keyring,
                    witness=service.desk.witness,
                    audit_sink=service.desk.audit_sink,
                )
            )
            service.desk.page_url = page.url
            where = f"the page at {page.url}"
        logger.info("approval_web serving %s and %s", settings.approval_socket, where)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: settings from ``FLEETWATCH_*``; `argv` holds only ``--expiry-seconds``."""
    args = _parser().parse_args(argv)
    if not 0 < args.expiry_seconds <= 3600:
        print("approval_web: --expiry-seconds must be in (0, 3600]", file=sys.stderr)
        return 2
    try:
        settings = load_settings()
        configure_logging(settings)
        policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
        if args.after_executor:
            wait_for_executor(settings.executor_socket)
        asyncio.run(run(settings, policy, tool_policy, expiry_interval_seconds=args.expiry_seconds))
    except FleetwatchError as exc:
        print(error_line("approval_web", exc.message, exc.code), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
