"""The catalogue's compiled twins (`shared.text.catalogue`): a process reads ``messages.mo`` with
the standard library's `gettext` only when it was compiled from the ``.po`` beside it as that
file is now; otherwise it compiles the ``.po`` itself, so an edited ``.po`` always shows."""

from __future__ import annotations

import shutil
from pathlib import Path

from shared.text.catalogue import (
    LOCALES_DIR,
    compile_catalogues,
    compile_po,
    compiled_from,
    load_translations,
)
from shared.text.languages import LANGUAGES


def scratch_locales(tmp_path: Path) -> Path:
    folder = tmp_path / "locales"
    for lang in LANGUAGES:
        (folder / lang / "LC_MESSAGES").mkdir(parents=True)
        shutil.copy(LOCALES_DIR / lang / "LC_MESSAGES" / "messages.po", folder / lang / "LC_MESSAGES")
    return folder


def catalogue_of(translations) -> dict:
    return dict(translations._catalog)


def test_a_twin_says_exactly_what_its_po_compiled_in_memory_says(tmp_path: Path) -> None:
    folder = scratch_locales(tmp_path)
    in_memory = load_translations(folder)  # no twins yet: compiled from the .po
    assert all(compiled_from(t) for t in in_memory.values())
    assert sorted(p.name for p in compile_catalogues(folder)) == ["messages.mo"] * len(LANGUAGES)
    assert compile_catalogues(folder) == []  # current: nothing to write
    from_twins = load_translations(folder)
    for lang in LANGUAGES:
        assert catalogue_of(from_twins[lang]) == catalogue_of(in_memory[lang])
        assert all(from_twins[lang].plural(n) == in_memory[lang].plural(n) for n in range(2001))
    assert from_twins["es"].gettext("options") == "opciones"


def test_an_edited_po_is_read_even_with_a_stale_twin_beside_it(tmp_path: Path) -> None:
    folder = scratch_locales(tmp_path)
    compile_catalogues(folder)
    po = folder / "es" / "LC_MESSAGES" / "messages.po"
    po.write_text(po.read_text().replace('msgstr "opciones"', 'msgstr "las opciones"', 1))
    assert load_translations(folder)["es"].gettext("options") == "las opciones"
    assert [p.parent.parent.name for p in compile_catalogues(folder)] == ["es"]
    assert load_translations(folder)["es"].gettext("options") == "las opciones"


def test_a_twin_that_is_not_a_catalogue_is_ignored(tmp_path: Path) -> None:
    folder = scratch_locales(tmp_path)
    compile_catalogues(folder)
    (folder / "es" / "LC_MESSAGES" / "messages.mo").write_bytes(b"\x00" * 10)
    assert load_translations(folder)["es"].gettext("options") == "opciones"
    twin = compile_po((folder / "es" / "LC_MESSAGES" / "messages.po").read_bytes(), "es")
    (folder / "es" / "LC_MESSAGES" / "messages.mo").write_bytes(twin[: len(twin) // 2])
    assert load_translations(folder)["es"].gettext("options") == "opciones"
