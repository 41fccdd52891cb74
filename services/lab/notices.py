"""What the lab's stand-ins for Slack and Microsoft Teams received (the routes: standins.py).

So that a demo shows the watch's digests and notices without any account, the lab serves:

    POST /slack/api/chat.postMessage    Slack's Web API method, as the Slack SDK calls it
    POST /slack/api/chat.update         edit a message it answered with ``ts`` (its ``text``
                                        replaced, ``edited`` set; unknown ``ts``:
                                        ``message_not_found``)
    POST /teams/webhook/<key>           a Teams Workflows webhook ("post to a channel when a
                                        webhook request is received"): an Adaptive Card message
    GET  /_lab/notices                  {"notices": [{destination, text, at, channel?, body}]}
    DELETE /_lab/notices                forget them
    POST /_lab/notices/faults           {"destination": "slack"|"teams", "kind": "error"|"hang",
                                        "count": N}: the next N posts fail (HTTP 500 / Slack
                                        ``{"ok": false}``) or are never answered

Slack: the bearer token must be `LAB_SLACK_BOT` (else ``{"ok": false, "error":
"invalid_auth"}``, HTTP 200, as Slack answers); the body is JSON or a form; ``channel`` and
``text`` (or ``blocks``) are required (``channel_not_found`` / ``no_text``). The answer is
Slack's: ``{"ok": true, "channel", "ts", "message"}``. Teams: the path's key must be
`TEAMS_WEBHOOK_KEY` (else 404); the body must be a message whose first attachment is an Adaptive
Card (else 400); the answer is 202 with an empty body, as Workflows answers.

``text`` of a notice is what a person would read: Slack's ``text`` as sent (still escaped: the
stand-in does not render mrkdwn), or the card's text elements in order, one per line. ``body``
is the request as received, for tests that check the markup. Every attempt is also counted in
``attempts`` (faulted ones too), so a test can see that nothing was retried.

These routes answer loopback peers only, like ``/_lab/*``. Nothing here is a secret: the token
and the key open nothing but the lab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

LAB_SLACK_BOT: Final = "xoxb-lab-demo-not-a-secret"
"""The bot token the lab's Slack stand-in accepts (it opens nothing real; not a secret)."""
TEAMS_WEBHOOK_KEY: Final = "lab-demo-webhook"
"""The last part of the lab's Teams webhook address (it opens nothing real)."""
SLACK_PATH: Final = "/slack/api/"
TEAMS_PATH: Final = "/teams/webhook/"
DESTINATIONS: Final = ("slack", "teams")
FAULT_KINDS: Final = ("error", "hang")
MAX_NOTICES: Final = 1000
"""Notices kept (the oldest are dropped): a lab runs for hours in a demo."""
ADAPTIVE_CARD: Final = "application/vnd.microsoft.card.adaptive"


def slack_base_url(lab_url: str) -> str:
    """The Slack SDK's ``base_url`` for the lab at `lab_url` (``http://127.0.0.1:<port>``)."""
    return f"{lab_url}{SLACK_PATH}"


def teams_webhook_url(lab_url: str) -> str:
    """The lab's Teams webhook address."""
    return f"{lab_url}{TEAMS_PATH}{TEAMS_WEBHOOK_KEY}"


@dataclass
class NoticeBoard:
    """What the stand-ins received, and the faults set on them. `arrived` is set when a notice
    arrives (and replaced by a fresh one): a test in the lab's process waits on it."""

    notices: list[dict[str, Any]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    attempts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DESTINATIONS, 0))
    faults: dict[str, tuple[str, int]] = field(default_factory=dict)
    sent: int = 0
    """Slack messages answered so far (each one's ``ts`` counts from it)."""

    def clear(self) -> None:
        self.notices.clear()
        self.faults.clear()
        self.attempts = dict.fromkeys(DESTINATIONS, 0)

    def take_fault(self, destination: str) -> str | None:
        """The fault kind the next post to `destination` meets, or None (counts it down)."""
        kind, count = self.faults.get(destination, ("", 0))
        if count <= 0:
            return None
        self.faults[destination] = (kind, count - 1)
        return kind

    def add(
        self, destination: str, text: str, at: str, body: Any, channel: str | None = None
    ) -> dict[str, Any]:
        """Keep one notice (a Slack one gets its ``ts``); the entry kept."""
        entry: dict[str, Any] = {"destination": destination, "text": text, "at": at, "body": body}
        if channel is not None:
            entry["channel"] = channel
        if destination == "slack":
            self.sent += 1
            entry["ts"] = f"{self.sent}.000100"
        self.notices.append(entry)
        del self.notices[:-MAX_NOTICES]
        self.arrived.set()
        self.arrived = asyncio.Event()
        return entry

    def edit(self, ts: str, text: str, at: str, body: Any) -> bool:
        """``chat.update``: the Slack notice `ts` now reads `text` (False: no such notice)."""
        entry = next((n for n in self.notices if n.get("ts") == ts), None)
        if entry is None:
            return False
        entry.update(text=text, edited=at, edit_body=body)
        self.arrived.set()
        self.arrived = asyncio.Event()
        return True


def card_text(card: Mapping[str, Any]) -> str:
    """The text a person reads on an Adaptive Card: each TextBlock's and TextRun's text, each
    fact as ``title: value``, in order, one element per line."""
    return "\n".join(_texts(card.get("body", [])))


def _texts(elements: Any) -> Iterator[str]:
    if not isinstance(elements, list):
        return
    for element in elements:
        if isinstance(element, str):
            yield element
            continue
        if not isinstance(element, Mapping):
            continue
        kind = element.get("type")
        if kind == "TextBlock" and isinstance(element.get("text"), str):
            yield element["text"]
        elif kind == "RichTextBlock":
            yield "".join(
                run if isinstance(run, str) else str(run.get("text", ""))
                for run in element.get("inlines", [])
                if isinstance(run, str | Mapping)
            )
        elif kind == "FactSet":
            for fact in element.get("facts", []):
                if isinstance(fact, Mapping):
                    yield f"{fact.get('title', '')}: {fact.get('value', '')}"
        for key in ("items", "columns"):
            yield from _texts(element.get(key))
