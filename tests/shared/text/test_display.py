from shared.text.display import has_hidden, visible


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
