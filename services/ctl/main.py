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
import datetime as dt
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

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

ERROR_LINE = N_("%(prog)s: error: %(message)s\n")
"""argparse's line for a complaint (after the usage)."""
ARGPARSE_ERRORS = (
    N_("argument %(argument_name)s: %(message)s"),
    N_("unrecognized arguments: %s"),
    N_("the following arguments are required: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected %s argument"),
    N_("expected %s arguments"),
    N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"),
    N_("ignored explicit argument %r"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("a whole number of days from 1 to %s"),  # history --days (services.ctl.commands_watch.DAYS)
    N_("a time such as 45m, 2h, 1h30m or 3d, at most 14 days"),  # silence --for (commands_watch.DURATION)
)
"""argparse's complaints, exactly as Python 3.11's ``argparse`` words them (its catalogue IDs):
`in_language` finds which one a complaint is and says it again in the operator's language."""


def _pattern(template: str) -> re.Pattern[str]:
    """`template` (a %-format) as a pattern that captures each field (``%s`` as ``_0``...)."""
    parts, index = [], 0
    for piece in re.split(r"(%\((?:\w+)\)[sr]|%[sr])", template):
        field = re.fullmatch(r"%\((\w+)\)[sr]", piece)
        if field:
            parts.append(f"(?P<{field.group(1)}>.+?)")
        elif piece in ("%s", "%r"):
            parts.append(f"(?P<_{index}>.+?)")
            index += 1
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts), re.DOTALL)


def argparse_message(message: str, language: str) -> str:
    """argparse's complaint `message` (English, formatted) in `language`, nested ones too
    (``argument X: invalid choice: ...``); a complaint not in `ARGPARSE_ERRORS` stays English."""
    if language == "en":
        return message
    from shared.text.catalogue import translate

    for template in ARGPARSE_ERRORS:
        found = _pattern(template).fullmatch(message)
        if found is None:
            continue
        values = found.groupdict()
        if "message" in values:
            values["message"] = argparse_message(values["message"], language)
        said = re.sub(r"(%\(\w+\))r", r"\1s", translate(language, template))  # values are already repr'd
        said = re.sub(r"%r", "%s", said)
        positional = [values[k] for k in sorted(k for k in values if k.startswith("_"))]
        return said % tuple(positional) if positional else said % values
    return message


MODULES = (
    "commands_fleet",
    "commands_capture",
    "commands_up",
    "commands_ask",
    "commands_admin",
    "commands_watch",
    "commands_signin",
    "commands_doctor",
    "commands_tools",
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
    **dict.fromkeys(
        ("history", "digest", "note", "notes", "silence", "silences", "unsilence"), "commands_watch"
    ),
    **dict.fromkeys(("login", "logout"), "commands_signin"),
    "doctor": "commands_doctor",
    "tools": "commands_tools",
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
    """The language ``--help``, argparse's complaints and the command's own errors speak:
    ``--language`` in `argv` when it names a language, else `FLEETWATCH_LANGUAGE` (the settings
    loader's reading; English when the settings do not load, as the command then says)."""
    from shared.text.languages import LANGUAGES

    for index, word in enumerate(argv):
        given = argv[index + 1] if word == "--language" and index + 1 < len(argv) else None
        if word.startswith("--language="):
            given = word.split("=", 1)[1]
        if given in LANGUAGES:
            return given
    try:
        return load_settings().language
    except ConfigError:
        # another setting is wrong: FLEETWATCH_LANGUAGE alone, as given, says it still
        from shared.config import given

        alone = given("FLEETWATCH_LANGUAGE")
        return alone if alone in LANGUAGES else "en"


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

    def complain(one: argparse.ArgumentParser) -> None:
        def error(message: str) -> NoReturn:
            one.print_usage(sys.stderr)
            said = translate(language, ERROR_LINE) % {
                "prog": one.prog,
                "message": argparse_message(message, language),
            }
            one.exit(2, said)

        one.error = error

    def walk(one: argparse.ArgumentParser) -> None:
        if id(one) in seen:
            return
        seen.add(id(one))
        one.language = language  # read by a help built lazily (propose --help)
        complain(one)
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


def not_running(why: str, language: str = "en") -> str:
    """The line for a service that is not running, in `language`: where Fleetwatch was looked
    for, and how to start it; `why` (the client's own words) follows."""
    from shared.text.catalogue import translate

    try:
        home = str(load_settings().home)
    except ConfigError as error:
        home = f"? ({error.message})"
    said = translate("es" if language == "es" else "en", NOT_RUNNING)
    return said % {"home": visible(home, 300), "why": visible(why, 400)}


NOT_RUNNING = N_(
    "Fleetwatch is not running here (FLEETWATCH_HOME=%(home)s): start it with `fleetwatch up` (%(why)s)"
)
NOTHING_ANSWERS = N_("%(service)s does not answer on its socket; nothing was sent")
"""The socket client's detail (``service_unavailable``) said in the catalogue's words (the
client writes English)."""
PROGRAMS = {"the executor": "executor", "the assistant": "assistant", "approval_web": "approval_web"}
"""The program a socket client names (`CallError.service`), as supervisord and doctor name it."""


def error_line(exc: FleetwatchError, language: str) -> str:
    """``fleetwatch: <code>: <message>`` for `exc` in `language`: the command's own sentence (a
    `CtlError`'s `Words`); a service's refusal (`CallError`) in English as the service wrote it,
    in Spanish its code in words (`admin_words.code_words`) where the catalogue has them; any
    other error as it was written."""
    from services.ctl import CtlError
    from shared.wire.client import CallError

    if language == "es" and isinstance(exc, CtlError) and exc.words is not None:
        from shared.text.catalogue import say_text

        message = visible(say_text(exc.words, "es", zone=dt.UTC, now=dt.datetime.now(dt.UTC)), 2000)
    elif language == "es" and isinstance(exc, CallError) and exc.code != Code.SERVICE_UNAVAILABLE:
        # A service's refusal, written in English: its code in words instead, where the
        # catalogue has them (the service's sentence stays in its log and the audit).
        from services.ctl.admin_words import View, code_words

        words = code_words(View("es", dt.UTC, dt.datetime.now(dt.UTC)), str(exc.code))
        message = words or visible(exc.message, 2000)
    elif language == "es" and exc.template is not None:
        # an error made of catalogue words (a setting's, a sign-in's): names, values and paths as
        # they are, the sentence around them in Spanish
        from shared.text.catalogue import translate

        params = {k: translate("es", v) if v else v for k, v in exc.params.items()}  # a fixed sentence too
        said = translate("es", exc.template) % params if params else translate("es", exc.template)
        message = visible(f"{exc.name}: {said}" if isinstance(exc, ConfigError) else said, 2000)
    else:
        message = visible(exc.message, 2000)  # e.g. a misspelt setting and its closest known name
    if exc.code == Code.SERVICE_UNAVAILABLE and not isinstance(exc, CtlError):
        if language == "es" and isinstance(exc, CallError):
            from shared.text.catalogue import translate

            service = PROGRAMS.get(exc.service, exc.service)
            message = translate("es", NOTHING_ANSWERS) % {"service": visible(service, 40)}
        message = not_running(message, language)  # a socket that does not answer
    return f"fleetwatch: {exc.code}: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fleetwatch`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["lab"]:
            # Every option after "lab" is the lab's own (argparse's REMAINDER drops leading options).
            from services.lab.__main__ import main as lab_main

            return lab_main(argv[1:])
        parser = build_parser(argv[0] if argv else None)
        language = help_language(argv)
        args = in_language(parser, language).parse_args(argv)
        try:
            result = asyncio.run(args.run(args))
        except FleetwatchError as exc:
            print(error_line(exc, language), file=sys.stderr)
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
