"""Redaction of secrets in Epiphan results, applied to every result before anyone sees it.

What it removes (pure functions, no I/O):
- the value under any key that names a secret (``key``, ``stream_key``, ``streamKey``, ``token``,
  ``password``, ``passphrase``, ``secret``, ``authorization``, ``credentials``...);
- the ``value`` of a publisher setting whose ``id``/``title``/``name`` names a secret (Epiphan sends
  publisher settings as ``[{id, type, title, value}]``);
- user:password in any URL, and query parameters that name a secret;
- the path of stream URLs (``rtmp://``, ``rtmps://``, ``srt://``...): a stream key often rides there;
- bearer tokens and JWT-shaped strings inside free text.

Limit (said in SECURITY.md): redaction only knows these shapes. A secret in a field with an
innocent name, in a format it does not recognise, passes through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"

_SECRET_WORDS = re.compile(
    r"(?:^|[^a-z])(?:key|stream_?key|token|access_?token|refresh_?token|password|passwd|pass|passphrase"
    r"|secret|authorization|auth|credentials?|api_?key|signature|sig)(?:$|[^a-z])",
    re.IGNORECASE,
)
_NOT_SECRET_KEYS = frozenset({"keyword", "keywords", "key_frame_interval", "keyframe_interval", "monkey"})
_STREAM_SCHEMES = frozenset({"rtmp", "rtmps", "rtmpt", "rtmpe", "srt", "rtsp", "rtsps", "rist"})
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s\"'<>]+", re.IGNORECASE)
_BEARER = re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")
_LABELS = ("id", "title", "name", "label")


def names_secret(key: str) -> bool:
    """True when a field name (any case, snake or camel) names a secret.

    >>> names_secret("streamKey"), names_secret("stream_key"), names_secret("name")
    (True, True, False)
    """
    if key.lower() in _NOT_SECRET_KEYS:
        return False
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key)
    return bool(_SECRET_WORDS.search(spaced))


def redact_url(url: str) -> str:
    """A URL with user info, secret query parameters and (for stream schemes) the path removed.

    ``rtmp://user:pw@live.example.net/app/sk_123`` → ``rtmp://live.example.net/[redacted]``.
    A string that is not a URL is returned unchanged.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    path = parts.path
    if parts.scheme.lower() in _STREAM_SCHEMES and path not in ("", "/"):
        path = "/" + REDACTED
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if names_secret(k) else v) for k, v in pairs], safe="[]")
    return urlunsplit((parts.scheme, host, path, query, ""))


def url_host(url: str) -> str | None:
    """The host (and port) of a URL, or None when it has none. Never the path, user or key."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    return f"{host}:{port}" if port is not None else host


def redact_text(text: str) -> str:
    """Free text with URLs, bearer tokens and JWT-shaped strings redacted."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _JWT.sub(REDACTED, text)


def redact(value: Any) -> Any:
    """A deep copy of a JSON-like value with every known secret shape redacted.

    Shapes: dict, list/tuple, str, int, float, bool, None. Dict keys are kept; values under
    secret-naming keys become ``"[redacted]"`` (None stays None, so "no key set" still shows).
    """
    if isinstance(value, Mapping):
        labelled_secret = any(
            isinstance(value.get(label), str) and names_secret(value[label]) for label in _LABELS
        )
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and names_secret(key) and item is not None and not isinstance(item, bool):
                out[key] = REDACTED
            elif labelled_secret and key == "value" and item not in (None, ""):
                out[key] = REDACTED
            else:
                out[key] = redact(item)
        return out
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
