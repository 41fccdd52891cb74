"""Generated input for the three sockets and the two pages (hypothesis), sent to real processes,
and the one rule every answer must keep: no crash, no state change, one stable code each.

Sockets (``executor.sock``, ``approval.sock``, ``assistant.sock``): each example draws one case,
one of

- ``hostile``: a request tag the socket serves with hostile field values (huge, hidden or
  bidi text, NUL, deep nesting, out-of-range numbers, wrong types), fields missing or extra;
- ``wrong_tag``: a map whose ``op`` the socket does not serve (or is not a string);
- ``not_msgpack`` / ``not_a_map``: a body that is no MessagePack, or not a map;
- ``truncated``: a header announcing more bytes than are sent before the write side closes;
- ``huge``: a header announcing more than the socket's frame cap (the body is never sent).

and sends it with up to six frames derived from its body without another draw (drawing is what
costs: about 8 ms a case, against well under 1 ms to send and check a frame): ``retagged`` (the
same fields under two other request tags the socket serves), ``cut`` (the body's first half and
first third, each as a complete frame) and ``flipped`` (one byte inverted, at two places). The complete frames of an example go
pipelined on one connection (the server answers each and keeps reading); a truncated or huge
frame gets a connection of its own, as the server closes it after answering.

Each frame's answer must be exactly one frame: an ``error`` reply whose ``code`` is a `Code` the socket
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
import hashlib
import math
import socket
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import msgspec
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from shared.errors import Code
from shared.wire import approval, assistant, executor
from shared.wire.assistant import FLEET_FRAME_BYTES
from shared.wire.protocol import MAX_FRAME_BYTES, TRANSPORT_CODES, GetCapabilities, Message, message_tag

REPLY_SECONDS = 30.0
"""Hard bound on one answer (a valid Ask reads the lab)."""
_HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class SocketContract:
    """What one socket serves: its request types, the codes each operation may answer, and its
    frame cap (bytes)."""

    service: str
    requests: tuple[type[Message], ...]
    codes: Mapping[str, frozenset[Code]]
    frame_cap: int = MAX_FRAME_BYTES

    @classmethod
    def of(cls, module: Any, frame_cap: int = MAX_FRAME_BYTES) -> SocketContract:
        codes = {row.name: row.declared | TRANSPORT_CODES for row in module.OPERATIONS.rows}
        return cls(module.__name__.rsplit(".", 1)[-1], tuple(module.REQUESTS), codes, frame_cap)

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(message_tag(r) for r in self.requests)

    def allowed(self, tag: str | None) -> frozenset[Code]:
        return self.codes.get(tag or "", TRANSPORT_CODES)


CONTRACTS = {
    "executor": SocketContract.of(executor),
    "approval_web": SocketContract.of(approval),
    "assistant": SocketContract.of(assistant, FLEET_FRAME_BYTES),
}
"""Service -> its socket's contract (the manifests the services serve; assistant.sock carries a
fleet's view, so its frames may be up to `FLEET_FRAME_BYTES`)."""


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
        # Hypothesis also draws strings it finds in the code, the socket's own tags among them:
        # those are not a wrong tag.
        op = draw(st.one_of(HOSTILE_TEXT, HOSTILE_LEAF).filter(lambda op: op not in contract.tags))
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
    announced = draw(st.integers(contract.frame_cap + 1, 2**32 - 1))
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


def _answers(sock: socket.socket, *, shut_after_first: bool) -> list[bytes]:
    """Every frame body the server sends on `sock` until it closes (then the write side is
    closed after the first answer when `shut_after_first`)."""
    answers: list[bytes] = []
    while True:
        try:
            header = _read_exactly(sock, _HEADER.size)
        except ConnectionResetError:
            break
        if len(header) < _HEADER.size:
            break
        answers.append(_read_exactly(sock, _HEADER.unpack(header)[0]))
        if shut_after_first:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
    return answers


def exchange(path: Path, raw: bytes, *, close_write: bool = False) -> list[bytes]:
    """Send `raw` on a fresh connection to the unix socket at `path` (then close the write
    side when `close_write`, or once the answer came); every frame body answered until the
    server closes (bounded by `REPLY_SECONDS`)."""
    return exchange_pipelined(path, [raw], close_write=close_write)


def exchange_pipelined(path: Path, frames: list[bytes], *, close_write: bool = True) -> list[bytes]:
    """Send `frames` back to back on one connection to the unix socket at `path`, close the
    write side (at once with `close_write`, else after the first answer), and read every answer
    until the server closes (bounded by `REPLY_SECONDS` per read)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(REPLY_SECONDS)
        sock.connect(str(path))
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"".join(frames))
        if close_write:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
        return _answers(sock, shut_after_first=not close_write)


@dataclass
class Tally:
    """What a fuzz run saw: frames or requests sent, codes answered, and every broken rule."""

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
    return check_one_answer(contract, kind, tag, frames[0])


def check_one_answer(contract: SocketContract, kind: str, tag: str | None, frame: bytes) -> str:
    """`check_frame_answer` for one answered frame."""
    answer = msgspec.msgpack.decode(frame)
    assert isinstance(answer, dict) and isinstance(answer.get("op"), str), f"{kind}: not a message"
    if answer["op"] != "error":
        assert kind in ("hostile", "retagged", "flipped"), f"{kind}: answered {answer['op']}"
        return f"reply:{answer['op']}"
    code = Code(answer["code"])
    allowed = contract.allowed(tag if kind in ("hostile", "truncated", "retagged", "flipped") else None)
    assert code in allowed, f"{kind} {tag}: {code} is not declared for it"
    return str(code)


@dataclass(frozen=True)
class Frame:
    """One frame to send: what kind, its bytes, the request tag it carries (if any)."""

    kind: str
    raw: bytes
    tag: str | None

    @property
    def complete(self) -> bool:
        """False for a frame after which the server closes the connection."""
        return self.kind not in ("truncated", "huge")


def derived(contract: SocketContract, kind: str, raw: bytes, tag: str | None) -> list[Frame]:
    """The drawn case and the frames derived from its body (see the module docstring): two
    retagged, two cut, two flipped, each where the body allows."""
    frames = [Frame(kind, raw, tag)]
    if kind == "huge":
        return frames
    body = raw[_HEADER.size :]
    digest = hashlib.blake2b(body, digest_size=16).digest()
    if kind in ("hostile", "truncated", "wrong_tag"):
        with contextlib.suppress(msgspec.DecodeError):
            fields = msgspec.msgpack.decode(body)
            if isinstance(fields, dict):
                tags = contract.tags
                for other in dict.fromkeys(tags[(digest[0] + i) % len(tags)] for i in range(2)):
                    retagged = msgspec.msgpack.encode({**fields, "op": other})
                    frames.append(Frame("retagged", _HEADER.pack(len(retagged)) + retagged, other))
    if kind != "not_msgpack":
        for cut in dict.fromkeys(body[: len(body) // d] for d in (2, 3)):
            if 0 < len(cut) < len(body):
                frames.append(Frame("cut", _HEADER.pack(len(cut)) + cut, None))
    for i in range(2 if body else 0):
        at = int.from_bytes(digest[2 + 4 * i : 6 + 4 * i], "big") % len(body)
        flipped = body[:at] + bytes([body[at] ^ 0xFF]) + body[at + 1 :]
        frames.append(Frame("flipped", _HEADER.pack(len(flipped)) + flipped, tag))
    return frames


def send_case(
    contract: SocketContract, path: Path, case: tuple[str, bytes, str | None], tally: Tally
) -> None:
    """Send one drawn case and its derived frames; count and check every answer.

    Raises:
        AssertionError: a frame answered not exactly once, or with an undeclared code.
    """
    frames = derived(contract, *case)
    complete = [f for f in frames if f.complete]
    if complete:
        answers = exchange_pipelined(path, [f.raw for f in complete])
        tally.sent += len(complete)
        kinds = [f.kind for f in complete]
        assert len(answers) == len(complete), f"{kinds}: {len(answers)} answers to {len(complete)} frames"
        for frame, answer in zip(complete, answers, strict=True):
            tally.codes[check_one_answer(contract, frame.kind, frame.tag, answer)] += 1
    for frame in frames:
        if not frame.complete:
            tally.sent += 1
            answers = exchange(path, frame.raw, close_write=frame.kind == "truncated")
            tally.codes[check_frame_answer(contract, frame.kind, frame.tag, answers)] += 1


FRAMES_PER_CASE = 5
"""About how many frames one drawn case sends (itself and the frames derived from it)."""
_FAST = {
    "database": None,
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    "phases": (Phase.generate,),
}
"""Hypothesis without its example database and without shrinking: a failing case is reported
as drawn (shrinking would resend it again and again, each waiting for a reply)."""


def seed_cases(contract: SocketContract) -> list[tuple[str, bytes, str | None]]:
    """One fixed case of each non-hostile kind: Hypothesis favours the simple end of
    `frame_case`'s choices, so a bounded run might never draw, say, a ``huge`` header."""
    wrong = msgspec.msgpack.encode({"op": "no-such-operation"})
    not_a_map = msgspec.msgpack.encode([1, 2, 3])
    return [
        ("wrong_tag", _HEADER.pack(len(wrong)) + wrong, None),
        ("not_msgpack", _HEADER.pack(1) + b"\xc1", None),
        ("not_a_map", _HEADER.pack(len(not_a_map)) + not_a_map, None),
        ("huge", _HEADER.pack(contract.frame_cap + 1), None),
    ]


def fuzz_socket(service: str, path: Path, frames: int, tally: Tally) -> None:
    """Send at least `frames` generated frames to `service`'s socket at `path`; count into
    `tally`. Raises AssertionError (naming the case as drawn) on the first broken rule."""
    contract = CONTRACTS[service]
    target = tally.sent + frames
    for case in seed_cases(contract):  # each kind at least once, whatever Hypothesis draws
        send_case(contract, path, case, tally)
    while tally.sent < target:

        @settings(max_examples=math.ceil((target - tally.sent) / FRAMES_PER_CASE) + 1, **_FAST)
        @given(case=frame_case(contract))
        def run(case: tuple[str, bytes, str | None]) -> None:
            try:
                send_case(contract, path, case, tally)
            except (AssertionError, OSError) as exc:
                kind, raw, tag = case
                raise AssertionError(f"{service} {kind} {tag} {raw[:200]!r}: {exc!r}") from exc

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
def http_case(draw: Callable[..., Any], port: int, name: str = "127.0.0.1") -> tuple[str, bytes]:
    """One raw HTTP/1.1 request for the page on `port` (its host name `name`): (method and
    path, bytes)."""
    method = draw(st.one_of(st.sampled_from(METHODS), st.from_regex(r"\A[A-Z]{1,12}\Z")))
    path = draw(st.one_of(st.sampled_from(PATHS), st.from_regex(r"\A/[A-Za-z0-9._~%/-]{0,60}\Z")))
    if draw(st.booleans()):
        path += "?" + draw(st.from_regex(r"\A[A-Za-z0-9=&%._-]{0,60}\Z"))
    own = f"{name}:{port}"
    headers: list[tuple[str, str]] = []
    loopbacks = [f"{other}:{port}" for other in ("127.0.0.1", "[::1]", "localhost") if other != name]
    host = draw(st.sampled_from([own, *loopbacks, "evil.example", "", None, own.upper()]))
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


_OWN_HEADERS = (b"host:", b"origin:", b"sec-fetch-site:")


def from_the_page(raw: bytes, port: int, name: str = "127.0.0.1") -> bytes:
    """`raw` as if the page's own form sent it: its Host, Origin and Sec-Fetch-Site replaced by
    the page's (so the request gets past the host and origin checks to what lies behind)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    first, *lines = head.split(b"\r\n")
    own = f"{name}:{port}".encode()
    kept = [line for line in lines if not line.lower().startswith(_OWN_HEADERS)]
    headers = [b"Host: " + own, b"Origin: http://" + own, b"Sec-Fetch-Site: same-origin", *kept]
    return b"\r\n".join([first, *headers]) + sep + body


REQUESTS_PER_CASE = 2
"""Requests one drawn case sends: as drawn, and as if from the page itself (`from_the_page`)."""


def fuzz_http(port: int, requests: int, tally: Tally, name: str = "127.0.0.1") -> None:
    """Send at least `requests` generated requests to the page on `port` (its host name
    `name`: ``127.0.0.1`` for the approval page, ``localhost`` for the ask page); count into
    `tally`. Raises AssertionError (naming the request as drawn) on the first broken rule."""
    target = tally.sent + requests
    while tally.sent < target:

        @settings(max_examples=math.ceil((target - tally.sent) / REQUESTS_PER_CASE) + 1, **_FAST)
        @given(case=http_case(port, name))
        def run(case: tuple[str, bytes]) -> None:
            label, raw = case
            for sent in dict.fromkeys((raw, from_the_page(raw, port, name))):
                tally.sent += 1
                try:
                    tally.codes[check_http_answer(http_exchange(port, sent))] += 1
                except (AssertionError, OSError) as exc:
                    raise AssertionError(f"{label} {sent[:300]!r}: {exc!r}") from exc

        run()
