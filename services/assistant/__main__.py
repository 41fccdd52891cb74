"""``python -m services.assistant``: run the assistant until SIGINT or SIGTERM.

Serves assistant.sock and runs the watch (the heartbeat, readiness, digests, notices:
`services.assistant.watch`); with ``FLEETWATCH_SLACK_APP_TOKEN`` set, listens for asks from
Slack over Socket Mode (`services.assistant.slack`, read-only); with ``--page`` also the local ask page at ``http://localhost:<FLEETWATCH_ASK_PORT>/``
(127.0.0.1 and [::1]), behind its own secret (printed on a terminal, else written to
``FLEETWATCH_ASK_SECRET_FILE`` and deleted at a clean stop), and on the same port the wall
screen (``/wall``: read-only, no secret). Settings come from ``FLEETWATCH_*``. It never opens
the approval store: what it records there goes through approval.sock; the watch keeps its own
store (``FLEETWATCH_WATCH_DB``). Exit status: 0 after a signal, 2 when the settings, the
policy, the watch store or a socket refuse to start, or when ``FLEETWATCH_MODEL_LOCAL_ONLY`` is
on and the model's URL is not on this machine or a private network (``model_not_local``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import signal
import sys
from collections.abc import Sequence

from services.assistant.server import assistant_side, build_assistant, build_reader, refuse_unless_local
from services.assistant.watch.runner import wall_for, watch_side
from shared.config import Settings, configure_logging, load_settings
from shared.errors import FleetwatchError, error_line
from shared.policy.loader import Policy, ToolPolicy, load_policies

logger = logging.getLogger("services.assistant")


async def run(settings: Settings, policy: Policy, tool_policy: ToolPolicy, *, page: bool = False) -> None:
    """Serve until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    reader = build_reader(settings, tool_policy)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(reader.close)
        watch = await stack.enter_async_context(watch_side(settings, policy, reader))
        assistant, _ = build_assistant(settings, policy, tool_policy, reader=reader, notes=watch.store)
        await stack.enter_async_context(assistant_side(settings, assistant, watch=watch))
        if settings.slack_app_token is not None:
            from services.assistant.proposals import approval_sink
            from services.assistant.slack import slack_side

            read_only, _ = build_assistant(
                settings, policy, tool_policy, reader=reader, notes=watch.store, read_only=True
            )
            sink = approval_sink(settings.approval_socket)
            await stack.enter_async_context(slack_side(settings, read_only, watch.store, sink))
            logger.info("asks from Slack: listening over Socket Mode (read-only)")
        if page:
            from services.assistant.page import serve_page
            from services.assistant.proposals import approval_sink
            from services.assistant.server import AssistantAudit
            from services.assistant.watch.proposals import approval_page_url
            from shared.web.page_secret import SecretSink

            sink = SecretSink.for_stream(settings.ask_secret_file, sys.stdout, label="Ask page")
            audit = AssistantAudit(approval_sink(settings.approval_socket))
            from services.assistant.watch.proposals import ApprovalSocketProposals

            sandbox = ApprovalSocketProposals(settings.approval_socket).writable
            wall = functools.partial(wall_for, watch, sandbox=sandbox)
            approval_page = functools.partial(approval_page_url, settings.approval_socket)
            url = await stack.enter_async_context(
                serve_page(
                    assistant,
                    settings.ask_port,
                    sink=sink,
                    audit=audit,
                    wall=wall,
                    approval_page=approval_page,
                )
            )
            logger.info("ask page at %s (wall screen at %swall)", url, url)
        logger.info(
            "assistant serving %s (model %s, proposals %s)",
            settings.assistant_socket,
            "on" if settings.anthropic_api_key else "off",
            "on" if assistant.may_propose else "off",
        )
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m services.assistant",
        description="Run the assistant: assistant.sock (and the ask page with --page). It can only propose.",
    )
    parser.add_argument(
        "--page", action="store_true", help="also serve the ask page (http://localhost:PORT/)"
    )
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
        refuse_unless_local(settings)
        configure_logging(settings)
        policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
        asyncio.run(run(settings, policy, tool_policy, page=args.page))
    except FleetwatchError as exc:
        print(error_line("assistant", exc.message, exc.code), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
