"""A post's form for each destination: hostile names stay text in Slack and in Teams."""

from __future__ import annotations

import json
import re

import pytest

from services.assistant.watch.post import (
    WORD_JOINER,
    Post,
    Section,
    capped,
    plain_text,
    slack_escape,
    slack_message,
    teams_message,
)
from shared.text.display import visible
from tests.corpus.hostile_names import BY_KIND, HOSTILE_NAMES

SLACK_CONTROL = re.compile(r"<[!@#]|<https?:|<mailto:")
"""What Slack reads as a mention, a channel link or a link in message text."""


def _post(name: str) -> Post:
    line = f"- {visible(name, 80)}: offline"
    return Post("digest", "Fleetwatch, what changed: 1 new.", (Section("Fix first", (line,)),))


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_reaches_slack_escaped_and_with_no_markup_parsing(name):
    message = slack_message(_post(name), "#av-watch")
    assert message["mrkdwn"] is False and message["parse"] == "none" and message["link_names"] is False
    assert message["unfurl_links"] is False and message["unfurl_media"] is False
    text = message["text"]
    assert "<" not in text and ">" not in text
    assert not SLACK_CONTROL.search(text)
    assert "&" not in text.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "")
    assert re.search(r"@(?!\u2060)", text) is None


@pytest.mark.parametrize("name", BY_KIND["mentions"])
def test_a_slack_mention_or_link_in_a_name_is_shown_as_typed(name):
    text = slack_message(_post(name), "#c")["text"]
    decoded = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace(WORD_JOINER, "")
    assert visible(name, 80) in decoded


def test_slack_escaping_is_entities_for_the_three_control_characters_and_a_joiner_after_at():
    assert slack_escape("<!channel> & @here") == f"&lt;!channel&gt; &amp; @{WORD_JOINER}here"
    assert slack_escape("&lt;") == "&amp;lt;"


def _elements(card: dict) -> list[dict]:
    out = []

    def walk(value):
        if isinstance(value, dict):
            out.append(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(card)
    return out


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_reaches_teams_only_inside_a_text_run_which_renders_no_markdown(name):
    message = teams_message(_post(name))
    (attachment,) = message["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    elements = _elements(card)
    shown = visible(name, 80).replace("{{", "{ {").replace("}}", "} }")
    for element in elements:
        assert element.get("type") not in ("ActionSet", "Action.OpenUrl", "Action.Submit", "Action.Execute")
        assert "actions" not in element and "selectAction" not in element and "msteams" not in element
        if element.get("type") == "TextBlock":
            assert shown not in element["text"] or not shown.strip(), element
    runs = [e["text"] for e in elements if e.get("type") == "TextRun"]
    assert any(shown in run for run in runs)
    assert "{{" not in json.dumps(card)


def test_teams_breaks_adaptive_card_functions_and_keeps_headings_as_text_blocks():
    message = teams_message(_post("{{DATE(2017-02-14T06:08:00Z, SHORT)}} Hall"))
    body = message["attachments"][0]["content"]["body"]
    assert [b["type"] for b in body] == ["TextBlock", "TextBlock", "RichTextBlock"]
    assert body[2]["inlines"][0]["text"] == "- { {DATE(2017-02-14T06:08:00Z, SHORT)} } Hall: offline"


def test_plain_text_is_the_title_then_each_heading_and_line():
    post = Post("sweep", "Title", (Section("Head", ("a", "b")), Section(None, ("c",))))
    assert plain_text(post) == "Title\nHead\na\nb\nc"


def test_a_long_section_is_cut_and_says_how_many_are_left_out():
    assert capped([str(i) for i in range(50)], "…and %(n)s more.", limit=40) == (
        *[str(i) for i in range(39)],
        "…and 11 more.",
    )
    assert capped(["a"], "…and %(n)s more.") == ("a",)
