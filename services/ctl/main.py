"""The ``fleetwatch`` command: a thin CLI over async functions.

It holds nothing secret of its own: it reads the fleet through the read sign-in, talks to the
services over their sockets, and runs the lab. It cannot approve a change: approving happens
only on the approval page, by a person, by design.

Exit codes: 0 done; 1 a check failed (e.g. ``doctor``); 2 a user error (bad input, missing
sign-in, refused), printed as one line ``fleetwatch: <code>: <message>``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from services.ctl import (
    commands_admin,
    commands_ask,
    commands_capture,
    commands_doctor,
    commands_fleet,
    commands_signin,
    commands_up,
    commands_watch,
)
from shared.errors import FleetwatchError
from shared.text.display import visible

EPILOG = (
    "No command approves a change: a person approves each exact change on the approval page. "
    "This is by design and cannot be turned off."
)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    parser = argparse.ArgumentParser(
        prog="fleetwatch",
        description="Fleetwatch: an assistant for Epiphan Pearl fleets that proposes changes a person approves.",
        epilog=EPILOG,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fleet = sub.add_parser(
        "fleet",
        help="show the fleet through the read sign-in (read here, or by the assistant for an operator)",
        epilog=EPILOG,
    )
    fleet.add_argument("--json", action="store_true", help="print JSON instead of a table")
    fleet.set_defaults(run=commands_fleet.fleet)
    writable = sub.add_parser(
        "writable",
        help="the devices a change may target now (read afresh by the executor through the sandbox sign-in)",
        epilog=EPILOG,
    )
    writable.add_argument("--json", action="store_true", help="print JSON instead of text")
    writable.set_defaults(run=commands_fleet.writable)

    commands_capture.add_commands(sub, EPILOG)
    commands_up.add_commands(sub, EPILOG)
    commands_ask.add_commands(sub, EPILOG)
    commands_admin.add_commands(sub, EPILOG)
    commands_watch.add_commands(sub, EPILOG)
    commands_signin.add_commands(sub, EPILOG)
    commands_doctor.add_commands(sub, EPILOG)

    lab = sub.add_parser(
        "lab", help="run the lab, a simulated Epiphan Edge (see 'fleetwatch lab --help')", add_help=False
    )
    lab.add_argument("lab_args", nargs=argparse.REMAINDER)
    lab.set_defaults(run=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fleetwatch`` console script."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["lab"]:
        # Every option after "lab" is the lab's own (argparse's REMAINDER drops leading options).
        from services.lab.__main__ import main as lab_main

        return lab_main(words[1:])
    args = build_parser().parse_args(words)
    try:
        result = asyncio.run(args.run(args))
    except FleetwatchError as exc:
        print(f"fleetwatch: {exc.code}: {visible(exc.message, 2000)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main())
