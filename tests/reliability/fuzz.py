"""Generated input for the three sockets and the two pages (hypothesis), sent to real processes,
and the one rule every answer must keep: no crash, no state change, one stable code each.

Sockets (``executor.sock``, ``approval.sock``, ``assistant.sock``): each example is one frame on
a fresh connection, one of

- ``hostile``: a request tag the socket serves with hostile field values (huge, hidden or
  bidi text, NUL, deep nesting, out-of-range numbers, wrong types), fields missing or extra;
- ``wrong_tag``: a map whose ``op`` the socket does not serve (or is not a string);
- ``not_msgpack`` / ``not_a_map``: a body that is no MessagePack, or not a map;
- ``truncated``: a header announcing more bytes than are sent before the write side closes;
- ``huge``: a header announcing more than the frame cap (the body is never sent).

The answer must be exactly one frame: an ``error`` reply whose ``code`` is a `Code` the socket
declares for that operation (or a transport code), or the reply of a valid request. Then the
process must still run and answer `GetCapabilities`.

Pages (the approval page and the ask page): each example is one raw HTTP/1.1 request: a method,
a path, headers (Host, Origin, Sec-Fetch-Site, Content-Type with odd charsets, Content-Length
right, wrong or absent, cookies) and a body (form fields with hostile values, random bytes).
The answer must be a status below 500; a refusal (4xx) carries one ``Fleetwatch-Code`` header
naming a `Code`, except a request the HTTP parser refuses before the page sees it (status 400
with no header), which is tallied as ``http_parser``.

"State" is what a change lives in: the store's ``proposals``, ``proposal_targets``,
``approvals``, ``executions`` and ``kv`` (the kill switch) tables and the lab's write log. The
audit (each refusal is audited) and the ask records are logs and may grow.

Shared by ``tests/reliability/test_fuzz.py`` (a bounded number) and ``bench/reliability.py``.
"""

from __future__ import annotations

import collections
import contextlib
import socket
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.errors import Code
from shared.wire import approval, assistant, executor
from shared.wire.protocol import MAX_FRAME_BYTES, TRANSPORT_CODES, GetCapabilities, Message, message_tag

REPLY_SECONDS = 30.0
"""Hard bound on one answer (a valid Ask reads the lab)."""
_HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class SocketContract:
    """What one socket serves: its request types and the codes each operation may answer."""

    service: str
    requests: tuple[type[Message], ...]
    codes: Mapping[str, frozenset[Code]]

    @classmethod
    def of(cls, module: Any) -> SocketContract:
        codes = {op.name: frozenset(op.codes) | TRANSPORT_CODES for op in module.OPERATIONS}
        return cls(module.__name__.rsplit(".", 1)[-1], tuple(module.REQUESTS), codes)

    def allowed(self, tag: str | None) -> frozenset[Code]:
        return self.codes.get(tag or "", TRANSPORT_CODES)


CONTRACTS = {
    "executor": SocketContract.of(executor),
    "approval_web": SocketContract.of(approval),
    "assistant": SocketContract.of(assistant),
}
"""Service -> its socket's contract (the manifests the services serve)."""


# --- strategies ----------------------------------------------------------------------------

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300),
    st.sampled_from(
        [
            "",
            "\x00",
            "\u202eevil\u202c",
            "\u200b",
            "a" * 5000,
            "p-" + "0" * 12,
            "../../etc/passwd",
            "'; DROP TABLE proposals; --",
            "{{7*7}}",
            "<script>alert(1)</script>",
            "29088800001",
            "batch_reboot",
            "\ud7ff" * 64,
        ]
    ),
)
HOSTILE_LEAF = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.sampled_from([0, -1, 2**31, 2**63 - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=64),
    st.none(),
    st.booleans(),
)
HOSTILE_VALUE = st.recursive(
    HOSTILE_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(HOSTILE_TEXT, inner, max_size=4)),
    max_leaves=12,
)


def _field_names(message_type: type[Message]) -> tuple[str, ...]:
    return tuple(f.name for f in msgspec.structs.fields(message_type))


@st.composite
def hostile_request(draw: Callable[..., Any], contract: SocketContract) -> tuple[str, bytes, str | None]:
    """A request the socket serves, its fields hostile: ("hostile", body, tag)."""
    request_type = draw(st.sampled_from(contract.requests))
    tag = message_tag(request_type)
    body: dict[Any, Any] = {"op": tag}
    for name in _field_names(request_type):
        if draw(st.integers(0, 9)) > 0:
            body[name] = draw(HOSTILE_VALUE)
    if draw(st.integers(0, 5)) == 0:
        body[draw(HOSTILE_TEXT)] = draw(HOSTILE_VALUE)
    return "hostile", msgspec.msgpack.encode(body), tag


@st.composite
def frame_case(draw: Callable[..., Any], contract: SocketContract) -> tuple[str, bytes, str | None]:
    """One fuzz case for `contract`'s socket: (kind, raw bytes to send, the tag if any)."""
    kind = draw(
        st.sampled_from(["hostile"] * 6 + ["wrong_tag", "not_msgpack", "not_a_map", "truncated", "huge"])
    )
    if kind == "hostile":
        _, body, tag = draw(hostile_request(contract))
        return kind, _HEADER.pack(len(body)) + body, tag
    if kind == "wrong_tag":
        op = draw(st.one_of(HOSTILE_TEXT, HOSTILE_LEAF))
        body = msgspec.msgpack.encode(
            {"op": op, **draw(st.dictionaries(HOSTILE_TEXT, HOSTILE_LEAF, max_size=3))}
        )
        return kind, _HEADER.pack(len(body)) + body, None
    if kind == "not_msgpack":
        body = draw(st.binary(min_size=1, max_size=256))
        return kind, _HEADER.pack(len(body)) + body, None
    if kind == "not_a_map":
        body = msgspec.msgpack.encode(draw(st.one_of(HOSTILE_LEAF, st.lists(HOSTILE_LEAF, max_size=5))))
        return kind, _HEADER.pack(len(body)) + body, None
    if kind == "truncated":
        _, body, tag = draw(hostile_request(contract))
        announced = len(body) + draw(st.integers(1, 4096))
        return kind, _HEADER.pack(announced) + body, tag
    announced = draw(st.integers(MAX_FRAME_BYTES + 1, 2**32 - 1))
    return kind, _HEADER.pack(announced) + draw(st.binary(max_size=16)), None


# --- sending -------------------------------------------------------------------------------


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def exchange(path: Path, raw: bytes, *, close_write: bool = False) -> list[bytes]:
    """Send `raw` on a fresh connection to the unix socket at `path` (then close the write
    side when `close_write`, or once the answer came); every frame body answered until the
    server closes (bounded by `REPLY_SECONDS`)."""
    frames: list[bytes] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(REPLY_SECONDS)
        sock.connect(str(path))
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(raw)
        if close_write:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
        while True:
            try:
                header = _read_exactly(sock, _HEADER.size)
            except ConnectionResetError:
                break
            if len(header) < _HEADER.size:
                break
            frames.append(_read_exactly(sock, _HEADER.unpack(header)[0]))
            if not close_write:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
    return frames


@dataclass
class Tally:
    """What a fuzz run saw: examples sent, codes answered, and every broken rule."""

    sent: int = 0
    codes: collections.Counter[str] = field(default_factory=collections.Counter)
    problems: list[str] = field(default_factory=list)

    def fail(self, problem: str) -> None:
        if len(self.problems) < 20:
            self.problems.append(problem)


def check_frame_answer(contract: SocketContract, kind: str, tag: str | None, frames: list[bytes]) -> str:
    """The stable code (or ``reply:<op>``) one case was answered with.

    Raises:
        AssertionError: not exactly one frame, not a message, or a code the socket does not
            declare for that operation.
    """
    assert len(frames) == 1, f"{kind}: {len(frames)} answers"
    answer = msgspec.msgpack.decode(frames[0])
    assert isinstance(answer, dict) and isinstance(answer.get("op"), str), f"{kind}: not a message"
    if answer["op"] != "error":
        assert kind == "hostile", f"{kind}: answered {answer['op']}"
        return f"reply:{answer['op']}"
    code = Code(answer["code"])
    allowed = contract.allowed(tag if kind in ("hostile", "truncated") else None)
    assert code in allowed, f"{kind} {tag}: {code} is not declared for it"
    return str(code)


def fuzz_socket(service: str, path: Path, examples: int, tally: Tally) -> None:
    """Send `examples` generated frames to `service`'s socket at `path`; count into `tally`.
    Raises AssertionError (hypothesis's falsifying example) on the first broken rule."""
    contract = CONTRACTS[service]

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=frame_case(contract))
    def run(case: tuple[str, bytes, str | None]) -> None:
        kind, raw, tag = case
        tally.sent += 1
        frames = exchange(path, raw, close_write=kind == "truncated")
        tally.codes[check_frame_answer(contract, kind, tag, frames)] += 1

    run()


def capabilities_answer(path: Path) -> bool:
    """True when the socket still answers `GetCapabilities` with its manifest."""
    body = msgspec.msgpack.encode(GetCapabilities())
    frames = exchange(path, _HEADER.pack(len(body)) + body)
    return len(frames) == 1 and msgspec.msgpack.decode(frames[0]).get("op") == "capabilities"


# --- HTTP ----------------------------------------------------------------------------------

PATHS = ("/", "/login", "/approve", "/confirm", "/deny", "/deny-all", "/page.css", "/ask")
METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "BREW")
CONTENT_TYPES = (
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=utf-16",
    "application/x-www-form-urlencoded; charset=latin-1",
    "multipart/form-data; boundary=xyz",
    "multipart/form-data",
    "application/json",
    "text/plain; charset=bogus",
    "\u00e9/\u00e9",
)
FORM_FIELDS = (
    "secret",
    "token",
    "proposal_id",
    "card_hash",
    "facts_hash",
    "shown_at",
    "question",
    "preset",
    "language",
    "confirm_room",
)
HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=80
)


@st.composite
def http_case(draw: Callable[..., Any], port: int) -> tuple[str, bytes]:
    """One raw HTTP/1.1 request for the page on `port`: (method and path, bytes)."""
    method = draw(st.one_of(st.sampled_from(METHODS), st.from_regex(r"\A[A-Z]{1,12}\Z")))
    path = draw(st.one_of(st.sampled_from(PATHS), st.from_regex(r"\A/[A-Za-z0-9._~%/-]{0,60}\Z")))
    if draw(st.booleans()):
        path += "?" + draw(st.from_regex(r"\A[A-Za-z0-9=&%._-]{0,60}\Z"))
    own = f"127.0.0.1:{port}"
    headers: list[tuple[str, str]] = []
    host = draw(st.sampled_from([own, f"localhost:{port}", "evil.example", "", None, own.upper()]))
    if host is not None:
        headers.append(("Host", host))
    origin = draw(st.sampled_from([f"http://{own}", "null", "http://evil.example", None]))
    if origin is not None:
        headers.append(("Origin", origin))
    site = draw(st.sampled_from(["same-origin", "cross-site", "none", None]))
    if site is not None:
        headers.append(("Sec-Fetch-Site", site))
    kind = draw(st.sampled_from(["form", "bytes", "none"]))
    if kind == "form":
        fields = draw(st.dictionaries(st.sampled_from(FORM_FIELDS), HOSTILE_TEXT, max_size=5))
        encoding = draw(st.sampled_from(["utf-8", "utf-16", "latin-1"]))
        body = urlencode(fields, encoding=encoding, errors="replace").encode("ascii")
    elif kind == "bytes":
        body = draw(st.binary(max_size=2048))
    else:
        body = b""
    if body or method == "POST":
        headers.append(("Content-Type", draw(st.sampled_from(CONTENT_TYPES))))
    length = draw(st.sampled_from(["right", "right", "absent", "huge", "short"]))
    if length == "right":
        headers.append(("Content-Length", str(len(body))))
    elif length == "huge":
        headers.append(("Content-Length", str(draw(st.integers(17 * 1024, 2**40)))))
    elif length == "short":
        headers.append(("Content-Length", str(max(len(body) - 1, 0))))
    if draw(st.booleans()):
        headers.append(("Cookie", draw(HEADER_TEXT)))
    for _ in range(draw(st.integers(0, 2))):
        headers.append((draw(st.from_regex(r"\AX-[A-Za-z-]{1,20}\Z")), draw(HEADER_TEXT)))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += "Connection: close\r\n\r\n"
    return f"{method} {path.split('?')[0]}", head.encode("latin-1") + (
        body if length != "huge" else body[:64]
    )


def http_exchange(port: int, raw: bytes) -> bytes:
    """Send one raw request to 127.0.0.1:`port` and read its answer: the head, then the body
    its ``Content-Length`` announces (none for HEAD; up to the close without one). The write side stays open: aiohttp
    takes a half-closed connection for a client gone and answers nothing; and it keeps a
    connection whose announced body was not sent open a while to drain it, so the answer is
    read by its length, not by the close."""
    with socket.create_connection(("127.0.0.1", port), timeout=REPLY_SECONDS) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(raw)
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while b"\r\n\r\n" not in answer and (chunk := sock.recv(65536)):
                answer += chunk
            head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
            lengths = [
                line.split(":", 1)[1].strip()
                for line in head.split("\r\n")
                if line.startswith("content-length:")
            ]
            body = (
                0
                if raw.startswith(b"HEAD ")
                else int(lengths[0])
                if lengths and lengths[0].isdigit()
                else None
            )
            want = None if body is None else len(head) + 4 + body
            while (want is None or len(answer) < want) and (chunk := sock.recv(65536)):
                answer += chunk
    return answer


def check_http_answer(answer: bytes) -> str:
    """The stable code one HTTP answer carries (``ok`` for a page served, ``http_parser`` for
    the parser's own 400).

    Raises:
        AssertionError: no status line, a 5xx, or a refusal without exactly one known code.
    """
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    assert lines[0].startswith("HTTP/1."), f"no status line: {answer[:80]!r}"
    status = int(lines[0].split()[1])
    assert status < 500, lines[0]
    codes = [
        line.split(":", 1)[1].strip() for line in lines[1:] if line.lower().startswith("fleetwatch-code:")
    ]
    if status < 400:
        assert not codes, f"{status} with a code"
        return "ok"
    if not codes and status == 400 and "Fleetwatch-Code" not in head:
        return "http_parser"
    assert len(codes) == 1, f"{lines[0]}: codes {codes}"
    return str(Code(codes[0]))


def fuzz_http(port: int, examples: int, tally: Tally) -> None:
    """Send `examples` generated requests to the page on `port`; count into `tally`."""

    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=http_case(port))
    def run(case: tuple[str, bytes]) -> None:
        _, raw = case
        tally.sent += 1
        tally.codes[check_http_answer(http_exchange(port, raw))] += 1

    run()
