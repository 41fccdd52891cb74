"""``fleetwatch fleet``, ``fleetwatch writable`` and ``fleetwatch demo``'s fleet: what the fleet
looks like, through whichever door this user has.

``fleet`` reads the read sign-in's team. Where this user may read the read slot (one account;
root on a server) it reads Epiphan itself, refreshing the sign-in as the services do
(`shared.epiphan.signed_session.SignedReader`: before use when the slot says the token ended,
and once after Epiphan refuses it in-band). Anyone else (an operator on a server, who may not
read the token) asks the assistant over assistant.sock (`GetFleet`): the one process holding
the read sign-in reads it, and only operators may ask it.

``writable`` lists the devices a change may target now: approval.sock's ``ListWritable``,
which approval_web relays to the executor (the one holder of the sandbox sign-in; operators
never hold it).

Errors: the slot's or the read's `FleetwatchError` (``no_sign_in``, ``epiphan_auth``...), or the
service's refusal as `shared.wire.client.CallError` (``service_unavailable`` when it is not
running); ``main`` prints one line.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from services.ctl.fleet_view import fleet_json, render_fleet, render_writable
from services.ctl.output import print_json
from shared.config import Settings, load_settings
from shared.epiphan.attention import thresholds_from_policy
from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.signed_session import SignedReader
from shared.epiphan.slots import SlotError, read_slot
from shared.errors import Code
from shared.policy.loader import Policy, ToolPolicy, load_policies
from shared.wire.approval import ApprovalClient
from shared.wire.assistant import AssistantClient

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
        async with SignedReader(
            settings.read_token_file, settings.epiphan_mcp_url, tool_policy.read_tools
        ) as reader:
            return await reader.snapshot()
    return await AssistantClient(settings.assistant_socket, timeout_seconds=FLEET_TIMEOUT_SECONDS).fleet()


def show(snapshot: FleetSnapshot, policy: Policy, as_json: bool) -> None:
    """Print a snapshot as a table or JSON (names escaped either way)."""
    now = datetime.now(UTC)
    if as_json:
        print_json(fleet_json(snapshot, now, thresholds_from_policy(policy)))
    else:
        print(render_fleet(snapshot, now, thresholds_from_policy(policy)))


async def fleet(args: argparse.Namespace) -> int:
    """Show the fleet through the read sign-in."""
    settings = load_settings()
    policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    show(await read_snapshot(settings, tool_policy), policy, args.json)
    return 0


async def writable(args: argparse.Namespace) -> int:
    """``fleetwatch writable``: the devices a change may target now."""
    settings = load_settings()
    client = ApprovalClient(settings.approval_socket, timeout_seconds=WRITABLE_TIMEOUT_SECONDS)
    reply = await client.list_writable()
    if args.json:
        print_json(reply)
    else:
        print(render_writable(reply))
    return 0
