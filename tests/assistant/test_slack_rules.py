"""Asks from Slack, decided (pure): the envelope read, who may ask, the rate limit, the reply's
words and escaping."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.assistant.slack_rules import (
    RateLimit,
    SlackAsk,
    asks_for_change,
    language_of,
    read_envelope,
    refusal,
    reply,
    say,
)
from services.assistant.watch.post import WORD_JOINER
from services.lab.slack_board import envelope_for

OPS = "U0LABOPS"
TEAM = "T0LABDEMO"


def mention(text: str, **extra) -> dict:
    return envelope_for(
        {"user": OPS, "channel": "C0ASK", "text": text, **extra}, 7, "https://hooks.slack.com/x"
    )


def ask(**fields) -> SlackAsk:
    base = {"key": "event:Ev1", "via": "mention", "team": TEAM, "user": OPS, "channel": "C0ASK", "text": "hi"}
    return SlackAsk(**(base | fields))


def test_an_app_mention_is_read_without_the_bots_mention_and_answered_in_its_thread():
    read = read_envelope(mention("what's offline?", event_id="Ev0ONE"))
    assert read == SlackAsk(
        key="event:Ev0ONE",
        via="mention",
        team=TEAM,
        user=OPS,
        channel="C0ASK",
        text="what's offline?",
        thread=read.thread,
    )
    assert read.thread and read.channel_kind == "channel"


def test_a_slash_command_is_keyed_by_its_envelope_and_carries_its_response_url():
    read = read_envelope(mention("/fleetwatch check ENG 105"))
    assert read is not None and read.via == "slash" and read.key == "envelope:lab-envelope-7"
    assert (
        read.text == "check ENG 105"
        and read.response_url == "https://hooks.slack.com/x"
        and read.thread is None
    )


def test_a_direct_message_is_a_dm_ask():
    read = read_envelope(envelope_for({"user": OPS, "channel": "D0OPS", "text": "hola"}, 1, ""))
    assert read is not None and read.via == "dm" and read.channel_kind == "dm"


@pytest.mark.parametrize(
    "event",
    [
        {"type": "message", "channel_type": "im", "bot_id": "B1", "text": "our own reply"},
        {"type": "message", "channel_type": "im", "subtype": "message_changed"},
        {"type": "message", "channel_type": "channel", "text": "chatter"},
        {"type": "reaction_added"},
    ],
)
def test_a_bots_message_an_edit_channel_chatter_or_another_event_is_not_an_ask(event):
    envelope = {"type": "events_api", "envelope_id": "e1", "payload": {"team_id": TEAM, "event": event}}
    assert read_envelope(envelope) is None
    assert read_envelope({"type": "hello"}) is None


def test_the_refusals_come_in_order_workspace_then_member_then_channel_then_size():
    rules = {"team_id": TEAM, "allowed_users": (OPS,), "group_members": None, "ask_channels": ("C0ASK",)}
    assert refusal(ask(), **rules) is None
    assert refusal(ask(team="T0ELSE", user="U0NOBODY"), **rules) == "slack_wrong_team"
    assert refusal(ask(), **(rules | {"team_id": None})) == "slack_wrong_team"
    assert refusal(ask(user="U0NOBODY", channel="C0OTHER"), **rules) == "slack_not_allowed"
    assert refusal(ask(user="<!channel>"), **rules) == "slack_not_allowed"
    assert refusal(ask(channel="C0OTHER", text="x" * 5000), **rules) == "slack_channel_not_served"
    assert refusal(ask(text="x" * 2001), **rules) == "slack_question_too_long"
    assert refusal(ask(channel="D0OPS", via="dm"), **rules) is None


def test_a_user_group_admits_its_members_and_no_list_admits_nobody():
    rules = {"team_id": TEAM, "allowed_users": (), "ask_channels": ("C0ASK",)}
    assert refusal(ask(), group_members=None, **rules) == "slack_not_allowed"
    assert refusal(ask(), group_members=frozenset(), **rules) == "slack_not_allowed"
    assert refusal(ask(), group_members=frozenset({OPS}), **rules) is None


def test_the_rate_limit_is_per_member_slides_and_tells_once():
    limit = RateLimit(per_window=2, window_seconds=60)
    assert [limit.pace(OPS, t) for t in (0, 1, 2, 3)] == ["ok", "ok", "first_over", "over"]
    assert limit.pace("U0OTHER", 2) == "ok"
    assert limit.pace(OPS, 60.5) == "ok" and limit.pace(OPS, 60.7) == "first_over"


def test_a_slack_locale_gives_the_language_and_anything_else_none():
    assert [language_of(x) for x in ("es-LA", "es-ES", "en-US", "fr-FR", None, "")] == [
        "es",
        "es",
        "en",
        None,
        None,
        None,
    ]


def test_a_change_request_is_recognised_as_the_keyword_answer_does():
    assert asks_for_change("reboot ENG 105") and asks_for_change("reinicia ENG 105")
    assert not asks_for_change("what's offline?")


def test_every_word_says_itself_in_spanish_with_its_numbers():
    for key in ("looking", "blank", "no_change", "dm_fallback", "failed", "slack_rate_limited"):
        assert say(key, "es") != say(key, "en")
    assert "5" in say("slack_rate_limited", "en") and "2000" in say("slack_question_too_long", "es")


@given(st.lists(st.text(), max_size=5))
def test_a_reply_holds_no_slack_control_character_and_no_mention(lines):
    text = reply(lines)
    assert "<" not in text and ">" not in text
    assert re.search("&(?!amp;|lt;|gt;)", text) is None or text.endswith("…")
    assert all(text[i + 1 : i + 2] in (WORD_JOINER, "") for i, c in enumerate(text) if c == "@")


def test_a_hostile_line_is_inert():
    text = reply(["<!channel> <@U0LABOPS> <https://evil.example|click> @here & *bold*", "Room\u202e1"])
    assert text.startswith("&lt;!channel&gt; &lt;@\u2060U0LABOPS&gt; &lt;https://evil.example|click&gt;")
    assert "\u202e" not in text and "⟦U+202E⟧" in text and text.count("\n") == 1
