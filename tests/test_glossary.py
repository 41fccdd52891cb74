"""The Spanish glossary (``docs/glossary.es.md``) holds the catalogue and the ``.es.md`` pages to
one name per thing (issue 28, item 9): a message whose English names a listed term says it with
one of the term's Spanish words, and the words the glossary forbids (the fence's old names
"barrera" and "guardia" among them) are nowhere in Spanish."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.shared.text.test_spanish_terms import spanish

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary.es.md"
NOT_WORDS = re.compile(
    r"`[^`]*`|fleetwatch(?: [a-z-]+)+|--[\w-]+|%\(\w+\)[sd]|\b\w+[_.]\w+\b|\b[A-Z]{2,}\b|\bTeams\b"
)
"""What a term's name may sit in without being the term: commands, options, placeholders,
codes, files, upper-case placeholders (ROOM) and Microsoft Teams."""


def rows() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(English term, its Spanish words, the words not to use) for each row of the glossary."""
    found = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`"):
            found.append(
                (
                    cells[0],
                    tuple(re.findall(r"`([^`]+)`", cells[1])),
                    tuple(re.findall(r"`([^`]+)`", cells[2])),
                )
            )
    return found


def spanish_pages() -> list[Path]:
    return sorted(
        p for p in ROOT.rglob("*.es.md") if ".venv" not in p.parts and "node_modules" not in p.parts
    )


def has_word(words: tuple[str, ...], text: str) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.IGNORECASE) for w in words)


def test_the_glossary_lists_the_terms_the_issue_names() -> None:
    terms = {term: words for term, words, _ in rows()}
    assert terms["fleet"] == ("flota", "flotas") and terms["fence"] == ("cerca",)
    assert {"room", "device", "proposal", "approval", "team", "kill switch", "the watch"} <= set(terms)


@pytest.mark.parametrize("row", rows(), ids=lambda row: row[0])
def test_each_message_naming_a_term_says_it_with_the_glossarys_words(row) -> None:
    term, words, _ = row
    named = [
        (english, said)
        for english, said in spanish()
        if re.search(rf"\b{re.escape(term)}s?\b", NOT_WORDS.sub(" ", english), re.IGNORECASE)
    ]
    assert named, term
    assert [(english, said) for english, said in named if not has_word(words, said)] == []


@pytest.mark.parametrize("row", [r for r in rows() if r[2]], ids=lambda row: row[0])
def test_no_spanish_text_uses_a_word_the_glossary_forbids(row) -> None:
    term, _, forbidden = row
    assert [said for _, said in spanish() if has_word(forbidden, said)] == [], term
    pages = {page.relative_to(ROOT): page.read_text(encoding="utf-8") for page in spanish_pages()}
    assert len(pages) >= 5
    lines = [
        (str(page), line)
        for page, text in pages.items()
        if page != GLOSSARY.relative_to(ROOT)
        for line in text.splitlines()
        if has_word(forbidden, NOT_WORDS.sub(" ", line))
    ]
    assert lines == [], term
