"""The ``fleetwatch`` command: a thin CLI over async functions.

It holds nothing secret of its own: it reads the fleet through the read sign-in, talks to the
services over their sockets, and runs the lab. It cannot approve a change: approving happens
only on the approval page, by a person, by design.

Exit codes: 0 done; 1 a check failed (e.g. ``doctor``); 2 a user error (bad input, missing
sign-in, refused), printed as one line ``fleetwatch: <message> [<code>]`` in the operator's
language, the stable code last for scripts (`shared.errors.error_line`). A service that is not
running (``service_unavailable``) is said plainly, naming ``FLEETWATCH_HOME`` and how to start
it. Output piped into a reader that stops early (``fleetwatch status | head -1``) ends quietly.

``--language en|es`` may come before the command (``fleetwatch --language es status``) or
after it; after it wins. A misspelt command, action, option or choice names the closest one
(`services.ctl.arguments.Parser`).

``fleetwatch lab ...`` hands every argument to ``python -m services.lab`` (its own options and
``--help``) before this parser sees them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gettext
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from gettext import gettext as _
from gettext import ngettext
from pathlib import Path

from services.ctl import add_language_option
from services.ctl.arguments import Parser
from shared.config import ConfigError, Settings, load_settings
from shared.errors import Code, FleetwatchError
from shared.errors import error_line as shared_error_line
from shared.spelling import closest
from shared.text.catalogue import N_, placeholder
from shared.text.display import visible
from shared.text.languages import LANGUAGES, Language, language_of, parse_language, system_language

EPILOG = N_(
    "No command approves a change: a person approves each exact change on the approval page. "
    "This is by design and cannot be turned off."
)

ARGPARSE_WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("unrecognized arguments: %s"),
    N_("the following arguments are required: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    ngettext("expected %s argument", "expected %s arguments", 2),
    N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"),
    N_("ignored explicit argument %r"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
)
"""argparse's own words (Python 3.11's message IDs; ``expected %s argument`` is a plural entry),
marked so the catalogue keeps them: argparse asks `gettext` for them, in the catalogue's domain
while `said_in` holds."""


@contextlib.contextmanager
def said_in(language: str) -> Iterator[None]:
    """While it holds, `gettext`'s own functions (argparse's words, and the help texts the
    command tree marks with ``_``) read the catalogue's compiled twins in `language`: its
    domain bound to `LOCALES_DIR` and named by `gettext.textdomain`, the language by
    ``LANGUAGE``, gettext's variable (put back after)."""
    from shared.text.catalogue import DOMAIN, LOCALES_DIR

    before = os.environ.get("LANGUAGE")
    gettext.bindtextdomain(DOMAIN, LOCALES_DIR)
    gettext.textdomain(DOMAIN)
    os.environ["LANGUAGE"] = language
    try:
        yield
    finally:
        if before is None:
            del os.environ["LANGUAGE"]
        else:
            os.environ["LANGUAGE"] = before


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


GLOBAL_LANGUAGE = "global_language"
"""Where ``fleetwatch --language es COMMAND`` keeps the language given before the command (one
given after it, the command's own ``--language``, wins): `main` hands it to the command."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command tree: the whole of it, or with `command` (a word of `COMMANDS`) the part its
    module adds (``lab`` is always there); its help texts in the language `said_in` holds."""
    parser = Parser(
        prog="fleetwatch",
        description=_(
            "Fleetwatch: an assistant for Epiphan Pearl fleets that proposes changes a person approves."
        ),
        epilog=_(EPILOG),
    )
    add_language_option(parser, dest=GLOBAL_LANGUAGE)
    sub = parser.add_subparsers(dest="command", required=True, metavar=placeholder("COMMAND"))

    for name in (COMMANDS[command],) if command in COMMANDS else MODULES:
        importlib.import_module(f"services.ctl.{name}").add_commands(sub, _(EPILOG))

    # Listed for --help only: main() hands "lab ..." to the lab's own parser before this one.
    sub.add_parser(
        "lab",
        help=_(
            "run the lab, a simulated Epiphan Edge (every option of python -m services.lab; "
            "see 'fleetwatch lab --help')"
        ),
        add_help=False,
    )
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command word of `argv`, after a ``--language`` given before it (None when absent)."""
    rest = list(argv)
    while rest and (rest[0] == "--language" or rest[0].startswith("--language=")):
        rest = rest[2:] if rest[0] == "--language" else rest[1:]
    return rest[0] if rest else None


def help_language(argv: Sequence[str]) -> Language | None:
    """The language ``--help``, argparse's complaints and the command's own errors speak:
    the last ``--language`` in `argv` (or a misspelling of it, ``--lenguaje es``: the language
    the line names; before or after the command: after it, the command's own wins) that names a language (`parse_language`: ``ES``, ``es_MX``, ``Spanish``), else
    `FLEETWATCH_LANGUAGE` (the settings loader's reading: empty is the system locale's language,
    else English). When the settings do not load, `FLEETWATCH_LANGUAGE` alone, as given, or the
    locale's; None when `FLEETWATCH_LANGUAGE` itself names no language and the locale none either
    (its error is then said in every language: `error_line`)."""
    chosen = None
    for index, word in enumerate(argv):
        said = None
        if word.startswith("--"):
            # --language, or a misspelling of it (--lenguaje es): the language the line names
            option, equals, value = word.partition("=")
            if option == "--language" or closest(option, ("--language",)) is not None:
                said = value if equals else (argv[index + 1] if index + 1 < len(argv) else None)
        if parse_language(said) is not None:
            chosen = parse_language(said)  # the last one
    if chosen is not None:
        return chosen
    try:
        return language_of(load_settings().language)
    except ConfigError:
        # another setting is wrong: FLEETWATCH_LANGUAGE alone, as given, says it still
        from shared.config import given

        alone = given("FLEETWATCH_LANGUAGE")
        if alone is not None:
            return parse_language(alone) or system_language(os.environ)
        return system_language(os.environ) or LANGUAGES[0]


def not_running(why: str, language: str = "en") -> str:
    """The line for a service that is not running, in `language`: where Fleetwatch was looked
    for, and how to start it; `why` (the client's own words) follows."""
    from shared.config import home_given
    from shared.text.catalogue import translate
    from shared.text.command_line import printed_command

    settings = None
    try:
        settings = load_settings()
        home = str(settings.home)
    except ConfigError as error:
        home = f"? ({error.message})"
    said = translate(language_of(language), NOT_RUNNING)
    start = printed_command("up", language=language_of(language), home=home_given())
    line = said % {"home": visible(home, 300), "why": visible(why, 400), "command": start}
    other = None if settings is None else running_elsewhere(settings)
    if other is None:
        return line
    other_home, program, port = other
    from services.ctl.supervise import PROGRAM_WORDS

    elsewhere = translate(language_of(language), ELSEWHERE) % {
        "home": visible(other_home, 300),
        "program": translate(language_of(language), PROGRAM_WORDS[program]),
        "port": port,
    }
    return f"{line}. {elsewhere}"


def running_elsewhere(settings: Settings) -> tuple[str, str, int] | None:
    """(its home, its program, the port) of a Fleetwatch program listening on one of the ports
    these `settings` name (the lab's, its model's, the approval page's, the ask page's) whose
    ``FLEETWATCH_HOME`` is another home than theirs: a demo started in a home of its own with
    these ports, followed from another (``/proc``, where this user may look); else None."""
    from shared.web.port_holder import holder_of

    mine = settings.home.resolve()
    for port in (settings.lab_port, settings.model_standin_port, settings.approve_port, settings.ask_port):
        if not port:
            continue
        holder = holder_of("127.0.0.1", port)
        if holder.program and holder.home and Path(holder.home).resolve() != mine:
            return holder.home, holder.program, port
    return None


NOT_RUNNING = N_(
    "Fleetwatch is not running here (FLEETWATCH_HOME=%(home)s): start it with `%(command)s` (%(why)s)"
)
ELSEWHERE = N_(
    "Another Fleetwatch runs on this machine with FLEETWATCH_HOME=%(home)s (%(program)s on port "
    "%(port)s): to follow it, set FLEETWATCH_HOME=%(home)s."
)
NOTHING_ANSWERS = N_("%(service)s does not answer on its socket; nothing was sent")
"""The socket client's detail (``service_unavailable``) said in the catalogue's words (the
client writes English)."""
PROGRAMS = {"the executor": "executor", "the assistant": "assistant", "approval_web": "approval_web"}
"""The program a socket client names (`CallError.service`), as supervisord and doctor name it."""


def error_line(exc: FleetwatchError, language: Language | None) -> str:
    """``fleetwatch: <message> [<code>]`` for `exc` in `language` (`shared.errors.error_line`:
    the code last, for scripts), or one such line per language when `language` is None (the
    language setting itself is wrong and the locale names none: `help_language`)."""
    languages = LANGUAGES if language is None else (language,)
    return "\n".join(
        shared_error_line("fleetwatch", _error_message(exc, each), exc.code) for each in languages
    )


def _error_message(exc: FleetwatchError, language: Language) -> str:
    """`exc`'s message in `language`: the command's own sentence (a
    `CtlError`'s `Words`, or an error made of catalogue words: a setting's, a sign-in's); a
    service's refusal (`CallError`) as the service wrote it (English), in another language its
    code in words (`admin_words.code_words`) where the catalogue has them (the catalogue's
    ``foreign words``); any other error as it was written."""
    from services.ctl import CtlError, error_words
    from services.ctl.admin_words import View, code_words
    from shared.text.catalogue import C_, Words, say_text
    from shared.wire.client import CallError

    view = View(language_of(language), dt.UTC, dt.datetime.now(dt.UTC))

    def foreign(words: str | Words) -> str:
        """The service's own English `exc.message`, or `words` where the catalogue says so."""
        said = Words.in_context(
            "foreign words",
            C_("foreign words", "%(message)s"),
            message=visible(exc.message, 2000),
            words=words,
        )
        return say_text(said, view.language, zone=view.zone, now=view.now)

    if isinstance(exc, CtlError) and exc.words is not None and exc.lines:
        message = "\n".join(visible(line, 2000) for line in view.say(exc.words).split("\n"))
    elif isinstance(exc, CtlError) and exc.words is not None:
        message = visible(view.say(exc.words), 2000)
    elif isinstance(exc, CallError) and exc.template is None and exc.code != Code.SERVICE_UNAVAILABLE:
        # A service's refusal in its own English prose only: in another language, the code's
        # words, then the service's detail marked as its English (it may say what to fix).
        said = Words.in_context(
            "service's words",
            C_("service's words", "%(message)s"),
            message=visible(exc.message, 2000),
            words=code_words(view, str(exc.code)) or "",
        )
        message = say_text(said, view.language, zone=view.zone, now=view.now)
    elif exc.template is None and exc.code != Code.SERVICE_UNAVAILABLE:
        # A service's refusal or a library's failure, written in English (the sentence stays in
        # the log and the audit): in another language, its code in words where the catalogue
        # has them (an unreachable Epiphan, not "cannot open an MCP session: ConnectError").
        message = foreign(code_words(view, str(exc.code)) or visible(exc.message, 2000))
    elif exc.template is not None:
        # an error made of catalogue words: names, values and paths as they are, the sentence
        # around them in the reader's language
        message = visible(view.say(error_words(exc)), 2000)
    else:
        message = visible(exc.message, 2000)  # e.g. a misspelt setting and its closest known name
    if exc.code == Code.SERVICE_UNAVAILABLE and not isinstance(exc, CtlError):
        if isinstance(exc, CallError):
            service = visible(PROGRAMS.get(exc.service, exc.service), 40)
            message = foreign(Words.of(NOTHING_ANSWERS, service=service))
        message = not_running(message, language)  # a socket that does not answer
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fleetwatch`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        command = command_of(argv)
        language = help_language(argv)
        spoken = language or system_language(os.environ) or LANGUAGES[0]
        if command == "lab":
            # Every option after "lab" is the lab's own (argparse's REMAINDER drops leading options),
            # read, with its --help, in the operator's language; its ports are checked before it
            # starts, in the operator's words.
            from services.ctl.ports import lab_refusal
            from services.lab.__main__ import build_parser as lab_parser
            from services.lab.__main__ import main as lab_main

            lab_argv = argv[argv.index("lab") + 1 :]
            with said_in(spoken):
                parsed = lab_parser().parse_args(lab_argv)
            refused = lab_refusal(lab_argv)
            if refused is not None:
                print(error_line(refused, language), file=sys.stderr)
                return 2
            return lab_main(parsed=parsed)
        with said_in(spoken):
            args = build_parser(command).parse_args(argv)
        if getattr(args, "language", None) is None:
            args.language = getattr(args, GLOBAL_LANGUAGE)
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
