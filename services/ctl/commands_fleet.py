"""``fleetwatch fleet`` and ``fleetwatch demo``: read the fleet through the guarded read client.

What reads the fleet (the MCP client, the policy loader, the views) is imported when the
command runs, so the other commands start without it."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from services.ctl.output import print_json
from shared.config import Settings, load_settings

if TYPE_CHECKING:
    from shared.epiphan.fleet import FleetSnapshot
    from shared.policy.loader import Policy, ToolPolicy


async def read_snapshot(settings: Settings, tool_policy: ToolPolicy) -> FleetSnapshot:
    """A snapshot of the read sign-in's team.

    Raises:
        SlotError: no read sign-in (`no_sign_in`) or an unsafe slot.
        EpiphanError: the read failed.
    """
    from shared.epiphan.mcp_session import McpConnection
    from shared.epiphan.read_client import EpiphanReadClient
    from shared.epiphan.slots import read_slot

    sign_in = read_slot(settings.read_token_file)
    connection = McpConnection(sign_in.server or settings.epiphan_mcp_url, sign_in.access_token)
    async with EpiphanReadClient(connection, tool_policy.read_tools) as client:
        return await client.snapshot()


def show(snapshot: FleetSnapshot, policy: Policy, as_json: bool) -> None:
    """Print a snapshot as a table or JSON (names escaped either way)."""
    from services.ctl.fleet_view import fleet_json, render_fleet
    from shared.epiphan.attention import thresholds_from_policy

    now = datetime.now(UTC)
    if as_json:
        print_json(fleet_json(snapshot, now, thresholds_from_policy(policy)))
    else:
        print(render_fleet(snapshot, now, thresholds_from_policy(policy)))


async def fleet(args: argparse.Namespace) -> int:
    """Show the fleet through the read sign-in."""
    from shared.policy.loader import load_policies

    settings = load_settings()
    policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    show(await read_snapshot(settings, tool_policy), policy, args.json)
    return 0
