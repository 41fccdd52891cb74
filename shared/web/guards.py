"""Pure checks of a local page's requests: its Host, where a POST came from, and form tokens.

Shared by the local pages (the ask page, and the approval page through
``services/approval_web/page/guards.py``, which adds its session IDs and one header): one set
of rules for every page Fleetwatch serves on the loopback.

- **Host** must be one of the page's own names at its port (a DNS-rebinding page names its own
  host). Check every request. The two pages have **different loopback names**, because a
  browser sends a cookie to every port of the host that set it: the approval page answers
  only ``127.0.0.1`` and ``[::1]`` (`APPROVAL_NAMES`), the ask page and the wall only
  ``localhost`` (`ASK_NAMES`), so the approval cookie is never sent to a page the assistant
  serves (issue 24). A GET naming the other page's loopback name at this port is sent to this
  page's own name (`loopback_redirect`: a redirect that sets no cookie); anything else is
  ``bad_host``.
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


APPROVAL_NAMES: Final = ("127.0.0.1", "[::1]")
"""The approval page's host names (the first is the one it prints)."""
ASK_NAMES: Final = ("localhost",)
"""The ask page's and the wall's host name: one the approval page never answers to."""
LOOPBACK_NAMES: Final = (*APPROVAL_NAMES, *ASK_NAMES)


def host_ok(host: str | None, port: int, names: tuple[str, ...]) -> bool:
    """True when the Host header is one of `names` at `port` (``127.0.0.1:8767``)."""
    return host is not None and host.lower() in {f"{name}:{port}" for name in names}


def loopback_redirect(method: str, host: str | None, port: int, names: tuple[str, ...]) -> str | None:
    """Where a GET or HEAD naming another loopback name at `port` (``localhost:8767`` on the
    approval page) is sent: this page's own URL ``http://<names[0]>:<port>/``; None for any
    other request (which `host_ok` then judges)."""
    if method not in ("GET", "HEAD") or host_ok(host, port, names):
        return None
    if host_ok(host, port, LOOPBACK_NAMES):
        return f"http://{names[0]}:{port}/"
    return None


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
