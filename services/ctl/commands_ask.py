"""``fleetwatch ask "QUESTION"``: ask the assistant over assistant.sock and print its answer.

The answer's text (the model's words, or the keyword answer) is split at its own line feeds
only, and each line shown through `shared.text.display.visible`, so a CR, U+2028 or U+2029
inside a name is a visible marker and never a line of its own (a name cannot forge a line
that looks like the product's), and a terminal escape or a bidi override is shown, not
obeyed; then, apart and labelled as Fleetwatch's (the model's words never say what ran), one
code-built line per proposal with its recorded state, and one per change that was not
proposed, saying why in words. ``--json`` prints the `Answer` as safe JSON: which answered,
the answer's code, the proposals and the refusals with their codes. Asking cannot approve
anything: a proposal waits for a person on the approval page.

Errors: the assistant not running (``service_unavailable``), no answer in time
(``service_no_answer``) or its refusal (e.g. ``invalid_message``) are raised as
`FleetwatchError`; ``main`` prints one line and exits 2.
"""

from __future__ import annotations

import argparse
from gettext import gettext as _
from typing import Any, Final

from services.ctl import add_language_option
from services.ctl.output import print_json
from shared.config import load_settings
from shared.text.answered_by import answered_by
from shared.text.catalogue import N_, placeholder, translate
from shared.text.display import visible
from shared.text.languages import language_of
from shared.wire.assistant import Answer, Ask, AssistantClient

TIMEOUT_SECONDS: Final = 180.0
"""Default wait for an answer: longer than the assistant's own wall budget per question."""


def render_answer(answer: Answer) -> str:
    """The answer for a terminal: its text, then, labelled as Fleetwatch's, a line per proposal
    and per change not proposed, then who answered (the model, the lab's demo model or the
    keyword answer)."""
    lines = [visible(line, 2000) for line in answer.text.split("\n")]
    code_built = [*answer.proposals, *answer.refusals]
    if code_built:
        lines.append("")
        language = language_of(answer.language)
        lines.append(translate(language, N_("What Fleetwatch recorded (not the assistant's words):")))
        lines.extend(f"- {visible(line.text, 600)}" for line in code_built)
    lines += ["", answered_by(answer.answered_by, answer.language)]
    return "\n".join(lines)


async def ask(args: argparse.Namespace) -> int:
    """Send one question; print the answer."""
    settings = load_settings()
    message = Ask(question=args.question, language=args.language)
    reply = await AssistantClient(settings.assistant_socket).call(message, timeout_seconds=args.timeout)
    if args.json:
        print_json(reply)
    else:
        print(render_answer(reply))
    return 0


def add_commands(sub: Any, epilog: str) -> None:
    """Add ``ask`` to the ``fleetwatch`` command tree."""
    parser = sub.add_parser(
        "ask",
        help=_("ask the assistant about the fleet (English or Spanish); it can only propose changes"),
        description=(
            _(
                "Ask the assistant a question. It reads the fleet and may propose a change; "
                "nothing runs until a person approves it on the approval page."
            )
        ),
        epilog=epilog,
    )
    parser.add_argument(
        "question", metavar=placeholder("QUESTION"), help=_('the question, e.g. "What needs attention?"')
    )
    add_language_option(parser, _("answer language (default: the question's)"))
    parser.add_argument(
        "--timeout",
        type=float,
        metavar=placeholder("SECONDS"),
        default=TIMEOUT_SECONDS,
        help=_("seconds to wait (default: 180)"),
    )
    parser.add_argument("--json", action="store_true", help=_("print the answer as JSON"))
    parser.set_defaults(run=ask)
