"""A post (digest, readiness, notice, sweep) and its form for each destination. Pure.

A `Post` is a title and sections of lines. The title and the section headings are the watch's
own words; a **line may hold fleet text** (room, channel and event names, an operator's note),
already passed through `shared.text.display.visible` (hidden and bidi characters shown as
``⟦U+202E⟧``, capped), so every line is treated as untrusted as a whole:

- `plain_text`: the console (the log) and ``fleetwatch digest``.
- `slack_message`: Slack's ``chat.postMessage`` arguments. Slack reads ``&``, ``<`` and ``>``
  as control characters (``<!channel>``, ``<@U123>``, ``<https://x|a link>``), so every line is
  escaped to ``&amp;``/``&lt;``/``&gt;`` (`slack_escape`), and a word joiner follows every ``@``
  so no ``@here``/``@channel`` is ever read as a mention; the message goes with ``mrkdwn``
  off, ``parse=none``, ``link_names`` off and no unfurling: nothing in it is formatting, a
  mention or a link Slack made.
- `teams_message`: a Teams Workflows message holding one Adaptive Card. The title and
  headings (ours) are TextBlocks; **every line is a RichTextBlock of one TextRun**, where Adaptive
  Cards render no Markdown (no bold, no link, no list), and ``{{`` is broken (`teams_escape`) so
  no ``{{DATE(...)}}`` function runs. The card has no actions, no ``selectAction`` and no
  ``msteams.entities``: no button, no link that does anything, no mention.

No form carries approval power: a notice names the approval page's address as text, nothing
else (no token, no proposal-specific link).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

MAX_LINES: Final = 40
"""Most lines one section shows; the rest are counted in a last line."""
WORD_JOINER: Final = "\u2060"
ADAPTIVE_CARD: Final = "application/vnd.microsoft.card.adaptive"


@dataclass(frozen=True, slots=True)
class Section:
    """A heading (the watch's own words, or None) and its lines (may hold fleet text)."""

    heading: str | None
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Post:
    """One message. ``kind``: ``digest``, ``readiness``, ``notice``, ``reminder``,
    ``notice_closed``, ``sweep``, ``read_failed``, ``read_partial``, ``approval_down`` or
    ``approval_back``; ``console_only``: the log only (a failed or partial read, reported
    once). ``ref``: what the post is about (a notice's proposal ID); ``follows``: the post is
    one line that follows the earlier post of the same ``ref`` (Slack edits that message with
    ``chat.update``; elsewhere it is a post of its own)."""

    kind: str
    title: str
    sections: tuple[Section, ...] = ()
    console_only: bool = False
    ref: str | None = None
    follows: bool = False

    def lines(self) -> list[str]:
        """Every line in order: the title, then each section's heading and lines."""
        out = [self.title]
        for section in self.sections:
            if section.heading:
                out.append(section.heading)
            out.extend(section.lines)
        return out


def capped(lines: Iterable[str], more: str, limit: int = MAX_LINES) -> tuple[str, ...]:
    """At most `limit` lines; beyond that the first ``limit - 1`` and `more` formatted with
    ``n``, the count left out (e.g. ``"…and %(n)s more."``)."""
    items = list(lines)
    if len(items) <= limit:
        return tuple(items)
    return (*items[: limit - 1], more % {"n": len(items) - limit + 1})


def plain_text(post: Post) -> str:
    """The post as plain text, one line per line."""
    return "\n".join(post.lines())


def slack_escape(text: str) -> str:
    """`text` safe in a Slack message: ``&``, ``<`` and ``>`` as entities, and a word joiner
    after each ``@`` (so ``@here`` stays a word, never a mention)."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("@", "@" + WORD_JOINER)


SLACK_PLAIN: Final = {
    "mrkdwn": False,
    "parse": "none",
    "link_names": False,
    "unfurl_links": False,
    "unfurl_media": False,
}
"""The ``chat.postMessage`` options under which a text is plain: no formatting, no mention, no
link Slack made, no unfurling (with the text escaped by `slack_escape`)."""


def slack_message(post: Post, channel: str) -> dict[str, Any]:
    """``chat.postMessage`` arguments for `post` (see the module docstring)."""
    return {"channel": channel, "text": "\n".join(slack_escape(line) for line in post.lines()), **SLACK_PLAIN}


def teams_escape(text: str) -> str:
    """`text` safe in an Adaptive Card TextRun: ``{{`` broken so no date/time function runs
    (a TextRun renders no Markdown)."""
    return text.replace("{{", "{ {").replace("}}", "} }")


def _run(text: str) -> dict[str, Any]:
    return {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": teams_escape(text)}]}


def teams_message(post: Post) -> dict[str, Any]:
    """A Teams Workflows webhook message holding `post` as one Adaptive Card (see the module
    docstring)."""
    body: list[dict[str, Any]] = [
        {"type": "TextBlock", "text": teams_escape(post.title), "weight": "Bolder", "wrap": True}
    ]
    for section in post.sections:
        if section.heading:
            body.append(
                {"type": "TextBlock", "text": teams_escape(section.heading), "weight": "Bolder", "wrap": True}
            )
        body.extend(_run(line) for line in section.lines)
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    }
    return {
        "type": "message",
        "attachments": [{"contentType": ADAPTIVE_CARD, "contentUrl": None, "content": card}],
    }
