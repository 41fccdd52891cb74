"""The watch's words: keyed entries of the one catalogue under the context ``watch`` (the key
its ``msgid``, each language's words its ``msgstr``: `shared.text.catalogue.Lexicon`), read
through `word`.

``%(n)s`` is a count; other fields are named (filled after translation). Room names never sit in
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
    """The phrase `key` in `language` (``es``, else English), with `facts` filled in."""
    table = WORDS[language_of(language)]
    return table[key] % facts
