"""Words are data: every code has its words in the catalogue in English and Spanish, keyed by
the code (no table of words in code), and no code branches on a language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from shared.errors import Code
from shared.text.catalogue import CODE_CONTEXTS, LOCALES_DIR, keyed, translations

ROOT = Path(__file__).resolve().parents[3]


def keyed_entries(language: str) -> dict[tuple[str, str], str]:
    """Every keyed entry of `language`'s catalogue (those with English words in the English
    catalogue's ``msgstr``), by (context, key)."""
    with (LOCALES_DIR / "en" / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        english = {(m.context, m.id) for m in read_po(handle, locale="en") if m.context and m.string}
    with (LOCALES_DIR / language / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        catalog = read_po(handle, locale=language)
    return {(m.context, m.id): m.string for m in catalog if (m.context, m.id) in english}


@pytest.mark.parametrize("code", list(Code))
def test_every_code_has_words_in_english_and_in_spanish(code: Code) -> None:
    contexts = [c for c in CODE_CONTEXTS if keyed(c, code) is not None]
    assert contexts, code
    for context in contexts:
        english = translations()["en"].pgettext(context, code)
        spanish = translations()["es"].pgettext(context, code)
        assert english != code and spanish != code and spanish != english, (context, code)


def test_every_keyed_entry_has_both_languages_and_a_codes_entry_names_a_code() -> None:
    english, spanish = keyed_entries("en"), keyed_entries("es")
    assert len(english) > 250 and set(english) == set(spanish)
    assert [
        key for key, words in spanish.items() if not words or (isinstance(words, str) and not words)
    ] == []
    codes = {c.value for c in Code}
    assert sorted(key for context, key in english if context in CODE_CONTEXTS and key not in codes) == []


def test_a_code_without_words_is_said_as_a_code_not_as_nothing() -> None:
    assert keyed("refusal", "no_such_code") is None and keyed("why", "no_such_code") is None


BRANCH = re.compile(r"""[=!]=\s*["'](?:en|es)["']|["'](?:en|es)["']\s*[=!]=|["']es["']\s+if\b""")
"""A comparison with a language's tag, the shape of a branch on a language."""


def test_no_product_code_branches_on_a_language() -> None:
    found = []
    product = [*(ROOT / "services").rglob("*.py"), *(ROOT / "shared").rglob("*.py")]
    # The lab is not the product: its demo model is a test double with its own words.
    for path in sorted(p for p in product if "lab" not in p.relative_to(ROOT).parts[:2]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BRANCH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_branch_scan_sees_a_branch() -> None:
    assert BRANCH.search('x = "es" if language == "es" else "en"')
    assert BRANCH.search("if 'en' != lang:")
    assert not BRANCH.search("language = language_of(chosen)")


def enum_values() -> list[tuple[str, str]]:
    """Every (catalogue context, value) of the enums a person reads in words."""
    from shared.epiphan.attention import Priority
    from shared.policy.model import Autonomy
    from shared.store.approval_rows import OUTCOMES, VERIFICATIONS
    from shared.store.audit_kinds import AUDIT_KINDS

    tables = {
        "outcome": OUTCOMES | {"running"},
        "doctor outcome": OUTCOMES | {"running"},
        "verification": VERIFICATIONS,
        "doctor verification": VERIFICATIONS | {"none"},
        "autonomy": {a.value for a in Autonomy},
        "priority": {str(p.value) for p in Priority},
        "audit kind": AUDIT_KINDS,
        "audit row": AUDIT_KINDS,
    }
    return [(context, value) for context, values in tables.items() for value in sorted(values)]


@pytest.mark.parametrize(("context", "value"), enum_values())
def test_every_enum_value_a_person_reads_has_words_in_english_and_in_spanish(
    context: str, value: str
) -> None:
    english = translations()["en"].pgettext(context, value)
    spanish = translations()["es"].pgettext(context, value)
    assert english and spanish and spanish != value and spanish != english, (context, value, spanish)
