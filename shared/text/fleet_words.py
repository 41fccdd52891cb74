"""The words of `shared.text.fleet_answers`, in English and Latin American Spanish: keyed
entries of the catalogue (`shared.text.catalogue.Lexicon`), no words in code.

``HEADINGS`` holds each list's first sentence, ``<key>.0`` for one room and ``<key>.1`` for
more (``%(n)s`` the count); ``WORDS`` every other phrase.
"""

from __future__ import annotations

from typing import Final

from shared.text.catalogue import Lexicon

HEADINGS: Final = Lexicon("fleet heading")
WORDS: Final = Lexicon("fleet")
