"""Words are data: every code has its words in the catalogue in English and Spanish, keyed by
the code (no table of words in code), and no code branches on a language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from shared.errors import Code
from shared.text.catalogue import KEYED_CONTEXTS, LOCALES_DIR, keyed, translations

ROOT = Path(__file__).resolve().parents[3]


def keyed_entries(language: str) -> dict[tuple[str, str], str]:
    with (LOCALES_DIR / language / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        catalog = read_po(handle, locale=language)
    return {
        (m.context, m.id): m.string
        for m in catalog
        if m.context in KEYED_CONTEXTS and isinstance(m.id, str) and isinstance(m.string, str)
    }


@pytest.mark.parametrize("code", list(Code))
def test_every_code_has_words_in_english_and_in_spanish(code: Code) -> None:
    contexts = [c for c in KEYED_CONTEXTS if keyed(c, code) is not None]
    assert contexts, code
    for context in contexts:
        english = translations()["en"].pgettext(context, code)
        spanish = translations()["es"].pgettext(context, code)
        assert english != code and spanish != code and spanish != english, (context, code)


def test_every_keyed_entry_names_a_code_and_has_both_languages() -> None:
    english, spanish = keyed_entries("en"), keyed_entries("es")
    assert set(english) == set(spanish)
    assert [key for key, words in {**english, **spanish}.items() if not words] == []
    codes = {c.value for c in Code}
    assert sorted(key for _, key in english if key not in codes) == []


def test_a_code_without_words_is_said_as_a_code_not_as_nothing() -> None:
    assert keyed("refusal", "no_such_code") is None and keyed("why", "no_such_code") is None


BRANCH = re.compile(r"""[=!]=\s*["'](?:en|es)["']|["'](?:en|es)["']\s*[=!]=|["']es["']\s+if\b""")
"""A comparison with a language's tag, the shape of a branch on a language."""


def test_no_product_code_branches_on_a_language() -> None:
    found = []
    for path in sorted([*(ROOT / "services").rglob("*.py"), *(ROOT / "shared").rglob("*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BRANCH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_branch_scan_sees_a_branch() -> None:
    assert BRANCH.search('x = "es" if language == "es" else "en"')
    assert BRANCH.search("if 'en' != lang:")
    assert not BRANCH.search("language = language_of(chosen)")
