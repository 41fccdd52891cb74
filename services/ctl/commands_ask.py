"""``fleetwatch ask "QUESTION"``: ask the assistant over assistant.sock and print its answer.

The answer's text (the model's words, or the keyword answer) is shown quoted under its own
heading by the one rule of every surface (`shared.text.model_text.model_lines`): split at every
line break, each line made visible (a terminal escape or a bidi override is shown, not obeyed)
and starting ``│ ``, a line imitating one of the product's headings marked as the assistant's;
then, apart and under Fleetwatch's heading (the model's words never say what ran), one
code-built line per proposal with its recorded state, and one per change that was not
proposed, saying why in words; then the operators' notes on the rooms the answer names. ``--json`` prints the `Answer` as safe JSON: which answered,
the answer's code, the proposals and the refusals with their codes. Asking cannot approve
anything: a proposal waits for a person on the approval page.

Errors: an empty question, or one longer than the assistant takes (``invalid_message``), is
refused before anything is sent, in words; the assistant not running (``service_unavailable``), no answer in time
(``service_no_answer``) or its refusal (e.g. ``invalid_message``) are raised as
`FleetwatchError`; ``main`` prints one line and exits 2.
"""

from __future__ import annotations

import argparse
from gettext import gettext as _
from typing import Any, Final

from services.ctl import CtlError, add_language_option
from services.ctl.output import print_json
from shared.config import home_given, load_settings
from shared.errors import Code
from shared.text.answered_by import answered_by
from shared.text.ask_words import EXAMPLE_QUESTION, question_refusal
from shared.text.catalogue import placeholder, translate
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import Language, language_of
from shared.text.model_text import MODEL_HEADING, NOTES_HEADING, RECORDED_HEADING, model_lines
from shared.wire.assistant import Answer, Ask, AssistantClient
from shared.wire.formats import MAX_QUESTION_CHARS

TIMEOUT_SECONDS: Final = 180.0
"""Default wait for an answer: longer than the assistant's own wall budget per question."""


def render_answer(answer: Answer) -> str:
    """The answer for a terminal: its text, then, labelled as Fleetwatch's, a line per proposal
    and per change not proposed, then who answered (the model, the lab's demo model or the
    keyword answer)."""
    language = language_of(answer.language)
    lines = [translate(language, MODEL_HEADING), *model_lines(answer.text, language)]
    code_built = [*answer.proposals, *answer.refusals]
    if code_built:
        lines.append("")
        lines.append(translate(language, RECORDED_HEADING))
        lines.extend(f"- {visible(line.text, 600)}" for line in code_built)
    if answer.notes:
        lines += ["", translate(language, NOTES_HEADING)]
        lines.extend(f"- {visible(line.text, 600)}" for line in answer.notes)
    lines += ["", answered_by(answer.answered_by, answer.language)]
    return "\n".join(lines)


def check_question(question: str, language: Language) -> None:
    """Refuse, before anything is sent, a question the assistant would refuse for its size
    (`shared.text.ask_words.question_refusal`; its example a command to copy in `language`).

    Raises:
        CtlError: ``invalid_message`` for an empty (or blank) question or one longer than
            `MAX_QUESTION_CHARS`, saying what to write instead.
    """
    example = printed_command(
        "ask", translate(language, EXAMPLE_QUESTION), language=language, home=home_given()
    )
    refusal = question_refusal(question, example=example, most=MAX_QUESTION_CHARS)
    if refusal is not None:
        raise CtlError(Code.INVALID_MESSAGE, refusal)


async def ask(args: argparse.Namespace) -> int:
    """Send one question; print the answer."""
    settings = load_settings()
    check_question(args.question, language_of(args.language or settings.language))
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
