"""A change in words (`shared.text.changes`): a look-alike channel name is marked in the card's
title in both languages, as a look-alike room name is."""

from __future__ import annotations

import datetime as dt

import pytest

from shared.text.catalogue import say_text
from shared.text.changes import room, title_words

ARGUMENTS = {"action": "start", "device_ids": ["29088800004-1"]}
NOW = dt.datetime(2026, 9, 16, 13, 0, tzinfo=dt.UTC)


def _title(channel_name: str, language: str) -> str:
    rooms = (room("29088800004", "Sandbox Classroom", "1", channel_name),)
    return say_text(title_words("batch_recording", ARGUMENTS, rooms), language, zone=dt.UTC, now=NOW)


@pytest.mark.parametrize(
    ("language", "marked"),
    [("en", "(“Lеcture”: look-alike letters)"), ("es", "(«Lеcture»: letras que se parecen a otras)")],
)
def test_a_look_alike_channel_name_is_marked_in_the_title(language: str, marked: str) -> None:
    assert _title("Lеcture", language).endswith(marked)  # a Cyrillic е
    assert _title("Lecture ١", language).endswith(marked.replace("Lеcture", "Lecture ١"))
    assert "look-alike" not in _title("Lecture", language) and "parecen" not in _title("Lecture", language)
