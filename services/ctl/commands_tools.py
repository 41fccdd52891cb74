"""``fleetwatch tools diff``: Epiphan's tool list compared with the reviewed policy.

Lists the server's tools through the read sign-in (the guarded read client's `tool_report`,
`shared.policy.definitions`) and prints every tool whose definition is not the reviewed one:
a proposable tool (neither proposed nor run until a person reviews it, ``tool_changed``), a
read tool whose reviewed definition the policy records (not called), a read tool the server
no longer offers, a new tool (reported, never called). For each changed one it prints what
differs, the server's description (made visible, capped) and input schema with its SHA-256,
and the ``reviewed_definitions:`` lines a person puts in ``tool_policy.yaml`` once they have
reviewed it. Exit 0 when everything is as reviewed, 1 when something differs, 2 when the list
could not be had. `fleetwatch doctor --live` runs the same comparison (`tool_definitions`).
"""

from __future__ import annotations

import argparse
import json
from gettext import gettext as _
from typing import TYPE_CHECKING, Any, Final

from services.ctl import CtlError, add_language_option, error_words
from services.ctl.doctor import difference_line
from shared.config import Settings, load_settings
from shared.epiphan.signed_session import SignedConnection
from shared.errors import Code, FleetwatchError
from shared.policy.definitions import ToolDifference, ToolReport, schema_fingerprint
from shared.text.catalogue import N_, Words, placeholder, translate
from shared.text.display import safe_json, visible
from shared.text.languages import Language

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy

TOOLS_SECONDS: Final = 30.0
"""Bound on listing the server's tools (seconds)."""


async def tool_definitions(settings: Settings, tool_policy: ToolPolicy) -> ToolReport:
    """The server's tool list, through the read sign-in of this user's slot, compared with
    `tool_policy` (`EpiphanReadClient.tool_report`).

    Raises:
        FleetwatchError: the slot cannot be read (``no_sign_in`` and kin), the list could not
            be had (``epiphan_*``).
    """
    async with SignedConnection(
        settings.read_token_file, settings.epiphan_mcp_url, timeout_seconds=TOOLS_SECONDS
    ) as session:
        return await session.read(
            tool_policy.read_tools, lambda client: client.tool_report(tool_policy, fresh=True)
        )


def reviewed_lines(difference: ToolDifference) -> list[str]:
    """The ``reviewed_definitions:`` entry of the server's definition, for a person to put in
    ``tool_policy.yaml`` after reviewing it (none for a tool not offered)."""
    served = difference.served
    if served is None:
        return []
    return [
        f"  {difference.tool}:",
        f"    description: {json.dumps(str(served.get('description') or ''), ensure_ascii=False)}",
        f"    input_schema_sha256: {schema_fingerprint(served.get('input_schema'))}",
    ]


def render(report: ToolReport, language: Language) -> str:
    """The difference in words, in `language` (the server's text made visible)."""

    def say(msgid: str, **params: object) -> str:
        text = translate(language, msgid)
        return text % {k: str(v) for k, v in params.items()} if params else text

    if report.clean:
        return say(N_("Every tool Epiphan offers is as reviewed in the policy."))
    lines: list[str] = []
    for difference in report.differences:
        lines.append(difference_line(difference, language))
        served = difference.served
        if served is None:
            continue
        description = visible(str(served.get("description") or ""), 300)
        lines.append(say(N_("  the server's description: %(text)s"), text=description))
        schema: Any = served.get("input_schema")
        lines.append(
            say(
                N_("  the server's input schema (SHA-256 %(sha)s): %(schema)s"),
                sha=schema_fingerprint(schema),
                schema=safe_json(schema),
            )
        )
        if difference.kind != "new":
            lines.append(say(N_("  once reviewed, in tool_policy.yaml under reviewed_definitions:")))
            lines += [f"  {line}" for line in reviewed_lines(difference)]
    return "\n".join(lines)


async def tools_diff_command(args: argparse.Namespace) -> int:
    from shared.policy.loader import load_policies  # jsonschema and yaml: only when it runs

    settings = load_settings()
    language: Language = args.language or settings.language
    try:
        _policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
        report = await tool_definitions(settings, tool_policy)
    except FleetwatchError as exc:
        raise CtlError(
            exc.code if exc.code is not Code.INTERNAL_ERROR else Code.EPIPHAN_UNREACHABLE,
            Words.of(N_("the tool list could not be compared: %(why)s"), why=error_words(exc)),
        ) from exc
    print(render(report, language))
    return 0 if report.clean else 1


def add_commands(sub: Any, epilog: str) -> None:
    """Add ``tools diff`` to the command tree."""
    tools = sub.add_parser(
        "tools",
        help=_("Epiphan's tool list against the reviewed policy"),
        epilog=epilog,
    )
    under = tools.add_subparsers(dest="tools_command", required=True, metavar=placeholder("ACTION"))
    diff = under.add_parser(
        "diff",
        help=_("print every tool whose definition differs from the reviewed one, and the lines to review"),
        epilog=epilog,
    )
    add_language_option(diff)
    diff.set_defaults(run=tools_diff_command)
