"""Help for bad input on the command line. Pure: no I/O.

Every guess is `shared.spelling.closest`'s (the known word nearest to a misspelt one): a
command, an action, an option, a choice, a tool to propose, an argument's name, an enum value.

- `Parser`: argparse's parser with what Python 3.14 calls ``suggest_on_error``, written out
  for 3.11 (this project's Python): an invalid choice (a command, an action, ``--language``)
  names the closest one, and an unknown option the closest option of the commands given. The
  words are argparse's own through gettext (the catalogue's domain while
  `services.ctl.main.said_in` holds), so they speak the operator's language.
- `shape_problem`: a ``propose --arg`` value against the shape its reviewed schema gives it
  (a JSON list, text, one of an enum's values), said with the line to write instead.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from gettext import gettext as _
from typing import Any, NoReturn

from shared.spelling import closest
from shared.text.catalogue import N_, Words
from shared.text.display import visible


class Parser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` that guesses what a person meant. Its sub-commands' parsers
    are `Parser` too (argparse makes them of the parent's class).

    Attributes:
        option_names: every option string added to this parser (``--json``, ``-n``...).
        commands: this parser's sub-commands (`add_subparsers`), or None.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.option_names: list[str] = []  # before argparse adds --help
        self.commands: argparse._SubParsersAction[Parser] | None = None
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.option_names += action.option_strings
        return action

    def add_subparsers(self, **kwargs: Any) -> Any:
        self.commands = super().add_subparsers(**kwargs)
        return self.commands

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # Python 3.14's own check with suggest_on_error, and its words.
        choices = action.choices
        if choices is None or value in choices:
            return
        args = {"value": value, "choices": ", ".join(map(repr, choices))}
        near = closest(value, map(str, choices)) if isinstance(value, str) else None
        if near is None:
            raise argparse.ArgumentError(
                action, _("invalid choice: %(value)r (choose from %(choices)s)") % args
            )
        args["closest"] = near
        raise argparse.ArgumentError(
            action,
            _("invalid choice: %(value)r, maybe you meant %(closest)r? (choose from %(choices)s)") % args,
        )

    def chain(self, namespace: argparse.Namespace) -> list[Parser]:
        """This parser and the sub-commands' parsers `namespace` went through, in order."""
        out: list[Parser] = [self]
        commands = self.commands
        chosen = getattr(namespace, commands.dest, None) if commands is not None else None
        if commands is not None and chosen in commands.choices:
            out += commands.choices[chosen].chain(namespace)
        return out

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.unrecognized(parsed, extras)
        return parsed

    def unrecognized(self, parsed: argparse.Namespace, extras: Sequence[str]) -> NoReturn:
        """argparse's complaint about `extras`, with the closest option of the commands given
        for each that looks like an option."""
        message = _("unrecognized arguments: %s") % " ".join(extras)
        options = [name for parser in self.chain(parsed) for name in parser.option_names]
        guesses = [closest(word.split("=", 1)[0], options) for word in extras if word.startswith("-")]
        near = [g for g in guesses if g]
        if near:
            message = _("%(message)s; maybe you meant %(closest)s?") % {
                "message": message,
                "closest": ", ".join(dict.fromkeys(near)),
            }
        self.error(message)


# --- propose arguments against the reviewed schema -------------------------------------------------


def shape_problem(key: str, value: Any, text: str, properties: Mapping[str, Any]) -> Words | None:
    """What is wrong with ``--arg key=text`` (`value`: how the command read `text`) for a tool
    whose reviewed schema has `properties`: an unknown name (with the closest one), a list
    given a single value (with the list to write), text given a list or a map, a value off an
    enum (with the closest one). None when the shape fits (the intake still checks the rest:
    patterns, counts)."""
    spec = properties.get(key)
    shown = visible(key, 60)
    if not isinstance(spec, Mapping):
        near = closest(key, properties)
        names = ", ".join(properties)
        if near is not None:
            return Words.of(
                N_(
                    "--arg %(key)s: this tool has no such argument; did you mean %(closest)s? (it takes %(names)s)"
                ),
                key=shown,
                closest=near,
                names=names,
            )
        return Words.of(
            N_("--arg %(key)s: this tool has no such argument (it takes %(names)s)"), key=shown, names=names
        )
    kind = spec.get("type")
    if kind == "array" and not isinstance(value, list):
        item = value if isinstance(value, str) else text
        return Words.of(
            N_("--arg %(key)s needs a JSON list, even for one value: %(line)s"),
            key=shown,
            line=f"--arg {shown}='{visible(json.dumps([item], ensure_ascii=False), 200)}'",
        )
    enum = spec.get("enum")
    if enum and value not in enum:
        choices = ", ".join(map(str, enum))
        near = closest(value, map(str, enum)) if isinstance(value, str) else None
        if near is not None:
            return Words.of(
                N_("--arg %(key)s: did you mean %(closest)s? (one of: %(choices)s)"),
                key=shown,
                closest=near,
                choices=choices,
            )
        return Words.of(N_("--arg %(key)s must be one of: %(choices)s"), key=shown, choices=choices)
    if kind == "string" and text.lstrip()[:1] in ("[", "{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
        one = parsed[0] if isinstance(parsed, list) and len(parsed) == 1 else None
        return Words.of(
            N_("--arg %(key)s needs text, not a JSON list or map: %(line)s"),
            key=shown,
            line=f"--arg {shown}={visible(str(one), 200) if isinstance(one, str | int) else 'VALUE'}",
        )
    return None
