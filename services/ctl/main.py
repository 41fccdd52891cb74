"""The ``fleetwatch`` command: a thin CLI over async functions.

It holds nothing secret of its own: it reads the fleet through the read sign-in, talks to the
services over their sockets, and runs the lab. It cannot approve a change: approving happens
only on the approval page, by a person, by design.

Exit codes: 0 done; 1 a check failed (e.g. ``doctor``); 2 a user error (bad input, missing
sign-in, refused), printed as one line ``fleetwatch: <code>: <message>``. A service that is not
running (``service_unavailable``) is said plainly, naming ``FLEETWATCH_HOME`` and how to start
it. Output piped into a reader that stops early (``fleetwatch status | head -1``) ends quietly.

``fleetwatch lab ...`` hands every argument to ``python -m services.lab`` (its own options and
``--help``) before this parser sees them.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from collections.abc import Sequence

from shared.config import ConfigError, load_settings
from shared.errors import Code, FleetwatchError
from shared.text.catalogue import N_
from shared.text.display import visible

EPILOG = N_(
    "No command approves a change: a person approves each exact change on the approval page. "
    "This is by design and cannot be turned off."
)

ARGPARSE_WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
)
"""argparse's own words in a help text (translated with the rest by `in_language`)."""

MODULES = (
    "commands_fleet",
    "commands_capture",
    "commands_up",
    "commands_ask",
    "commands_admin",
    "commands_watch",
    "commands_signin",
    "commands_doctor",
)
"""The modules of ``services.ctl`` that add commands to the tree (``add_commands``), in the
order ``--help`` lists them."""
COMMANDS = {
    **dict.fromkeys(("fleet", "writable"), "commands_fleet"),
    "capture": "commands_capture",
    **dict.fromkeys(("up", "down", "demo"), "commands_up"),
    "ask": "commands_ask",
    **dict.fromkeys(
        ("pending", "deny", "deny-all", "pause", "resume", "acknowledge", "audit", "status", "propose"),
        "commands_admin",
    ),
    **dict.fromkeys(("history", "digest", "note", "notes"), "commands_watch"),
    **dict.fromkeys(("login", "logout"), "commands_signin"),
    "doctor": "commands_doctor",
}
"""Which module adds each command: ``fleetwatch COMMAND ...`` imports that one module, not
every command's (issue 14: a quick CLI); ``--help`` or an unknown word builds the whole tree.
`tests/ctl/test_command_tree.py` holds this map to the tree."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command tree: the whole of it, or with `command` (a word of `COMMANDS`) the part its
    module adds (``lab`` is always there)."""
    parser = argparse.ArgumentParser(
        prog="fleetwatch",
        description=N_(
            "Fleetwatch: an assistant for Epiphan Pearl fleets that proposes changes a person approves."
        ),
        epilog=EPILOG,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name in (COMMANDS[command],) if command in COMMANDS else MODULES:
        importlib.import_module(f"services.ctl.{name}").add_commands(sub, EPILOG)

    # Listed for --help only: main() hands "lab ..." to the lab's own parser before this one.
    sub.add_parser(
        "lab",
        help=N_(
            "run the lab, a simulated Epiphan Edge (every option of python -m services.lab; "
            "see 'fleetwatch lab --help')"
        ),
        add_help=False,
    )
    return parser


def help_language(argv: Sequence[str]) -> str:
    """The language ``--help`` speaks: ``--language`` in `argv`, else `FLEETWATCH_LANGUAGE` (the
    settings loader's reading; English when the settings do not load, as the command then says)."""
    for index, word in enumerate(argv):
        if word == "--language" and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith("--language="):
            return word.split("=", 1)[1]
    try:
        return load_settings().language
    except ConfigError:
        return "en"


def in_language(parser: argparse.ArgumentParser, language: str) -> argparse.ArgumentParser:
    """`parser` and every parser below it with their help texts (marked `N_`), descriptions,
    epilogs, group titles and argparse's own words in `language` (from the one catalogue);
    English stays as built."""
    if language != "es":
        return parser
    from shared.text.catalogue import translate

    def say(text: str | None) -> str | None:
        return translate("es", text) if text and text != argparse.SUPPRESS else text

    usage = say("usage: ")

    def in_words(base: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
        class InLanguage(base):
            def add_usage(self, usage_text, actions, groups, prefix=None) -> None:
                base.add_usage(self, usage_text, actions, groups, usage if prefix is None else prefix)

        return InLanguage

    seen: set[int] = set()

    def walk(one: argparse.ArgumentParser) -> None:
        if id(one) in seen:
            return
        seen.add(id(one))
        one.formatter_class = in_words(one.formatter_class)
        one.description, one.epilog = say(one.description), say(one.epilog)
        for group in one._action_groups:
            group.title = say(group.title)
        for action in one._actions:
            action.help = say(action.help)
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    choice.help = say(choice.help)
                for child in action.choices.values():
                    walk(child)

    walk(parser)
    return parser


def not_running(exc: FleetwatchError) -> str:
    """The line for a service that is not running: where Fleetwatch was looked for, and how to
    start it (the service's own words follow)."""
    try:
        home = str(load_settings().home)
    except ConfigError as exc:
        home = f"? ({exc.message})"
    return (
        f"Fleetwatch is not running here (FLEETWATCH_HOME={visible(home, 300)}): start it with "
        f"`fleetwatch up` ({visible(exc.message, 400)})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fleetwatch`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["lab"]:
            # Every option after "lab" is the lab's own (argparse's REMAINDER drops leading options).
            from services.lab.__main__ import main as lab_main

            return lab_main(argv[1:])
        parser = build_parser(argv[0] if argv else None)
        args = in_language(parser, help_language(argv)).parse_args(argv)
        try:
            result = asyncio.run(args.run(args))
        except FleetwatchError as exc:
            message = not_running(exc) if exc.code == Code.SERVICE_UNAVAILABLE else visible(exc.message, 2000)
            print(f"fleetwatch: {exc.code}: {message}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return 130
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped (``| head``): say nothing more, and keep Python from complaining
        # about the closed pipe at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main())
