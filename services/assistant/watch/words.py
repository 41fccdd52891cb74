"""The watch's words: keyed entries of the one catalogue under the context ``watch`` (the key
its ``msgid``, each language's words its ``msgstr``: `shared.text.catalogue.Lexicon`), read
through `word`.

``%(n)s`` is a count: a phrase that says one is a plural entry (``msgid_plural`` the key too),
its form chosen for ``n`` (`Keyed.counted`); other fields are named (filled after translation). Room names never sit in
these strings: code puts them in, through `shared.text.display.visible`. Priorities use
`shared.text.wording.PRIORITY_WORDS`.
"""

from __future__ import annotations

from typing import Final

from shared.text.catalogue import Lexicon
from shared.text.languages import language_of

WORDS: Final = Lexicon("watch")
"""Each phrase by key (``WORDS["es"]["wall_title"]``)."""


def word(language: str, key: str, **facts: object) -> str:
    """The phrase `key` in `language` (``es``, else English), with `facts` filled in; the
    plural form for the count ``n`` when `key`'s entry is a plural one.

    Raises:
        KeyError: the catalogue has no words for `key`.
    """
    table = WORDS[language_of(language)]
    n = str(facts.get("n", ""))
    counted = table.counted(key, int(n) if n.isdigit() else 2) if "n" in facts else None  # "?": many
    return (counted if counted is not None else table[key]) % facts
