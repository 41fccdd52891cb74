"""Pure checks of a local page's requests: its Host, where a POST came from, and form tokens.

Shared by the local pages (the ask page, and the approval page through
``services/approval_web/page/guards.py``, which adds its session IDs and one header): one set
of rules for every page Fleetwatch serves on 127.0.0.1.

- **Host** must be ``127.0.0.1:<port>`` or ``localhost:<port>`` (a DNS-rebinding page names
  its own host). Check every request.
- **Where a POST came from**: with ``Sec-Fetch-Site`` (a header no page can set) it must be
  ``same-origin``, and an ``Origin`` beside it must be the page's own or ``null`` (a page
  with ``Referrer-Policy: no-referrer`` makes Chromium send ``Origin: null`` on its own
  forms). Without ``Sec-Fetch-Site`` the ``Origin`` must be the page's own. Anything else is
  ``cross_site``.
- **Form tokens**: HMAC-SHA256 under a key made at start and kept in memory, over the action,
  the browser session and any bound IDs; a token from another session or an earlier run does
  not verify.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Final

from shared.errors import Code

KEY_BYTES = 32
SECURITY_HEADERS: Final[Mapping[str, str]] = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Headers every local page response carries: no script at all, no framing, no referrer."""
CODE_HEADER: Final = "Fleetwatch-Code"
"""The header a local page's refusal carries: exactly one stable `Code` (the words on the page
are for people; a program reads this)."""


def host_ok(host: str | None, port: int) -> bool:
    """True when the Host header names the page: ``127.0.0.1:<port>`` or ``localhost:<port>``."""
    return host is not None and host.lower() in (f"127.0.0.1:{port}", f"localhost:{port}")


def post_origin_problem(headers: Mapping[str, str], host: str) -> Code | None:
    """``cross_site`` unless the POST provably came from the page at `host` (a checked Host), else None."""
    own = f"http://{host.lower()}"
    fetch_site = headers.get("Sec-Fetch-Site")
    origin = headers.get("Origin")
    origin = origin.strip().lower() if origin is not None else None
    if fetch_site is None:
        return None if origin == own else Code.CROSS_SITE
    if fetch_site.strip().lower() != "same-origin":
        return Code.CROSS_SITE
    return None if origin in (None, "null", own) else Code.CROSS_SITE


def new_key() -> bytes:
    """A fresh per-process key (32 random bytes); keep it in memory only."""
    return secrets.token_bytes(KEY_BYTES)


def form_token(key: bytes, action: str, session: str, *bound: str) -> str:
    """The token a form of `action` carries for `session`, bound to the IDs in `bound` (hex)."""
    message = "\x00".join((action, session, *bound)).encode("utf-8", "replace")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def token_ok(key: bytes, token: str | None, action: str, session: str, *bound: str) -> bool:
    """True when `token` is `form_token(key, action, session, *bound)`; constant time."""
    if not token or len(token) != 64:
        return False
    expected = form_token(key, action, session, *bound).encode("ascii")
    return hmac.compare_digest(expected, token.encode("utf-8", "replace"))
