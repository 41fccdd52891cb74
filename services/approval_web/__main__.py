"""``python -m services.approval_web``: run approval_web until SIGINT or SIGTERM.

Today it serves the socket side (approval.sock: proposals from the assistant, admin commands
from operators); the approval page joins it in this process later, beside `socket_side`.
Exit status: 0 after a signal, 2 when the settings, the policy or the store refuse to start.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from services.approval_web.server import socket_side
from shared.config import Settings, configure_logging, load_settings
from shared.errors import FleetwatchError
from shared.policy import Policy, ToolPolicy, load_policies

logger = logging.getLogger("services.approval_web")


async def run(settings: Settings, policy: Policy, tool_policy: ToolPolicy) -> None:
    """Serve until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with socket_side(settings, policy, tool_policy):
        logger.info("approval_web serving %s", settings.approval_socket)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; `argv` is unused (everything comes from ``FLEETWATCH_*``)."""
    try:
        settings = load_settings()
        configure_logging(settings)
        policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
        asyncio.run(run(settings, policy, tool_policy))
    except FleetwatchError as exc:
        print(f"approval_web: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
