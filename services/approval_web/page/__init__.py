"""The approval page: one card at a time, approved or denied by a person in a browser.

An aiohttp app on ``127.0.0.1`` and ``[::1]`` at ``FLEETWATCH_APPROVE_PORT`` (its own port and
host names, never the ask page's ``localhost``; sessions bound to the uid that signed in),
run by ``python -m services.approval_web`` beside approval.sock (`page_side`). It holds the
page secret and its HMAC keys (in memory only) and **no Epiphan token**: every fact on a card
comes from the store and a fresh Inspect on executor.sock, and Approve sends Execute there.

Layers (each may import only the ones above it)::

    words.py     pure: plain words per code, over the one catalogue's `Words`
    guards.py    pure: Host, origin, tokens, session IDs
    card.py      pure: the card from a proposal and an Inspection, its words from
                 `shared.text.changes`
    outcome.py   pure: a proposal's outcome from the store's record, for the outcome page and
                 "Recent decisions"
    errors.py    `PageError`
    i18n.py      the Jinja2 environments over the one catalogue (`shared.text.catalogue`),
                 ``say`` and ``when`` (times in the operator's zone, `FLEETWATCH_TIMEZONE`)
    sessions.py  I/O: the ``sessions`` table
    context.py   what handlers share, rendering, refusing; `PageExecutor`, what the page asks
                 executor.sock through `shared.wire.executor.ExecutorClient`
    views.py     the handlers
    app.py       the app, its guards and headers, `page_side`

The secret and its slow-down are shared with the ask page (`shared.web.page_secret`,
`shared.web.throttle`).

Errors: `PageError` (``socket_in_use`` when the port is taken, ``internal_error`` when the
secret file cannot be written) from `page_side`; handlers answer refusals with a page and an
audit row, never an exception.
"""

from __future__ import annotations

from services.approval_web.page.app import RunningPage, build_page_app, page_side, store_connections
from services.approval_web.page.errors import PageError
from shared.web.page_secret import PageSecret, SecretSink

__all__ = [
    "PageError",
    "PageSecret",
    "RunningPage",
    "SecretSink",
    "build_page_app",
    "page_side",
    "store_connections",
]
