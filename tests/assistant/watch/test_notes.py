"""Room notes: one clean line; the one room a name means, or the candidates."""

from __future__ import annotations

from services.assistant.watch.notes import clean_note, match_room
from shared.wire.assistant import MAX_NOTE_CHARS
from tests.corpus.hostile_names import BY_KIND, HIDDEN

ROOMS = [
    ("19012340101", "SCI 101 Lecture Hall", "sci101"),
    ("19012340102", "SCI 105", "sci105"),
    ("19012340601", "Aula Magna", "aula"),
    ("19012340602", "Aula 12", "aula12"),
]


def test_a_note_loses_every_hidden_control_and_bidi_character_and_stays_one_line():
    for name in BY_KIND["bidi_and_hidden"]:
        cleaned = clean_note(name)
        assert not any(c in cleaned for c in HIDDEN), repr(name)
        assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in cleaned), repr(name)
    assert clean_note("Line one\nLine two\r\tthree\u2028four") == "Line one Line two three four"
    assert clean_note("  spaced    out  ") == "spaced out"
    assert clean_note("\u202egnidrocer pots\u202c") == "gnidrocer pots"


def test_a_long_note_is_cut_with_an_ellipsis():
    cleaned = clean_note("x" * 5000)
    assert len(cleaned) == MAX_NOTE_CHARS and cleaned.endswith("…")


def test_an_exact_name_wins_ignoring_case_accents_and_spaces():
    assert match_room("sci 105", ROOMS) == ["sci105"]
    assert match_room("AULA   MAGNA", ROOMS) == ["aula"]
    assert match_room("Áula 12", ROOMS) == ["aula12"]
    assert match_room("19012340101", ROOMS) == ["sci101"]


def test_part_of_a_name_finds_the_one_room_that_holds_it_or_lists_the_candidates():
    assert match_room("lecture", ROOMS) == ["sci101"]
    assert match_room("SCI 1", ROOMS) == ["sci101", "sci105"]
    assert match_room("Library", ROOMS) == []
    assert match_room("   ", ROOMS) == []
