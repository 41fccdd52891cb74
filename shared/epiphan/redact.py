"""Redaction of secrets in Epiphan results, applied to every result before anyone sees it.

What it removes (pure functions, no I/O):
- the value under any key that names a secret (``key``, ``stream_key``, ``streamKey``, ``streamid``,
  ``token``, ``password``, ``pwd``, ``passphrase``, ``secret``, ``authorization``...);
- the ``value`` of a publisher setting whose ``id``/``title``/``name``/``label`` names a secret, or
  whose type is ``password`` (Epiphan sends publisher settings as ``[{id, type: {name}, title,
  value}]``, so a secret may be named only in its title: "Stream key");
- a Pearl publisher's ``stream``/``stream_name`` (for RTMP the stream name *is* the key) when the
  same map, or a sibling setting of the same list, holds a URL, server, user, password or
  another secret (`secret_keys`); the user name itself stays;
- stream IDs (``streamid``, ``StreamID``, "Stream ID") unless the value is a UUID: an endpoint's
  own ``StreamID`` is not secret, an SRT ``streamid`` may carry credentials;
- in URLs (`redact_url`): user info; the values of query parameters that name a secret (any case,
  percent-encoded names too, and a value that itself holds a secret or a URL); for stream schemes
  (``rtmp``, ``rtmps``, ``srt``, ``rtsp``, ``rist``, ``udp``...) the path, where a key rides, every
  query value but the protocol's own options (SRT carries its key in ``streamid``), and the
  fragment; for other schemes, every path segment of an ingest or webhook address (a segment
  ``whip``, ``whep``, ``ingest``, ``live``, ``publish``, ``upload``, ``hooks``, ``webhooks``,
  ``webhookb2``, ``workflows``, or a host ``hooks.*``/``*.webhook.*``: Slack, Discord, Teams) but
  those words and media file names, whatever the key's length;
- in free text (`redact_text`): URLs as above; ``name=value`` and ``name: value`` after a secret
  name (``password=…``, ``stream key: …``, ``x-api-key: …``, ``stream%20key=…``,
  ``stream_key = "with space"``); ``Bearer``/``Basic`` credentials; JWTs; private key blocks;
  token shapes with a known prefix (``sk-ant-…``, ``ghp_…``, ``AKIA…``, YouTube and Twitch stream
  keys); the cells of a Markdown table column headed by a secret name ("Stream key"); anything
  glued to a mask (``password=[redacted]hunter2`` keeps no ``hunter2``) or to one a person or a
  server typed (``****abcd1234``, ``••••abcd``, ``xxxx-xxxx-ab12``); ``passphrase <value>``
  without a separator; URLs written with escaped slashes (``https:\\/\\/…`` in JSON text); and
  JSON written as text (an object or a list), redacted as the value it holds.

Redacting twice gives the same result as once. Limit (said in SECURITY.md): redaction only knows
these shapes. A secret in a field with an innocent name, in a format it does not recognise,
passes through.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final
from urllib.parse import unquote, unquote_plus, urlsplit

import msgspec

REDACTED: Final = "[redacted]"

_SECRET_WORDS = re.compile(
    r"(?:^|[^a-z])(?:key|stream_?key|streamid|token|access_?token|refresh_?token|password|passwd|pwd|pass"
    r"|passphrase|secret|authorization|auth|credentials?|api_?key|signature|sig|session_?(?:id|key))"
    r"(?:$|[^a-z])",
    re.IGNORECASE,
)
_NOT_SECRET_KEYS = frozenset({"keyword", "keywords", "key_frame_interval", "keyframe_interval", "monkey"})
_LABELS = ("id", "title", "name", "label")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORDS_SPLIT = re.compile(r"[^a-z0-9]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SECRET, _STREAM_ID, _STREAM_NAME, _USER, _PLACE = 1, 2, 4, 8, 16
"""What a field name or a setting's label says (`_name_kind`): a secret, a stream ID, a stream
name, a user name, a URL or server."""

_STREAM_SCHEMES = frozenset(
    {
        "rtmp",
        "rtmps",
        "rtmpt",
        "rtmpe",
        "rtmpte",
        "rtmpts",
        "srt",
        "rtsp",
        "rtsps",
        "rtspu",
        "rist",
        "udp",
        "rtp",
    }
)
_STREAM_OPTIONS = frozenset(
    {
        "latency",
        "rcvlatency",
        "peerlatency",
        "mode",
        "transtype",
        "pbkeylen",
        "maxbw",
        "inputbw",
        "oheadbw",
        "conntimeo",
        "peeridletimeo",
        "payloadsize",
        "pkt_size",
        "tlpktdrop",
        "nakreport",
        "linger",
        "ipttl",
        "iptos",
        "ttl",
        "rcvbuf",
        "sndbuf",
        "fc",
        "mss",
        "tsbpd",
        "localport",
        "buffer_size",
        "fifo_size",
        "aes-type",
        "profile",
        "bandwidth",
        "backup",
    }
)
"""Query options of the stream protocols (SRT, RIST, UDP/RTP) that carry no secret: kept."""
_URL_SECRET_PARAMS = frozenset({"cid", "code", "ticket", "sid", "stream", "streamname", "stream_name"})
"""Query parameters that carry a key in URLs although the word names no secret (YouTube's HLS
ingest carries its stream key in ``cid``, a WHIP server may carry it in ``stream``)."""
_INGEST_WORDS = frozenset(
    {
        "whip",
        "whep",
        "ingest",
        "live",
        "publish",
        "upload",
        "hooks",
        "webhook",
        "webhooks",
        "webhookb2",
        "workflows",
    }
)
"""Path segments that make a URL an ingest or webhook address: its other segments carry the key."""
_KEPT_SEGMENTS = _INGEST_WORDS | frozenset(
    {
        "api",
        "v1",
        "v2",
        "v3",
        "rtc",
        "webrtc",
        "endpoint",
        "services",
        "triggers",
        "manual",
        "paths",
        "invoke",
    }
    | {"incomingwebhook", "hls", "dash"}
)
"""Segments of an ingest or webhook address that stay (the protocol's own words)."""
_HOOK_HOST = re.compile(r"^hooks\.|(?:^|\.)webhook\.", re.IGNORECASE)
"""Hosts whose every path is a webhook address (Slack's ``hooks.…``, Teams' ``….webhook.…``)."""
_MEDIA_FILE = re.compile(r"[A-Za-z0-9_-]{1,40}\.(?:m3u8|mpd|ts|m4s|mp4|flv|aac)", re.IGNORECASE)
"""A media file name in an ingest path (``index.m3u8``): kept, it is the protocol's, not a key."""

_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s\"'<>]+", re.IGNORECASE)
_URL_TAIL = re.compile(r"[.,;:!?)]+$")
_ESCAPED_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}:(?:\\+/){2}(?:\\+/|[^\s\"'<>\\])+", re.IGNORECASE)
"""A URL written with escaped slashes (``https:\\/\\/host\\/path``: JSON text)."""
_ESCAPE = re.compile(r"\\+/")
_GLUE_CHARS = r"(?:[A-Za-z0-9_\-/+=~%]|\.(?=[A-Za-z0-9]))"

_NAME_WORDS = (
    r"pass(?:word|wd|phrase|code)?|pwd|secret|token|api[_-]?key|apikey|auth(?:orization)?"
    r"|credentials?|sig(?:nature)?|stream(?:[ _+-]|%20)?key|streamid|private[ _-]?key|key"
    r"|session[_-]?id|sessionid"
)
_NAME = rf"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*(?:{_NAME_WORDS})(?![A-Za-z0-9])"
_SECRET_NAME = re.compile(rf"(?:[A-Za-z0-9]+[ _-])*(?:{_NAME_WORDS})", re.IGNORECASE)
"""A whole name (a table header, a cell) that names a secret: "Stream key", "API key", "Password"."""
_HOLDER_SEGMENT = re.compile(
    r"(?:[A-Za-z0-9]+[_-])*(?:token|key|api[_-]?key|apikey|secret|password|passphrase|stream[_-]?key|streamid)",
    re.IGNORECASE,
)
"""A URL path segment after which the next segment is a secret value: ``/token/<value>``."""
_VALUE_CHAR = r"(?:\[redacted\]|[^\s\"'<>,;&|()\[\]])"

_TOKEN_SHAPES = (
    r"sk-ant-[A-Za-z0-9_-]{6,}",
    r"sk-(?:proj-)?[A-Za-z0-9_-]{20,}",
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"xox[abposr]-[A-Za-z0-9-]{10,}",
    r"(?-i:(?:AKIA|ASIA)[0-9A-Z]{16})",
    r"AIza[0-9A-Za-z_-]{35}",
    r"(?=[a-z0-9-]{0,23}[0-9])(?-i:[a-z0-9]{4}(?:-[a-z0-9]{4}){4})",
    r"live_[0-9]{6,}_[A-Za-z0-9]{16,}",
    r"FB-[0-9]{6,}-[0-9]+-[A-Za-z0-9_-]{8,}",
    r"[A-Za-z0-9]+_sk_[A-Za-z0-9]{6,}",
    r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
)
"""Secrets recognisable by their shape alone: model and cloud API keys, stream keys, JWTs."""

_TEXT = re.compile(
    "|".join(
        (
            rf"(?P<pem>-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*\Z){_GLUE_CHARS}*)",
            rf"(?P<token>(?<![A-Za-z0-9_-])(?:{'|'.join(_TOKEN_SHAPES)}){_GLUE_CHARS}*)",
            rf"(?P<escaped>{_ESCAPED_URL.pattern})",
            rf"(?P<url>{_URL.pattern})",
            rf"(?P<name>{_NAME})(?P<sep>[\"']?[ \t]*(?:[:=]|%3[Dd])[ \t]*)"
            rf"(?P<value>\"[^\"\n]*\"?|'[^'\n]*'?"
            rf"|(?:Bearer|Basic|Digest|Token)[ \t]+{_VALUE_CHAR}+|{_VALUE_CHAR}+)",
            r"(?P<scheme>\b(?:Bearer|Basic))[ \t]+"
            rf"(?P<cred>(?:\[redacted\]|[A-Za-z0-9._~+/=%-]{{8,}})(?:\[redacted\]|{_GLUE_CHARS})*)",
            rf"(?P<glue>\[redacted\]{_GLUE_CHARS}+)",
            rf"(?P<mask>(?<![A-Za-z0-9*•●])(?:\*{{4,}}|\*{{3}}(?=[A-Za-z_-]*[0-9])|[•●]{{3,}}|(?:x{{3,}}-){{2,}})"
            rf"{_GLUE_CHARS}+)",
            r"(?P<spaced>(?<![A-Za-z0-9])(?:passphrase|password|passwd|stream[ _-]?key|streamid))[ \t]+"
            r"(?P<word>(?=[^\s\"'<>,;]*[0-9])(?=[^\s\"'<>,;]*[A-Za-z])[^\s\"'<>,;()\[\]]{4,})",
        )
    ),
    re.IGNORECASE | re.DOTALL,
)
_CASED_SCHEMES = frozenset({"Bearer", "Basic", "Digest", "Token"})
_MARKS = re.compile(r"[:=%\-_\[|.*•●]")
_QUICK_WORDS = re.compile(r"akia|asia|aiza|bearer|basic|pass|key|streamid")


def _may_hold_secret(text: str) -> bool:
    """False only for text no shape of `_TEXT` or `_tables` can match. Every shape needs at
    least one of: a URL's or a ``name: value``'s ``:``, ``=`` or ``%3D``; a ``-`` (key blocks,
    dashed token shapes), a ``_`` or a ``.`` (the other token shapes, JWTs); ``[redacted]``
    glue or a typed mask (``*``, ``•``, ``●``); a table's ``|``; the prefixes of the token shapes
    without any of those (``AKIA``, ``ASIA``, ``AIza``); a ``Bearer`` or ``Basic`` credential;
    a ``passphrase``/``password``/``stream key``/``streamid`` followed by its value after a
    space. Most names, states and numbers have none, and skip the full pattern (issue 14: a
    2,000-device list holds ~35,000 strings)."""
    if _MARKS.search(text) is not None:
        return True
    lower = text.lower()
    return _QUICK_WORDS.search(lower) is not None


@functools.lru_cache(maxsize=4096)
def names_secret(key: str) -> bool:
    """True when a field name (any case, snake or camel) names a secret. (Cached: the same few
    names repeat in every device of a result.)

    >>> names_secret("streamKey"), names_secret("stream_key"), names_secret("name")
    (True, True, False)
    """
    if key.lower() in _NOT_SECRET_KEYS:
        return False
    spaced = _CAMEL.sub("_", key)
    return bool(_SECRET_WORDS.search(spaced))


@functools.lru_cache(maxsize=4096)
def _name_kind(name: str) -> int:
    """The flags of `_SECRET`… `_PLACE` a field name or label carries (any case, snake, camel,
    dotted, spaced: ``publisher.rtmp.stream``, ``StreamID``, "Stream name", ``WhipUrl``)."""
    words = [w for w in _WORDS_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    last, pair = (words[-1] if words else ""), "".join(words[-2:])
    kind = _SECRET if names_secret(name) else 0
    if last == "streamid" or pair == "streamid":
        kind |= _STREAM_ID
    if last in ("stream", "streamname") or pair == "streamname":
        kind |= _STREAM_NAME
    if last in ("user", "username", "login") or pair == "username":
        kind |= _USER
    if last in ("url", "uri", "server", "urls"):
        kind |= _PLACE
    return kind


def _context(names: Iterable[Any]) -> int:
    """The flags of a map's keys or a settings list's labels together."""
    kind = 0
    for name in names:
        if isinstance(name, str):
            kind |= _name_kind(name)
    return kind


def _secret_named(names: Iterable[Any], value: Any, context: int) -> bool:
    """True when a value named by any of `names`, beside names with flags `context`, is a secret:
    a secret name; a stream ID that is not a UUID; a stream name beside a URL, user, password or
    other secret. (A user name is not a secret: it only makes its neighbours a publisher.)"""
    publisher = bool(context & (_PLACE | _USER | _SECRET | _STREAM_ID))
    hits = 0
    for name in names:
        if not isinstance(name, str):
            continue
        kind = _name_kind(name)
        if kind & _SECRET and not kind & _STREAM_ID:
            return True
        if kind & _STREAM_ID or (publisher and kind & _STREAM_NAME):
            hits |= kind
    if not hits:
        return False
    return not (hits & _STREAM_ID and not hits & ~(_STREAM_ID | _SECRET) and _is_uuid(value))


def _is_uuid(value: Any) -> bool:
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def sibling_labels(items: Iterable[Any]) -> tuple[str, ...]:
    """The labels (``id``, ``title``, ``name``, ``label``) of the maps in a list that carry a
    ``value``: the context in which each of them is judged (a publisher's ``stream`` is its key
    when a sibling setting is its ``url``)."""
    labels: list[str] = []
    for item in items:
        if isinstance(item, Mapping) and "value" in item:
            labels += [label for key in _LABELS if isinstance(label := item.get(key), str)]
    return tuple(labels)


def secret_keys(value: Mapping[Any, Any], siblings: Iterable[str] = ()) -> frozenset[Any]:
    """The keys of a map whose values are secrets (see the module docstring): keys that name one,
    and ``value`` when the map's labels, or its type (``password``), name one. `siblings` are
    the labels of the other settings of its list (`sibling_labels`). A value that is None or a
    bool is never a secret; an empty ``value`` is not either."""
    context, flagged = 0, []
    for key in value:  # the common case first: no key says anything (a device, a channel)
        if type(key) is str and (kind := _name_kind(key)):
            context |= kind
            if kind & (_SECRET | _STREAM_ID | _STREAM_NAME):
                flagged.append(key)
    if not flagged and "value" not in value:
        return _NOTHING
    labels = [value[key] for key in _LABELS if isinstance(value.get(key), str)]
    context |= _context(labels) | _context(siblings)
    hidden = {
        key
        for key in flagged
        if value[key] is not None
        and not isinstance(value[key], bool)
        and (names_secret(key) or _secret_named((key,), value[key], context))
        and not (_name_kind(key) & _STREAM_ID and _is_uuid(value[key]))
    }
    item = value.get("value")
    if "value" in value and item not in (None, "") and not isinstance(item, bool):
        kind = value.get("type")
        kind = kind.get("name") if isinstance(kind, Mapping) else kind
        if (isinstance(kind, str) and kind.lower() == "password") or _secret_named(labels, item, context):
            hidden.add("value")
    return frozenset(hidden)


_NOTHING: Final[frozenset[Any]] = frozenset()


def _secret_param(raw_name: str, *, stream: bool) -> bool:
    name = unquote_plus(raw_name).strip()
    if stream:
        return name.lower() not in _STREAM_OPTIONS
    return names_secret(name) or name.lower() in _URL_SECRET_PARAMS


def _pairs(text: str, *, stream: bool) -> str:
    """A query (or query-like fragment) with secret values replaced, separators kept as written."""
    out = []
    for piece in re.split(r"([&;])", text):
        if piece in ("&", ";", ""):
            out.append(piece)
            continue
        name, eq, value = piece.partition("=")
        if not eq:
            out.append(REDACTED if stream or _holds_secret(name) else piece)
        elif value and (_secret_param(name, stream=stream) or _holds_secret(value)):
            out.append(f"{name}={REDACTED}")
        else:
            out.append(piece)
    return "".join(out)


def _holds_secret(raw: str) -> bool:
    """True when a (percent-encoded) URL part holds a secret shape or a URL with a secret."""
    decoded = unquote_plus(raw)
    return decoded != REDACTED and redact_text(decoded) != decoded


def _path(path: str, host: str = "") -> str:
    """A non-stream URL's path with each segment that holds a secret, or follows a segment that
    names one (``/token/<value>``), replaced; in an ingest or webhook address (`_INGEST_WORDS`,
    `_HOOK_HOST`) every segment but `_KEPT_SEGMENTS` and media file names."""
    segments = path.split("/")
    if _HOOK_HOST.search(host) or any(s.lower() in _INGEST_WORDS for s in segments):
        return "/".join(
            s if not s or s.lower() in _KEPT_SEGMENTS or _MEDIA_FILE.fullmatch(s) else REDACTED
            for s in segments
        )
    out = []
    for i, segment in enumerate(segments):
        after_name = i > 0 and _HOLDER_SEGMENT.fullmatch(unquote(segments[i - 1])) is not None
        out.append(REDACTED if segment and (after_name or _holds_secret(segment)) else segment)
    return "/".join(out)


def redact_url(url: str) -> str:
    """A URL with its secret parts removed (see the module docstring); the scheme, host and port
    stay. ``rtmp://user:pw@live.example.net/app/sk_123`` → ``rtmp://live.example.net/[redacted]``.

    A string that is not a URL is returned unchanged; one that cannot be parsed becomes
    ``[redacted]``.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED
    if not parts.scheme or not url[len(parts.scheme) :].startswith("://"):
        return url
    stream = parts.scheme.lower() in _STREAM_SCHEMES
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    query, fragment = parts.query, parts.fragment
    if stream:
        path = parts.path if parts.path in ("", "/") else "/" + REDACTED
        if query and fragment:
            query, fragment = f"{query}#{fragment}", ""
        query = _pairs(query, stream=True)
        fragment = REDACTED if fragment else ""
    else:
        path = _path(parts.path, host)
        query = _pairs(query, stream=False)
        if "=" in fragment:
            fragment = _pairs(fragment, stream=False)
        elif fragment and _holds_secret(fragment):
            fragment = REDACTED
    out = (
        f"{parts.scheme}://{netloc}{path}"
        + (f"?{query}" if query else "")
        + (f"#{fragment}" if fragment else "")
    )
    return REDACTED if out.endswith("://") and not url.endswith("://") else out


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


def _url_in_text(url: str) -> str:
    tail = _URL_TAIL.search(url)
    end = tail.start() if tail else len(url)
    return redact_url(url[:end]) + url[end:]


def _basic_credential(cred: str) -> bool:
    """True when a word after ``Basic`` looks like a credential rather than an English word."""
    if re.search(r"[0-9+/=]", cred) or cred.startswith(REDACTED):
        return True
    try:
        decoded = base64.b64decode(cred + "=" * (-len(cred) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _value(value: str) -> str:
    if value[0] in "\"'":
        return f"{value[0]}{REDACTED}{value[0]}"
    scheme, _, rest = value.partition(" ")
    if rest and scheme.capitalize() in _CASED_SCHEMES:
        return f"{scheme} {REDACTED}"
    return REDACTED


def _replace(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "url":
        return _url_in_text(match.group("url"))
    if kind == "escaped":
        found = match.group("escaped")
        escape = _ESCAPE.search(found)
        slash = escape.group(0) if escape else "/"
        return _url_in_text(_ESCAPE.sub("/", found)).replace("/", slash)
    if kind == "word":
        return f"{match.group('spaced')} {REDACTED}"
    if kind == "value":
        return f"{match.group('name')}{match.group('sep')}{_value(match.group('value'))}"
    if kind == "cred":
        scheme, cred = match.group("scheme"), match.group("cred")
        if scheme.lower() == "basic" and not _basic_credential(cred):
            return match.group(0)
        return f"{scheme} {REDACTED}"
    return REDACTED


def _cells(line: str) -> list[str]:
    return re.split(r"(?<!\\)\|", line)


def _tables(text: str) -> str:
    """Markdown tables with the cells under a secret-named header, and the cell right of a
    secret-named cell in a body row, replaced."""
    lines = text.split("\n")
    secret_columns: set[int] = set()
    in_table = False
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            in_table = False
            continue
        cells = _cells(line)
        if not in_table:
            in_table = True
            secret_columns = {j for j, cell in enumerate(cells) if _names_secret_cell(cell)}
            continue
        if re.fullmatch(r"[\s|:-]*", line):
            continue
        last = len(cells) - 1 if line.rstrip().endswith("|") else len(cells)
        for j in range(1, last):
            if cells[j].strip() and cells[j].strip() != REDACTED:
                if j in secret_columns or _names_secret_cell(cells[j - 1]):
                    cells[j] = f" {REDACTED} "
        lines[i] = "|".join(cells)
    return "\n".join(lines)


def _names_secret_cell(cell: str) -> bool:
    return _SECRET_NAME.fullmatch(cell.strip(" \t*_`")) is not None


@functools.lru_cache(maxsize=8192)
def redact_text(text: str) -> str:
    """Free text with every secret shape of the module docstring redacted. Idempotent. Pure, so
    its answers are kept for the texts seen most lately (a fleet repeats its firmware versions,
    models and states thousands of times)."""
    if not _may_hold_secret(text):
        return text
    return redact_text_fully(text)


def redact_text_fully(text: str) -> str:
    """`redact_text` without its quick look (`_may_hold_secret`): the full pattern always runs.
    The same result for every text (a test holds them together)."""
    text = _TEXT.sub(_replace, text)
    text = _json_in_text(text)
    return _tables(text) if "|" in text else text


_JSON_START: Final = re.compile(r"(?=[\[{]\s*[\"\[{])")
"""Each place JSON may start, overlapping ones too (a lookahead): in ``{ [{"id": …}]`` the list
at the second bracket is tried whole, not only the objects inside it, whose siblings name what
their values are (noise before a settings list left its stream key unredacted)."""
_JSON: Final = json.JSONDecoder()
_JSON_TRIES: Final = 32
"""At most this many places in one text are tried as the start of JSON (a bound on the work;
places inside a value already read are not tried, nor counted)."""


def _json_in_text(text: str) -> str:
    """Text with each JSON object or list written in it (a whole text, or one inside a message)
    redacted as the value it holds (`redact`: a publisher's ``stream`` beside its ``url``), and
    written again compactly where that changed anything; other text as it is. Settings read one
    by one (a list cut short, so only its objects parse) are judged beside each other: the
    labels of every setting found in the text are each one's siblings."""
    if '"' not in text:
        return text
    found: list[tuple[int, int, Any]] = []
    end = tries = 0
    for start in (m.start() for m in _JSON_START.finditer(text)):
        if start < end:  # inside a value already read whole
            continue
        if tries >= _JSON_TRIES:
            break
        tries += 1
        try:
            value, end = _JSON.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python parses
            continue
        found.append((start, end, value))
    siblings = sibling_labels(value for _, _, value in found) if len(found) > 1 else ()
    out, end = [], 0
    for start, stop, value in found:
        try:
            redacted = _redact(value, siblings)  # a list finds its own siblings
            shown = json.dumps(redacted, ensure_ascii=False) if redacted != value else None
        except RecursionError:  # parsed but too deep to judge: hidden whole
            shown = REDACTED
        if shown is not None:
            out += [text[end:start], shown]
            end = stop
    return "".join(out) + text[end:] if out else text


def redact(value: Any) -> Any:
    """A deep copy of a JSON-like value with every known secret shape redacted.

    Shapes: dict, list/tuple, str, int, float, bool, None. Dict keys are kept; values under
    secret keys (`secret_keys`) become ``"[redacted]"`` (None stays None, so "no key set" still
    shows).
    """
    return _redact(value, ())


def _redact(value: Any, siblings: tuple[str, ...]) -> Any:
    kind = type(value)  # the JSON types first, by identity: a device list holds ~50,000 values
    if kind is str:
        return redact_text(value)
    if kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, Mapping):
        hidden = secret_keys(value, siblings)
        return {key: REDACTED if key in hidden else _redact(item, ()) for key, item in value.items()}
    if isinstance(value, list | tuple):
        labels = sibling_labels(value)
        return [_redact(item, labels) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_parsed(value: Any) -> Any:
    """`redact` for what a parser already made of a result (`shared.epiphan.fleet`'s frozen
    msgspec Structs): every ``str`` through `redact_text`, a JSON value kept as it came (an
    ``Any`` field, e.g. a warning's ``data``) through `redact`, tuples item by item, anything else
    (times, numbers, flags) as it is. A Struct or tuple nothing changed in is returned itself, so
    a clean fleet costs no copy. Parsing first keeps only the fields Fleetwatch uses, so only
    those are looked at (issue 14: the 2,000-device list)."""
    kind = type(value)  # the plain values first, by identity (issue 34: ~65,000 a beat)
    if value is None or kind is bool or kind is int or kind is float or kind is datetime:
        return value
    if isinstance(value, str):
        redacted = redact_text(value)
        return value if redacted == value else redacted
    if isinstance(value, msgspec.Struct):
        changes = {}
        for name in value.__struct_fields__:
            item = getattr(value, name)
            redacted = redact_parsed(item)
            if redacted is not item:
                changes[name] = redacted
        return msgspec.structs.replace(value, **changes) if changes else value
    if type(value) is tuple:
        items = tuple(redact_parsed(item) for item in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, Mapping | list):
        return redact(value)
    return value
