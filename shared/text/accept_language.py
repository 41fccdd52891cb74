"""A page's language for one request: ``?lang=``, else the switch's cookie, else
``Accept-Language``. Pure. The approval page and the ask page choose the same way.
"""

from __future__ import annotations

from typing import Final

from shared.text.languages import LANGUAGES, Language

MAX_ACCEPT_LANGUAGE: Final = 400
"""Characters of an ``Accept-Language`` header read (the rest is ignored)."""


def negotiate(accept_language: str | None) -> Language:
    """The language to use for an ``Accept-Language`` header: the supported one with the
    highest q-value (``es-MX``, ``es-419`` -> ``es``), English when none is supported."""
    if not accept_language:
        return LANGUAGES[0]
    best, best_q = LANGUAGES[0], 0.0
    for order, part in enumerate(accept_language[:MAX_ACCEPT_LANGUAGE].split(",")):
        tag, _, params = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                continue
        for lang in LANGUAGES:
            if primary == lang and (q > best_q or (q == best_q and order == 0)) and q > 0:
                best, best_q = lang, q
    return best


def page_language(query: str | None, cookie: str | None, accept_language: str | None) -> Language:
    """The request's language: `query` (``?lang=``: the switch's links, ``fleetwatch demo
    --language es``), else `cookie` (the switch's choice kept), else `accept_language`."""
    for chosen in (query, cookie):
        for lang in LANGUAGES:
            if chosen == lang:
                return lang
    return negotiate(accept_language)
