"""Pure checks of a request's origin: its Host, where a POST came from, the form tokens, and the
page's session IDs.

The Host, origin and form-token rules are the ones every local page of Fleetwatch keeps, from
`shared.web.guards` (re-exported here): **Host** must be ``127.0.0.1:<port>`` or
``[::1]:<port>`` (never ``localhost``, the ask page's name); a **POST** must provably come from the page itself (``Sec-Fetch-Site:
same-origin`` with the page's own ``Origin`` or ``null``, or without ``Sec-Fetch-Site`` the
page's own ``Origin``), so ``cross-site``, ``same-site`` (another port on localhost), ``none``
(typed or bookmarked), a lone ``Origin: null``, a foreign ``Origin`` and no header at all are
refused; **form tokens** are HMAC-SHA256 under a key made at start and kept in memory, over the
action, the browser session and the proposal (and, for Approve, the approval the card
recorded), so a token from another proposal, another session or an earlier run does not verify.

What only the approval page adds:

- **Session IDs**: the cookie holds a random token; the store holds only
  HMAC(per-process key, token), so a cookie from an earlier run (or a forged one) names no
  session, and a reader of the store cannot forge a cookie.
- `SECURITY_HEADERS`: the shared headers plus a ``Permissions-Policy`` that turns off the
  camera, the microphone and geolocation.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Final

from shared.web import guards as web_guards
from shared.web.guards import form_token, host_ok, new_key, post_origin_problem, token_ok

__all__ = [
    "SECURITY_HEADERS",
    "form_token",
    "host_ok",
    "new_key",
    "new_session_token",
    "post_origin_problem",
    "session_id",
    "token_ok",
]

SECURITY_HEADERS: Final[Mapping[str, str]] = {
    **web_guards.SECURITY_HEADERS,
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
"""Headers every response of the approval page carries."""


def new_session_token() -> str:
    """A fresh cookie value: 32 random bytes, URL-safe base64."""
    return secrets.token_urlsafe(32)


def session_id(key: bytes, token: str) -> str:
    """The store's ID for the session a cookie `token` names: ``s-`` + 32 hex characters."""
    return "s-" + hmac.new(key, token.encode("utf-8", "replace"), hashlib.sha256).hexdigest()[:32]
