"""Pure checks of a request's origin: its Host, where a POST came from, and the form tokens.

- **Host** must be ``127.0.0.1:<port>`` or ``localhost:<port>`` (a DNS-rebinding page names
  its own host). Every request is checked.
- **Where a POST came from**: with ``Sec-Fetch-Site`` (a header no page can set), it must be
  ``same-origin``, and an ``Origin`` beside it must be the page's own (``http://`` + the
  checked Host) or ``null``: the page's ``Referrer-Policy: no-referrer`` makes Chromium send
  ``Origin: null`` on its own forms. Without ``Sec-Fetch-Site``, the ``Origin`` must be the
  page's own. So ``cross-site``, ``same-site`` (another port on localhost), ``none`` (typed
  or bookmarked), a lone ``Origin: null``, a foreign ``Origin`` and no header at all are
  refused.
- **Form tokens**: HMAC-SHA256 under a key made at start and kept in memory, over the action,
  the browser session and the proposal (and, for Approve, the approval the card recorded).
  A token from another proposal, another session or an earlier run does not verify.
- **Session IDs**: the cookie holds a random token; the store holds only
  HMAC(per-process key, token), so a cookie from an earlier run (or a forged one) names no
  session, and a reader of the store cannot forge a cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

from shared.errors import Code

KEY_BYTES = 32


def host_ok(host: str | None, port: int) -> bool:
    """True when the Host header names the page: ``127.0.0.1:<port>`` or ``localhost:<port>``."""
    return host is not None and host.lower() in (f"127.0.0.1:{port}", f"localhost:{port}")


def own_origin(host: str) -> str:
    """The page's origin for a checked Host header (plain HTTP on loopback)."""
    return f"http://{host.lower()}"


def post_origin_problem(headers: Mapping[str, str], host: str) -> Code | None:
    """``cross_site`` unless the POST provably came from the page at `host`, else None."""
    fetch_site = headers.get("Sec-Fetch-Site")
    origin = headers.get("Origin")
    origin = origin.strip().lower() if origin is not None else None
    if fetch_site is None:
        return None if origin == own_origin(host) else Code.CROSS_SITE
    if fetch_site.strip().lower() != "same-origin":
        return Code.CROSS_SITE
    return None if origin in (None, "null", own_origin(host)) else Code.CROSS_SITE


def new_key() -> bytes:
    """A fresh per-process key (32 random bytes); keep it in memory only."""
    return secrets.token_bytes(KEY_BYTES)


def new_session_token() -> str:
    """A fresh cookie value: 32 random bytes, URL-safe base64."""
    return secrets.token_urlsafe(32)


def session_id(key: bytes, token: str) -> str:
    """The store's ID for the session a cookie `token` names: ``s-`` + 32 hex characters."""
    return "s-" + hmac.new(key, token.encode("utf-8", "replace"), hashlib.sha256).hexdigest()[:32]


def form_token(key: bytes, action: str, session: str, *bound: str) -> str:
    """The token a form of `action` carries for `session`, bound to the IDs in `bound`."""
    message = "\x00".join((action, session, *bound)).encode("utf-8", "replace")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def token_ok(key: bytes, token: str | None, action: str, session: str, *bound: str) -> bool:
    """True when `token` is `form_token(key, action, session, *bound)`; constant time."""
    if not token or len(token) != 64:
        return False
    expected = form_token(key, action, session, *bound).encode("ascii")
    return hmac.compare_digest(expected, token.encode("utf-8", "replace"))
