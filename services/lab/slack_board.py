"""The state of the lab's Slack Socket Mode stand-in (its routes and websocket: slack_socket.py).

A lab workspace (`LAB_SLACK_TEAM`) with three members, one user group and one ask channel,
invented (no real IDs): `LAB_SLACK_USERS` (member ID -> Slack locale), `LAB_SLACK_USERGROUP`
(its members), `LAB_ASK_CHANNEL`. What a test or a demo asks becomes an envelope as Slack
sends it (`envelope_for`: a slash command, an app mention or a direct message), sent on the
newest open connection; its ack is awaited at most `ACK_SECONDS` and recorded.

Nothing here is a secret: `LAB_SLACK_APP` opens nothing but the lab.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

LAB_SLACK_APP: Final = "xapp-lab-demo-not-a-secret"
"""The app-level token the stand-in's ``apps.connections.open`` accepts (not a secret)."""
LAB_SLACK_APP_WITHOUT_SCOPE: Final = "xapp-lab-without-connections-write"
"""An app-level token the stand-in knows but refuses with ``missing_scope`` (``connections:write``)."""
LAB_SLACK_TEAM: Final = "T0LABDEMO"
"""The lab workspace's team ID."""
LAB_SLACK_BOT_USER: Final = "U0LABBOT"
"""The app's own bot user (what an app mention names)."""
LAB_SLACK_USERS: Final[Mapping[str, str]] = {"U0LABOPS": "en-US", "U0LABAV": "es-LA", "U0LABGUEST": "en-GB"}
"""The lab workspace's members and their Slack locales (``users.info``)."""
LAB_SLACK_USERGROUP: Final = "S0LABAV"
LAB_SLACK_USERGROUP_MEMBERS: Final = ("U0LABAV",)
LAB_ASK_CHANNEL: Final = "C0LABASK"
"""The lab's ask channel (the demo answers mentions there)."""
ACK_SECONDS: Final = 3.0
"""How long Slack waits for an envelope's ack."""
KINDS: Final = ("slash", "mention", "dm")


@dataclass
class Connection:
    """One open Socket Mode websocket (`socket` is the server side's; `stalled`: it gets nothing
    more from the lab, not even a pong)."""

    number: int
    socket: Any
    stalled: bool = False


@dataclass
class SlackAskBoard:
    """The stand-in's state (see the module docstring). `changed` is set (and replaced) when a
    connection opens or closes, an envelope is acked: tests in the lab's process wait on it."""

    connections: list[Connection] = field(default_factory=list)
    opened: int = 0
    envelopes: list[dict[str, Any]] = field(default_factory=list)
    acks: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    usergroup_fails: bool = False
    ack_seconds: float = ACK_SECONDS
    """How long an envelope waits for its ack (a test of a missing ack shortens it)."""
    socket_url: str = ""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def clear(self) -> None:
        """Forget the envelopes sent and the faults set (open connections stay open)."""
        self.envelopes.clear()
        self.usergroup_fails = False

    def next_number(self) -> int:
        return next(self._seq)

    def signal(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def live(self) -> Connection | None:
        """The newest open connection that is not stalled, or None."""
        open_ = [c for c in self.connections if not c.stalled and not getattr(c.socket, "closed", False)]
        return open_[-1] if open_ else None

    def view(self) -> dict[str, Any]:
        """``GET /_lab/slack``: the connections, how many ever opened, the envelopes sent."""
        return {
            "opened": self.opened,
            "connections": [{"number": c.number, "stalled": c.stalled} for c in self.connections],
            "envelopes": list(self.envelopes),
            "socket_url": self.socket_url,
        }


def envelope_for(ask: Mapping[str, Any], number: int, response_url: str) -> dict[str, Any]:
    """The envelope Slack would send for `ask` (``{"user", "channel", "text", "team"?, "kind"?,
    "event_id"?}``): a slash command when ``kind`` is ``slash`` or the text starts with
    ``/fleetwatch``; a direct message when the channel is a DM (``D…``); else an app mention
    (the bot named first, as Slack writes it). `number` makes the envelope's and event's IDs."""
    user, channel, text = str(ask["user"]), str(ask["channel"]), str(ask["text"])
    team = str(ask.get("team") or LAB_SLACK_TEAM)
    envelope_id = f"lab-envelope-{number}"
    kind = ask.get("kind") or (
        "slash" if text.startswith("/fleetwatch") else "dm" if channel.startswith("D") else "mention"
    )
    if kind == "slash":
        return {
            "type": "slash_commands",
            "envelope_id": envelope_id,
            "accepts_response_payload": True,
            "payload": {
                "token": "lab-verification-token",
                "team_id": team,
                "team_domain": "lab",
                "channel_id": channel,
                "channel_name": "directmessage" if channel.startswith("D") else "ask",
                "user_id": user,
                "user_name": user.lower(),
                "command": "/fleetwatch",
                "text": text.removeprefix("/fleetwatch").strip(),
                "api_app_id": "A0LABDEMO",
                "response_url": response_url,
                "trigger_id": f"lab-trigger-{number}",
            },
        }
    ts = f"{1789000000 + number}.000{number:03d}"
    event: dict[str, Any] = {"user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if kind == "dm":
        event |= {"type": "message", "channel_type": "im"}
    else:
        mention = f"<@{LAB_SLACK_BOT_USER}>"
        event |= {"type": "app_mention", "text": text if mention in text else f"{mention} {text}"}
    return {
        "type": "events_api",
        "envelope_id": envelope_id,
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "retry_reason": "",
        "payload": {
            "token": "lab-verification-token",
            "team_id": team,
            "api_app_id": "A0LABDEMO",
            "event": event,
            "type": "event_callback",
            "event_id": str(ask.get("event_id") or f"Ev0LAB{number:06d}"),
            "event_time": 1789000000 + number,
        },
    }
