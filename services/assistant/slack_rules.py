"""Asks from Slack, decided: what an envelope asks, who may ask, how often, and the reply's
words and form. Pure (the clock is passed in); the listener that does the I/O is `slack`.

- `read_envelope`: a Socket Mode envelope as a `SlackAsk` (a ``/fleetwatch`` slash command, an
  app mention, a direct message), or None for anything else (``hello``, a bot's own message, an
  edit, another event). The bot's mention is taken out of the text.
- `refusal`: why an ask is not answered, as a code: another workspace than the configured one
  (``slack_wrong_team``: no reply at all, the bot cannot speak there), a member not on the
  allowlist nor in the user group (``slack_not_allowed``; a failed group lookup admits nobody,
  an empty allowlist answers nobody), a channel that is neither a DM nor an ask channel
  (``slack_channel_not_served``), a question over the cap (``slack_question_too_long``).
- `RateLimit`: at most `ASKS_PER_WINDOW` asks per member in `WINDOW_SECONDS`, refused ones
  too (``slack_rate_limited``; told once, then nothing more is said until the window has room).
- `reply`: the text a person reads, each line made visible (`shared.text.display.visible`) and
  Slack-escaped (`services.assistant.watch.post.slack_escape`: ``&``, ``<``, ``>``, no ``@``
  mention), to go with `SLACK_PLAIN` (no markup parsing, no link names, no unfurling).
- The words (`say`): "Looking…", the polite refusals, where to ask for a change (never from
  Slack), the DM fallback; English and Spanish from the one catalogue.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from services.assistant.watch.post import slack_escape
from shared.errors import Code
from shared.text import languages
from shared.text.catalogue import N_, translate
from shared.text.display import visible
from shared.text.questions import Topic, understand
from shared.wire.formats import MAX_QUESTION_CHARS, SLACK_MEMBER_ID

ASKS_PER_WINDOW: Final = 5
"""Most asks one member may make in `WINDOW_SECONDS`."""
WINDOW_SECONDS: Final = 60.0
MAX_SLACK_QUESTION_CHARS: Final = MAX_QUESTION_CHARS
"""Longest question taken from Slack (the same cap as ``fleetwatch ask``)."""
MAX_REPLY_CHARS: Final = 3900
"""Longest reply text (Slack advises under 4,000 characters; the rest is cut with ``…``)."""
_MEMBER: Final = re.compile(SLACK_MEMBER_ID)
_CHANNEL: Final = re.compile(r"^[CDG][A-Z0-9]{2,30}\Z")
_MENTION: Final = re.compile(r"<@[A-Z0-9]{2,30}(?:\|[^>]*)?>")

Via = Literal["slash", "mention", "dm"]


@dataclass(frozen=True, slots=True)
class SlackAsk:
    """One ask from Slack. ``key``: what makes it once (an event's ``event_id``, a slash
    command's ``envelope_id``); ``thread``: the ``ts`` to answer under (None for a slash
    command, answered ephemerally through ``response_url``)."""

    key: str
    via: Via
    team: str
    user: str
    channel: str
    text: str
    thread: str | None = None
    response_url: str | None = None

    @property
    def channel_kind(self) -> Literal["dm", "channel"]:
        """``dm`` for a direct message with the app, else ``channel``."""
        return "dm" if self.via == "dm" or self.channel.startswith("D") else "channel"

    @property
    def member(self) -> str | None:
        """The asker's member ID when it has a member ID's form (else None: never recorded)."""
        return self.user if _MEMBER.match(self.user) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def read_envelope(envelope: Mapping[str, Any]) -> SlackAsk | None:
    """The ask an envelope carries, or None (see the module docstring)."""
    payload = envelope.get("payload")
    envelope_id = _text(envelope.get("envelope_id"))
    if not isinstance(payload, Mapping) or not envelope_id:
        return None
    team = _text(payload.get("team_id"))
    if envelope.get("type") == "slash_commands":
        return SlackAsk(
            key=f"envelope:{envelope_id}",
            via="slash",
            team=team,
            user=_text(payload.get("user_id")),
            channel=_text(payload.get("channel_id")),
            text=_text(payload.get("text")).strip(),
            response_url=_text(payload.get("response_url")) or None,
        )
    event = payload.get("event")
    if envelope.get("type") != "events_api" or not isinstance(event, Mapping):
        return None
    if event.get("bot_id") or event.get("subtype"):
        return None  # the app's own replies, other bots, edits and joins are not asks
    kind = event.get("type")
    if kind == "app_mention":
        via: Via = "mention"
    elif kind == "message" and event.get("channel_type") == "im":
        via = "dm"
    else:
        return None
    event_id = _text(payload.get("event_id"))
    return SlackAsk(
        key=f"event:{event_id}" if event_id else f"envelope:{envelope_id}",
        via=via,
        team=team,
        user=_text(event.get("user")),
        channel=_text(event.get("channel")),
        text=_MENTION.sub("", _text(event.get("text"))).strip(),
        thread=_text(event.get("thread_ts")) or _text(event.get("ts")) or None,
    )


def refusal(
    ask: SlackAsk,
    *,
    team_id: str | None,
    allowed_users: Iterable[str],
    group_members: frozenset[str] | None,
    ask_channels: Iterable[str],
    max_chars: int = MAX_SLACK_QUESTION_CHARS,
) -> Code | None:
    """Why `ask` is not answered, or None (see the module docstring). `group_members`: the
    user group's members, or None when there is no group or its lookup failed."""
    if team_id is None or ask.team != team_id:
        return Code.SLACK_WRONG_TEAM
    if ask.member is None or (
        ask.member not in set(allowed_users) and ask.member not in (group_members or ())
    ):
        return Code.SLACK_NOT_ALLOWED
    if not _CHANNEL.match(ask.channel) or (
        ask.channel_kind == "channel" and ask.channel not in set(ask_channels)
    ):
        return Code.SLACK_CHANNEL_NOT_SERVED
    if len(ask.text) > max_chars:
        return Code.SLACK_QUESTION_TOO_LONG
    return None


Pace = Literal["ok", "first_over", "over"]


class RateLimit:
    """At most `per_window` asks per member in any `window_seconds` (a sliding window; `now` is
    monotonic seconds). Every ask counts, answered or refused, so a stranger cannot make the app
    talk without end either. Over the limit, the member is told once (``first_over``); after
    that, until the window has room again, nothing is said (``over``)."""

    def __init__(self, per_window: int = ASKS_PER_WINDOW, window_seconds: float = WINDOW_SECONDS) -> None:
        self._per_window = per_window
        self._window = window_seconds
        self._asks: defaultdict[str, deque[float]] = defaultdict(deque)
        self._told: dict[str, float] = {}

    def pace(self, member: str, now: float) -> Pace:
        """Whether `member` may ask now (``ok``: counted), or is over the limit (see above)."""
        asks = self._asks[member]
        while asks and asks[0] <= now - self._window:
            asks.popleft()
        if len(asks) < self._per_window:
            asks.append(now)
            self._told.pop(member, None)
            return "ok"
        if member in self._told:
            return "over"
        self._told[member] = now
        return "first_over"


def language_of(locale: str | None) -> str | None:
    """``en`` or ``es`` from a Slack locale (``es-LA``, ``en-US``), else None."""
    head = (locale or "").split("-")[0].lower()
    return head if head in ("en", "es") else None


def asks_for_change(question: str) -> bool:
    """True when the question asks for a change (the same reading as the keyword answer's)."""
    return understand(question).topic is Topic.CHANGE


_WORDS: Final[Mapping[str, str]] = {
    "looking": N_("Looking…"),
    "blank": N_("Ask me about the rooms, for example: what is offline?"),
    "no_change": N_(
        "Changes are never proposed from Slack, and nothing was proposed. To ask for one, use the "
        "ask page or the command fleetwatch ask on the Fleetwatch machine; a person approves it "
        "on the approval page."
    ),
    "dm_fallback": N_(
        "I could not post in that channel (the app is not a member of it), so here is the answer "
        "in a direct message."
    ),
    "failed": N_("I could not answer just now; please try again, or use the ask page."),
    Code.SLACK_NOT_ALLOWED: N_(
        "Sorry, I only answer the people on this Fleetwatch's Slack list; an AV operator can add you."
    ),
    Code.SLACK_CHANNEL_NOT_SERVED: N_(
        "I answer in a direct message, or in the channels set up for questions; please ask me there."
    ),
    Code.SLACK_RATE_LIMITED: N_(
        "You have asked %(count)s questions in the last minute; please wait a moment and ask again."
    ),
    Code.SLACK_QUESTION_TOO_LONG: N_(
        "That question is longer than %(limit)s characters; please ask a shorter one."
    ),
}


def say(key: str, language: str) -> str:
    """One of the Slack words (`_WORDS`: a key or a refusal's code) in `language`, its numbers
    filled in."""
    return translate(languages.language_of(language), _WORDS[key]) % {
        "count": ASKS_PER_WINDOW,
        "limit": MAX_SLACK_QUESTION_CHARS,
    }


def reply(lines: Iterable[str]) -> str:
    """The reply's text: each line made visible and Slack-escaped, cut to `MAX_REPLY_CHARS`."""
    parts = (part for line in lines for part in (line.splitlines() or [""]))
    text = "\n".join(slack_escape(visible(part, MAX_REPLY_CHARS)) for part in parts)
    return text if len(text) <= MAX_REPLY_CHARS else text[: MAX_REPLY_CHARS - 1] + "…"
