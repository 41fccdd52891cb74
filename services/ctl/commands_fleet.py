"""``fleetwatch fleet``, ``fleetwatch writable`` and ``fleetwatch demo``'s fleet: what the fleet
looks like, through whichever door this user has.

``fleet`` reads the read sign-in's team. Where this user may read the read slot (one account;
root on a server) it reads Epiphan itself, refreshing the sign-in as the services do
(`shared.epiphan.signed_session.SignedReader`: before use when the slot says the token ended,
and once after Epiphan refuses it in-band). Anyone else (an operator on a server, who may not
read the token) asks the assistant over assistant.sock (`GetFleet`): the one process holding
the read sign-in reads it, and only operators may ask it.

``writable`` lists the rooms a change may target now: approval.sock's ``ListWritable``,
which approval_web relays to the executor (the one holder of the sandbox sign-in; operators
never hold it), with the changes the policy lets anyone propose for them, in words
(`services.ctl.admin_words.render_writable`).

Errors: the slot's or the read's `FleetwatchError` (``no_sign_in``, ``epiphan_auth``...), or the
service's refusal as `shared.wire.client.CallError` (``service_unavailable`` when it is not
running); ``main`` prints one line.

What reads the fleet (the MCP client, the policy loader, the views) is imported when the
command runs, so the other commands start without it.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from gettext import gettext as _
from typing import TYPE_CHECKING, Any

from services.ctl import add_language_option
from services.ctl.output import print_json
from shared.config import Settings, load_settings
from shared.epiphan.slots import SlotError, read_slot
from shared.errors import Code, FleetwatchError
from shared.text.catalogue import N_
from shared.text.display import visible
from shared.wire.approval import ApprovalClient
from shared.wire.assistant import AssistantClient, GetFleet
from shared.wire.executor import ListWritable, WritableDevices

if TYPE_CHECKING:
    from shared.epiphan.fleet import FleetSnapshot
    from shared.policy.loader import Policy, ProposeRule, ToolPolicy
    from shared.text.languages import Language

FLEET_TIMEOUT_SECONDS = 120.0
"""Wait for the assistant's fleet read (thousands of devices take seconds)."""
WRITABLE_TIMEOUT_SECONDS = 30.0
"""Wait for the executor's fresh sandbox read behind ``writable``."""


def slot_readable_here(settings: Settings) -> bool:
    """True when this user may read the read slot itself (else the assistant reads it).

    Raises:
        SlotError: ``no_sign_in`` when the slot is missing for a user who could read it.
    """
    try:
        read_slot(settings.read_token_file)
    except SlotError as exc:
        if exc.code is Code.NO_SIGN_IN:
            raise
        return False
    return True


async def read_snapshot(settings: Settings, tool_policy: ToolPolicy) -> FleetSnapshot:
    """A snapshot of the read sign-in's team, read here or by the assistant (module doc).

    Raises:
        FleetwatchError: see the module doc.
    """
    if slot_readable_here(settings):
        from shared.epiphan.signed_session import SignedReader  # the MCP client: only when it reads

        async with SignedReader(
            settings.read_token_file, settings.epiphan_mcp_url, tool_policy.read_tools
        ) as reader:
            return await reader.snapshot()
    client = AssistantClient(settings.assistant_socket, timeout_seconds=FLEET_TIMEOUT_SECONDS)
    return (await client.call(GetFleet())).snapshot


def show(
    snapshot: FleetSnapshot,
    policy: Policy,
    as_json: bool,
    language: Language = "en",
    sandbox: WritableDevices | FleetwatchError | None = None,
) -> None:
    """Print a snapshot as a table in `language`, or JSON (names escaped either way); the JSON
    with the rooms a change may target (`sandbox`, `read_sandbox_rooms`: ``sandbox_rooms``, or
    ``sandbox_rooms_not_read`` with the code and message of why not)."""
    from services.ctl.fleet_view import fleet_json, render_fleet
    from shared.epiphan.attention import thresholds_from_policy

    now = datetime.now(UTC)
    if as_json:
        print_json({**fleet_json(snapshot, now, thresholds_from_policy(policy)), **sandbox_json(sandbox)})
    else:
        print(render_fleet(snapshot, now, thresholds_from_policy(policy), language))


async def fleet(args: argparse.Namespace) -> int:
    """Show the fleet through the read sign-in."""
    from services.ctl.admin_words import view_for
    from shared.policy.loader import load_policies

    settings = load_settings()
    policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    language = view_for(args.language, settings.language, settings.timezone).language
    snapshot = await read_snapshot(settings, tool_policy)
    if args.json:
        show(snapshot, policy, True, language, sandbox=await read_sandbox_rooms(settings))
        return 0
    show(snapshot, policy, False, language)
    print()
    print(await sandbox_rooms(settings, language))
    return 0


async def read_sandbox_rooms(settings: Settings) -> WritableDevices | FleetwatchError:
    """The rooms a change may target, read afresh now (they are the sandbox team's, which the
    read sign-in does not read): approval.sock's ``ListWritable``, which the executor answers;
    the error when it does not answer or refuses (the services stopped, no fence)."""
    client = ApprovalClient(settings.approval_socket, timeout_seconds=WRITABLE_TIMEOUT_SECONDS)
    try:
        return await client.call(ListWritable())
    except FleetwatchError as exc:
        return exc


def sandbox_json(sandbox: WritableDevices | FleetwatchError | None) -> dict[str, Any]:
    """``{"sandbox_rooms": {devices, read_at}}``, or ``{"sandbox_rooms": null,
    "sandbox_rooms_not_read": {"code", "message"}}`` (English, for scripts); nothing when not
    asked (None)."""
    import msgspec

    if sandbox is None:
        return {}
    if isinstance(sandbox, FleetwatchError):
        return {
            "sandbox_rooms": None,
            "sandbox_rooms_not_read": {"code": str(sandbox.code), "message": sandbox.message},
        }
    return {"sandbox_rooms": msgspec.to_builtins(sandbox)}


async def sandbox_rooms(settings: Settings, language: Language) -> str:
    """The rooms a change may target, under the fleet (`read_sandbox_rooms`) in words
    (`services.ctl.admin_words.render_writable`), or a line saying they could not be read and
    why (the code in words, the code last)."""
    from services.ctl.admin_words import code_words, render_writable, view_for

    view = view_for(language, settings.language, settings.timezone)
    read = await read_sandbox_rooms(settings)
    try:
        if not isinstance(read, FleetwatchError):
            tools, observe = proposable(settings)
            return render_writable(view, read, tools, observe=observe)
    except FleetwatchError as exc:
        read = exc
    return view.text(
        N_("The rooms a change may target were not read: %(why)s [%(code)s]"),
        why=code_words(view, str(read.code)) or visible(read.message, 300),
        code=str(read.code),
    )


def proposable(settings: Settings) -> tuple[list[tuple[str, ProposeRule]], bool]:
    """The tools that may be proposed (by name) and whether the policy only watches.

    Raises:
        FleetwatchError: ``policy_invalid`` when the policy files do not load.
    """
    from shared.policy.loader import load_policies

    policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    observe = not policy.may_propose
    return ([] if observe else sorted(tool_policy.propose.items())), observe


async def writable(args: argparse.Namespace) -> int:
    """``fleetwatch writable``: the rooms a change may target now (approval.sock's
    ``ListWritable``, which the executor answers with a fresh read of the sandbox team), and the
    changes that may be proposed for them, in the operator's language and time. ``--json``:
    the executor's answer as it is (UTC) with ``proposable_tools``, the tools' names."""
    import msgspec

    from services.ctl.admin_words import render_writable, view_for

    settings = load_settings()
    client = ApprovalClient(settings.approval_socket, timeout_seconds=WRITABLE_TIMEOUT_SECONDS)
    reply = await client.call(ListWritable())
    tools, observe = proposable(settings)
    if args.json:
        print_json({**msgspec.to_builtins(reply), "proposable_tools": [tool for tool, _ in tools]})
    else:
        view = view_for(args.language, settings.language, settings.timezone)
        print(render_writable(view, reply, tools, observe=observe))
    return 0


def add_commands(sub: Any, epilog: str) -> None:
    """Add ``fleet`` and ``writable`` to ``fleetwatch``'s subparsers `sub`."""
    fleet_parser = sub.add_parser(
        "fleet",
        help=_("show the fleet through the read sign-in (read here, or by the assistant for an operator)"),
        epilog=epilog,
    )
    fleet_parser.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    add_language_option(fleet_parser)
    fleet_parser.set_defaults(run=fleet)
    writable_parser = sub.add_parser(
        "writable",
        help=_(
            "the rooms a change may target now (read afresh by the executor through the sandbox sign-in), "
            "and the changes that may be proposed for them"
        ),
        epilog=epilog,
    )
    writable_parser.add_argument(
        "--json", action="store_true", help=_("print JSON instead of text (times in UTC)")
    )
    add_language_option(writable_parser)
    writable_parser.set_defaults(run=writable)
