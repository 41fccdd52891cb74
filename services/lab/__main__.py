"""``python -m services.lab`` (and ``fleetwatch lab``): run the lab until SIGINT or SIGTERM.

Prints the URL (and, on a terminal, each team's demo bearer token). ``--ready-file PATH``
gets ``{"url", "mcp_url", "pid"}`` (JSON) once the lab listens, and is removed at exit.
``--model-profile NAME`` also serves the Messages-API stand-in playing the demo model, as that
Anthropic-compatible server answers (`services.lab.model_standin.PROFILES`), on
``--model-port`` (the ready file then has ``model_url``).
Exit status: 0 after a signal, 2 for a bad option or scenario.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from gettext import gettext as _
from gettext import pgettext
from pathlib import Path

from services.lab import LabError
from services.lab.lab import DEFAULT_CONTROL_DELAY_SECONDS
from services.lab.model_standin import PROFILES, run_model_standin
from services.lab.server import make_lab, serve_lab


def build_parser() -> argparse.ArgumentParser:
    """The lab's command line (``python -m services.lab``, ``fleetwatch lab``): its help texts and
    placeholders are read through `gettext` when built (``fleetwatch lab`` builds it in the
    operator's language, ``services.ctl.main.said_in``; alone, it is English)."""

    def placeholder(name: str) -> str:  # the catalogue's keyed placeholders, as `gettext` reads them
        return pgettext("placeholder", name)

    parser = argparse.ArgumentParser(
        prog="fleetwatch lab",
        description=_(
            "Run the lab: a simulated Epiphan Edge MCP server (two teams, OAuth, faults) on 127.0.0.1. "
            "It never contacts a real Epiphan server and listens on loopback only."
        ),
    )
    parser.add_argument(
        "--scenario",
        default="campus",
        metavar=placeholder("SCENARIO"),
        help=_("bundled scenario name or a YAML path (default: campus)"),
    )
    parser.add_argument(
        "--devices",
        type=int,
        metavar=placeholder("N"),
        help=_("replace the normal team by a generated fleet of N devices"),
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar=placeholder("N"), help=_("seed for --devices (default: 0)")
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8770,
        metavar=placeholder("PORT"),
        help=_("port on 127.0.0.1 (default: 8770; 0 picks one)"),
    )
    parser.add_argument(
        "--sandbox-devices",
        type=int,
        metavar=placeholder("N"),
        help=_("replace the sandbox team by a generated healthy one of N devices"),
    )
    parser.add_argument(
        "--capture",
        type=Path,
        metavar=placeholder("DIR"),
        help=_(
            "serve a 'fleetwatch capture' folder as the normal team, in its captured shapes, times shifted to now"
        ),
    )
    parser.add_argument(
        "--capture-sandbox",
        type=Path,
        metavar=placeholder("DIR"),
        help=_("serve a second capture folder as the sandbox team"),
    )
    parser.add_argument("--older-shapes", action="store_true", help=_("send the older result shapes"))
    parser.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar=placeholder("TOOL=NAME"),
        help=_("answer a tool in a named shape (repeatable), e.g. %(example)s")
        % {"example": "get_current_or_next_cms_events_for_devices=keyed_devices"},
    )
    parser.add_argument(
        "--anonymous",
        choices=("admit", "challenge"),
        help=_(
            "no/invalid token: admit (in-band 401, like Epiphan) or challenge (HTTP 401); default: the scenario's"
        ),
    )
    parser.add_argument(
        "--hide-team-id", action="store_true", help=_("leave team_id out of get_devices_in_my_team")
    )
    parser.add_argument(
        "--control-delay",
        type=float,
        default=DEFAULT_CONTROL_DELAY_SECONDS,
        metavar=placeholder("SECONDS"),
        help=_(
            "seconds a recording or stream start/stop takes to apply, like a live Pearl "
            "(0..600; default: %(default)s; 0: at once)"
        ),
    )
    parser.add_argument(
        "--ready-file",
        type=Path,
        metavar=placeholder("FILE"),
        help=_("write {url, mcp_url, pid} as JSON here once listening"),
    )
    parser.add_argument(
        "--model-profile",
        choices=list(PROFILES),
        help=_(
            "also serve the model stand-in (the demo model) answering as this Anthropic-compatible server"
        ),
    )
    parser.add_argument(
        "--model-port",
        type=int,
        default=8771,
        metavar=placeholder("PORT"),
        help=_("the model stand-in's port on 127.0.0.1 (default: 8771)"),
    )
    return parser


def _shapes(pairs: list[str]) -> dict[str, str]:
    """``TOOL=NAME`` pairs as a map; `LabError` for one without ``=``."""
    shapes = {}
    for pair in pairs:
        tool, sep, name = pair.partition("=")
        if not sep or not tool or not name:
            raise LabError(f"--shape takes TOOL=NAME, not {pair!r}")
        shapes[tool.strip()] = name.strip()
    return shapes


async def _run(args: argparse.Namespace) -> None:
    lab = make_lab(
        args.scenario,
        devices=args.devices,
        seed=args.seed,
        older_shapes=True if args.older_shapes else None,
        anonymous=args.anonymous,
        expose_team_id=False if args.hide_team_id else None,
        shapes=_shapes(args.shape),
        sandbox_devices=args.sandbox_devices,
        capture=args.capture,
        capture_sandbox=args.capture_sandbox,
        control_delay_seconds=args.control_delay,
    )
    async with contextlib.AsyncExitStack() as stack:
        serving = await stack.enter_async_context(serve_lab(lab, args.port))
        info = {"url": serving.url, "mcp_url": f"{serving.url}/mcp", "pid": os.getpid()}
        if args.model_profile is not None:
            model = await stack.enter_async_context(
                run_model_standin("demo", port=args.model_port, profile=args.model_profile)
            )
            info["model_url"] = model.base_url
            print(f"Model stand-in ({args.model_profile}) at {model.base_url}", flush=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, serving.stop)
        ready = args.ready_file
        try:
            if ready is not None:
                partial = ready.with_name(ready.name + ".tmp")
                partial.write_text(json.dumps(info))
                partial.replace(ready)
            print(f"Lab ({lab.scenario.name}) listening on {serving.url}  MCP: {serving.url}/mcp", flush=True)
            if sys.stdout.isatty():
                for team in lab.teams_view():
                    print(f"  {team['name']:8} team {team['team_id']}  token {team['token']}")
            await serving.task
        finally:
            if ready is not None:
                ready.unlink(missing_ok=True)


def main(argv: Sequence[str] | None = None, *, parsed: argparse.Namespace | None = None) -> int:
    """Run the lab; returns the exit status (see the module docstring). `parsed`: `argv` already
    read by `build_parser` (``fleetwatch lab`` reads it in the operator's language)."""
    args = parsed if parsed is not None else build_parser().parse_args(argv)
    try:
        asyncio.run(_run(args))
    except LabError as exc:
        print(f"fleetwatch lab: {exc.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
