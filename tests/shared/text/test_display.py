import json
from datetime import UTC, datetime

from shared.text.display import has_hidden, safe_json, visible
from shared.wire.approval import Count


def test_a_right_to_left_override_is_shown_not_obeyed():
    assert visible("Room\u202e1 llaH") == "Room⟦U+202E⟧1 llaH"


def test_terminal_escapes_and_zero_width_characters_become_visible_markers():
    assert visible("\x1b[2J\u200bA") == "⟦U+001B⟧[2J⟦U+200B⟧A"
    assert has_hidden("a\u2066b") and not has_hidden("Sala de conferencias Ñandú")


def test_long_text_is_cut_to_the_cap_with_an_ellipsis():
    out = visible("x" * 500, cap=50)
    assert len(out) == 50 and out.endswith("…")


def test_spanish_and_other_scripts_pass_unchanged():
    assert visible("Aula Magna — Cámara 2") == "Aula Magna — Cámara 2"


def test_json_output_escapes_hidden_characters_and_stays_lossless() -> None:
    value = {"reason": "stop \u202eecalp siht\u202c now", "name": "Aula Cámara 2"}
    text = safe_json(value)
    assert "\u202e" not in text and "\\u202e" in text and "Cámara" in text
    assert json.loads(text) == value


def test_json_output_writes_datetimes_as_utc_text_and_structs_as_maps() -> None:
    text = safe_json({"at": datetime(2026, 9, 16, 13, 0, tzinfo=UTC), "reply": Count(count=2)})
    assert json.loads(text) == {"at": "2026-09-16T13:00:00Z", "reply": {"op": "count", "count": 2}}


def test_look_alike_names_are_told_from_plain_and_accented_ones() -> None:
    from shared.text.display import lookalike

    for name in (
        "Sandbox Рearl-2",
        "Ｌａｂ 1",
        "Lab\u0301 1",
        "Aula Ωmega",
    ):  # Cyrillic, fullwidth, combining, Greek
        assert lookalike(name), name
    for name in ("Sandbox Pearl-2", "Aula Magna Ñoño", "Café 2", "Hall ≥ 2", "LIB 401 Reading Room"):
        assert not lookalike(name), name


def test_digits_of_every_other_script_are_look_alikes() -> None:
    from shared.text.display import lookalike

    # Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, NKo, Mathematical bold digits
    for name in ("Room ١٠١", "Aula ۴۰۱", "Hall ४०१", "Lab ১", "ENG 2߁0", "SCI 𝟏05", "29088800٠01"):
        assert lookalike(name), name
    assert not lookalike("Room 101") and not lookalike("29088800001")
