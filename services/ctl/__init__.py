"""The ``fleetwatch`` command: a thin command line over async functions and the sockets' clients.

It holds nothing secret. Approving is impossible from here by design: no command approves; a
person approves on the page. ``fleetwatch login`` writes the token slots; ``up`` / ``down``
drive supervisord; the admin commands, ``ask`` and the watch's commands talk to approval.sock
and assistant.sock through `shared.wire.approval.ApprovalClient` and
`shared.wire.assistant.AssistantClient`.

Layers (each may import the ones above it and `shared.*`)::

    output.py  admin_words.py  supervise.py  doctor.py  fleet_view.py  arguments.py
                        printing for a terminal: JSON through `shared.text.display.safe_json` |
                        pending, pending show and audit tail in words, aligned, in the
                        operator's language and time zone (pure) | supervisord: the
                        configuration, start, stop, wait (no command line) | pure checks of the
                        facts doctor gathered, and their rendering | the fleet as a table and as
                        JSON (names made visible) | help for bad input: the closest word (did
                        you mean) for commands, options, choices, tools and arguments, the
                        parser that offers it, a propose argument's shape (pure)
    demo_env.py         the demo's environment: up starts the services with it; doctor and
                        the readouts judge as the services would with it (the lab's scenario
                        and stand-ins)
    doctor_compose.py  ports.py  stopped.py
                        doctor --compose: a compose file's users against the uids in the
                        settings (pure) | the ports up listens on, checked before anything
                        starts (who holds one: shared.web.port_holder) | the read-only commands
                        while the services are stopped: the same reply from the store, through
                        the service's readout
    commands_watch.py  commands_tools.py  doctor_slack.py  commands_audit.py
                        history, digest, note, notes, status --check (the watch, on
                        assistant.sock) | tools diff: Epiphan's tool list against the reviewed
                        policy (doctor too) | doctor's check of asks from Slack
                        (apps.connections.open, once) | audit export, audit decisions
                        (approval.sock)
    commands_admin.py  commands_ask.py  commands_capture.py
    | commands_doctor.py  commands_fleet.py  commands_signin.py
                        pending, deny, deny-all, pause, resume, audit, status, propose | ask |
                        capture: every read tool once, redacted with stable placeholders |
                        doctor: gathers the facts (settings, slots, sockets, ports) | fleet |
                        login, logout
    commands_up.py      up, down, demo (the lab in demo mode: `services.lab`'s scenario)
    main.py             the parser and ``main`` (``fleetwatch lab`` hands over to the lab)

The lab is the one other service it imports, and only to start it: ``fleetwatch lab`` (and its
ports, checked first with its own options), and in `demo_env` the demo's scenario and the
addresses of the lab's Slack and Teams stand-ins the demo posts to (the import contract names
these imports).

Errors: `CtlError` (and `supervise.SuperviseError`); ``main`` prints any `FleetwatchError` as
one line ``fleetwatch: <message> [<code>]`` (`shared.errors.error_line`) (a `CtlError` made of catalogue `Words` in the
operator's language) and exits 2. The tree is drawn in `shared.errors`.
"""

from __future__ import annotations

import argparse
import datetime as dt
from gettext import gettext as _

from shared.errors import Code, FleetwatchError
from shared.text.catalogue import N_, Words, say_text
from shared.text.languages import LANGUAGES, parse_language


def language_argument(raw: str) -> str:
    """``--language``'s value as a `Language` when it names one in any spelling (``ES``,
    ``es_MX``, ``Spanish``: `parse_language`), else as given (argparse then refuses it, naming
    the choices)."""
    return parse_language(raw) or raw


def add_language_option(
    parser: argparse.ArgumentParser, help_text: str | None = None, *, dest: str = "language"
) -> None:
    """``--language en|es`` (any case or spelling `language_argument` reads) on `parser`: the
    words' language, kept in `dest` (``fleetwatch --language es COMMAND`` keeps the one before the
    command apart); `help_text` (translated) says what it chooses, by default the command's words
    (default: FLEETWATCH_LANGUAGE)."""
    parser.add_argument(
        "--language",
        type=language_argument,
        choices=LANGUAGES,
        dest=dest,
        help=help_text or _("the words' language (default: FLEETWATCH_LANGUAGE)"),
    )


def error_words(exc: FleetwatchError) -> Words | str:
    """`exc`'s message to say inside another sentence, in the reader's language where it can
    be: a `CtlError`'s `Words`; an error made of catalogue words (``template``, ``params``; a
    setting's error with the setting's name in front) as `Words`, each parameter that is itself
    a catalogue message translated too; else its text as written (English)."""
    if isinstance(exc, CtlError) and exc.words is not None:
        return exc.words
    if exc.template is None:
        return exc.message
    words = Words(exc.template, tuple(sorted((k, Words(v) if v else v) for k, v in exc.params.items())))
    name = getattr(exc, "name", None)  # shared.config.ConfigError names its setting
    return Words(N_("%(name)s: %(problem)s"), (("name", name), ("problem", words))) if name else words


class CtlError(FleetwatchError):
    """A ``fleetwatch`` command could not do its job; ``code`` says why.

    Attributes:
        words: the sentence as catalogue `Words` (shown in the operator's language), or None
            when `message` is text as it is (English, or a service's own words).
        lines: True when the words' line breaks are their own (a line per taken port): each
            line is then shown as it is; the caller made every parameter `visible`, so no
            parameter can start a line. False: one line, any break in it shown as a mark.
    """

    def __init__(self, code: Code, message: str | Words | None = None, *, lines: bool = False) -> None:
        self.words = message if isinstance(message, Words) else None
        self.lines = lines
        english = (
            say_text(message, "en", zone=dt.UTC, now=dt.datetime.now(dt.UTC))
            if isinstance(message, Words)
            else message
        )
        super().__init__(code, english)
