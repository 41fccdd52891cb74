"""A local stand-in for Anthropic's Messages API that plays scripts (tests, demos, benchmarks).

It is an aiohttp server on 127.0.0.1 serving ``POST /v1/messages`` the way the real API does,
so the real Anthropic SDK talks to it unchanged (``AsyncAnthropic(base_url=standin.base_url)``):

- the key: ``Authorization: Bearer <key>`` (the SDK 2.x form) or ``x-api-key: <key>``; a wrong
  or missing key gets 401 ``authentication_error``;
- non-streaming: one JSON ``message``; ``"stream": true``: server-sent events in the real order
  (``message_start``, ``ping``, per block ``content_block_start`` / ``content_block_delta``
  (``text_delta`` or ``input_json_delta`` in chunks) / ``content_block_stop``, then
  ``message_delta`` with ``stop_reason`` and usage, then ``message_stop``);
- usage counts tokens as bytes / 4. When the request marks ``cache_control`` on its tools or
  system blocks, the prefix up to the last mark (tools, then system) is "cached": the first
  time a prefix's bytes are seen they count as ``cache_creation_input_tokens``, later as
  ``cache_read_input_tokens``. A prefix that changes by one byte is a new prefix, so a test can
  see whether the cached prompt stayed byte-identical.

A **script** decides each answer: a callable ``(ModelRequest) -> Reply`` (or an awaitable of
one; see `services.lab.model_scripts.api`, re-exported here), or the name of one in
`services.lab.model_scripts.SCRIPTS` (``demo``: the demo model, which reads and answers the
fleet questions it understands and proposes only a change it was asked for; ``refuse``,
``echo``).
Every request is recorded (`ModelStandin.requests`) so tests can assert on what reached the
model. Faults (`ModelStandin.set_fault`): ``http_500``, ``overloaded`` (529), ``slow``
(answer ``seconds`` late), ``stream_error`` (an ``error`` event after ``message_start``).

A **server profile** (`PROFILES`, `ModelStandin.profile`) reproduces how an Anthropic-compatible
server departs from Anthropic's API, as public issue threads of those servers describe it
(``anthropic``: none; the others: `Profile`'s fields). The script's answer is the same under
every profile; only its wire form changes. Chosen by ``--profile NAME``, ``fleetwatch lab
--model-profile NAME``, and ``POST /_lab/model {"profile": NAME}`` (``GET`` says which).

Command line: ``python -m services.lab.model_standin --script demo --port 8771 --key K --profile P``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import inspect
import json
import secrets
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from aiohttp import web

from services.lab import LabError
from services.lab.model_scripts import SCRIPTS
from services.lab.model_scripts.api import (
    ModelRequest,
    Reply,
    Script,
    Text,
    ToolResult,
    ToolUse,
    call,
    json_in,
    say,
)
from shared.errors import FleetwatchError
from shared.web.local_http import serve_local

__all__ = [
    "DEFAULT_KEY",
    "FAULT_KINDS",
    "ModelRequest",
    "PROFILES",
    "ModelStandin",
    "Profile",
    "Reply",
    "Script",
    "StandinHandle",
    "Text",
    "ToolResult",
    "ToolUse",
    "build_app",
    "cached_prefix",
    "call",
    "json_in",
    "main",
    "resolve_script",
    "run_model_standin",
    "say",
]

DEFAULT_KEY = "standin-key"
"""The key the stand-in accepts when none is given (it is not a secret: loopback, no model)."""
FAULT_KINDS = ("http_500", "overloaded", "slow", "stream_error")


@dataclass(frozen=True)
class Profile:
    """How one Anthropic-compatible server answers (each field a deviation; the defaults are
    Anthropic's API).

    Attributes:
        end_turn: a turn with ``tool_use`` blocks ends with ``stop_reason: "end_turn"``.
        empty_text: an empty text block leads every answer.
        parallel: several tool calls in one turn: ``""`` (as Anthropic), ``"merged"`` (one
            ``tool_use`` block, the first one's name and id, every call's input JSON run together
            as its input)
            or ``"same_id"`` (split, but every block carries the first block's id).
        tool_choice: False: a request with ``tool_choice`` gets 400.
        count_tokens: False: ``/v1/messages/count_tokens`` is 404.
        sse_errors: False: a failure mid-answer is an HTTP status, never an SSE ``error`` event.
        checks_version: False: ``anthropic-version`` is ignored (Anthropic: 400 without it).
        checks_key: False: any key, or none, is accepted.
        tool_json: how a tool call's input streams: ``""`` (``input_json_delta`` chunks),
            ``"dropped"`` (every other chunk after the first lost) or ``"as_text"`` (the call
            streamed as text: ``{"name": ..., "arguments": ...}``, no ``tool_use`` block).
    """

    name: str
    end_turn: bool = False
    empty_text: bool = False
    parallel: str = ""
    tool_choice: bool = True
    count_tokens: bool = True
    sse_errors: bool = True
    checks_version: bool = True
    checks_key: bool = True
    tool_json: str = ""


PROFILES: Mapping[str, Profile] = MappingProxyType(
    {
        p.name: p
        for p in (
            Profile("anthropic"),
            Profile(
                "ollama",
                end_turn=True,
                empty_text=True,
                count_tokens=False,
                tool_choice=False,
                checks_key=False,
            ),
            Profile(
                "llamacpp",
                end_turn=True,
                tool_json="as_text",
                count_tokens=False,
                checks_version=False,
                checks_key=False,
            ),
            Profile("vllm", parallel="same_id", tool_choice=False, sse_errors=False, checks_version=False),
            Profile("sglang", end_turn=True, tool_json="dropped", count_tokens=False, checks_version=False),
            Profile("litellm", empty_text=True, parallel="merged", sse_errors=False, count_tokens=False),
        )
    }
)
"""The server profiles by name (`Profile`). Every deviation the issue threads report is in at
least one profile; which server carries which is this lab's choice after those reports, not a
claim about every version of that server (they change): test against the real one too."""
_JSON_CHUNK = 24
"""Characters of tool input JSON per ``input_json_delta`` (the real API splits it too)."""


# --- scripts ------------------------------------------------------------------------------


def resolve_script(script: str | Script) -> Script:
    """A script callable from a callable or a name in `SCRIPTS`.

    Raises:
        LabError: no script by that name.
    """
    if callable(script):
        return script
    if script not in SCRIPTS:
        raise LabError(f"no model script {script!r}; known: {', '.join(sorted(SCRIPTS))}")
    return SCRIPTS[script]


# --- the server ---------------------------------------------------------------------------


def _tokens(data: bytes | str) -> int:
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    return max(1, (size + 3) // 4)


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def cached_prefix(body: Mapping[str, Any]) -> bytes | None:
    """The bytes of the cached prefix (tools, then system, up to the last ``cache_control``),
    or None when nothing is marked. The real API caches in that order."""
    tools = list(body.get("tools") or [])
    system = body.get("system")
    blocks = system if isinstance(system, list) else []
    parts: list[Any] = []
    marked = None
    for item in [*tools, *blocks]:
        parts.append(item)
        if isinstance(item, dict) and item.get("cache_control"):
            marked = len(parts)
    return None if marked is None else _compact(parts[:marked])


@dataclass
class _Fault:
    kind: str
    count: int
    seconds: float


@dataclass
class ModelStandin:
    """The stand-in's state: the script, the key, recorded requests, faults, cached prefixes."""

    script: Script
    key: str = DEFAULT_KEY
    requests: list[ModelRequest] = field(default_factory=list)
    faults: list[_Fault] = field(default_factory=list)
    prefixes: set[str] = field(default_factory=set)
    model: str = "standin-model"
    profile: Profile = PROFILES["anthropic"]
    counted: int = 0
    """Requests to ``/v1/messages/count_tokens`` (served or not)."""

    def set_profile(self, name: str) -> None:
        """Answer as server profile `name` from now on.

        Raises:
            LabError: no such profile.
        """
        if name not in PROFILES:
            raise LabError(f"no model profile {name!r}; known: {', '.join(PROFILES)}")
        self.profile = PROFILES[name]

    def set_fault(self, kind: str, *, count: int = 1, seconds: float = 1.0) -> None:
        """The next `count` requests get fault `kind` (see `FAULT_KINDS`).

        Raises:
            LabError: an unknown kind or a count below 1.
        """
        if kind not in FAULT_KINDS or count < 1 or not 0 <= seconds <= 600:
            raise LabError(f"no such model fault: {kind!r} x{count}")
        self.faults.append(_Fault(kind, count, seconds))

    def clear(self) -> None:
        """Forget recorded requests, faults and cached prefixes."""
        self.requests.clear()
        self.faults.clear()
        self.prefixes.clear()

    def _take_fault(self) -> _Fault | None:
        for fault in self.faults:
            if fault.count > 0:
                fault.count -= 1
                return fault
        return None

    def _authorised(self, request: web.Request) -> bool:
        if not self.profile.checks_key:
            return True
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        given = token.strip() if scheme.lower() == "bearer" else request.headers.get("x-api-key", "")
        return secrets.compare_digest(given.encode(), self.key.encode())

    def _usage(self, body: Mapping[str, Any], raw: bytes) -> dict[str, int]:
        prefix = cached_prefix(body)
        total = _tokens(raw)
        if prefix is None:
            return {"input_tokens": total, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        digest = hashlib.sha256(prefix).hexdigest()
        cached = _tokens(prefix)
        seen = digest in self.prefixes
        self.prefixes.add(digest)
        return {
            "input_tokens": max(1, total - cached),
            "cache_creation_input_tokens": 0 if seen else cached,
            "cache_read_input_tokens": cached if seen else 0,
        }

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/messages``."""
        if not self._authorised(request):
            return _error(401, "authentication_error", "invalid x-api-key")
        if self.profile.checks_version and not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "invalid_request_error", "body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "invalid_request_error", "messages: field required")
        if "tool_choice" in body and not self.profile.tool_choice:
            return _error(400, "invalid_request_error", "tool_choice: not supported")
        recorded = ModelRequest(seq=len(self.requests) + 1, body=body, raw=raw)
        self.requests.append(recorded)
        fault = self._take_fault()
        if fault is not None and fault.kind == "http_500":
            return _error(500, "api_error", "Internal server error (stand-in fault)")
        if fault is not None and fault.kind == "overloaded":
            return _error(529, "overloaded_error", "Overloaded (stand-in fault)")
        if fault is not None and fault.kind == "slow":
            await asyncio.sleep(fault.seconds)
        answer = self.script(recorded)
        reply = await answer if inspect.isawaitable(answer) else answer
        message = self._message(body, raw, reply)
        broken = fault is not None and fault.kind == "stream_error"
        if broken and not self.profile.sse_errors:
            return _error(500, "api_error", "Internal server error (stand-in fault)")
        if not recorded.stream:
            return web.json_response(message)
        return await self._stream(request, message, broken=broken)

    async def count_tokens(self, request: web.Request) -> web.Response:
        """``POST /v1/messages/count_tokens`` (bytes / 4), or 404 when the profile has none."""
        self.counted += 1
        if not self.profile.count_tokens:
            return _error(404, "not_found_error", "Not found")
        if not self._authorised(request):
            return _error(401, "authentication_error", "invalid x-api-key")
        return web.json_response({"input_tokens": _tokens(await request.read())})

    async def control(self, request: web.Request) -> web.Response:
        """``GET /_lab/model``: the profile; ``POST {"profile": NAME}``: choose it (400: unknown)."""
        if request.method == "POST":
            try:
                body = await request.json()
                self.set_profile(str(body["profile"]))
            except (ValueError, KeyError, TypeError, LabError) as exc:
                return web.json_response({"error": str(exc), "profiles": list(PROFILES)}, status=400)
        return web.json_response({"profile": self.profile.name, "profiles": list(PROFILES)})

    def _message(self, body: Mapping[str, Any], raw: bytes, reply: Reply) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for block in reply.content:
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            else:
                tool_id = block.id or f"toolu_{secrets.token_hex(12)}"
                content.append(
                    {"type": "tool_use", "id": tool_id, "name": block.name, "input": dict(block.input)}
                )
        content = _as_served(content, self.profile)
        stop = reply.stop_reason or (
            "tool_use"
            if any(b["type"] == "tool_use" for b in content) and not self.profile.end_turn
            else "end_turn"
        )
        output = reply.output_tokens if reply.output_tokens is not None else _tokens(_compact(content))
        return {
            "id": f"msg_{secrets.token_hex(12)}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model") or self.model),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {**self._usage(body, raw), "output_tokens": output},
        }

    async def _stream(
        self, request: web.Request, message: dict[str, Any], *, broken: bool
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)

        async def send(event: str, data: Mapping[str, Any]) -> None:
            await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())

        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        await send("message_start", {"type": "message_start", "message": start})
        if broken:
            await send(
                "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            )
            await response.write_eof()
            return response
        await send("ping", {"type": "ping"})
        for index, block in enumerate(message["content"]):
            for event, data in _block_events(index, block, dropped=self.profile.tool_json == "dropped"):
                await send(event, data)
        await send(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {
                    "output_tokens": usage["output_tokens"],
                    "input_tokens": usage["input_tokens"],
                    "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                    "cache_read_input_tokens": usage["cache_read_input_tokens"],
                },
            },
        )
        await send("message_stop", {"type": "message_stop"})
        await response.write_eof()
        return response


def _as_served(content: list[dict[str, Any]], profile: Profile) -> list[dict[str, Any]]:
    """The content blocks as `profile`'s server sends them (see `Profile`)."""
    uses = [b for b in content if b["type"] == "tool_use"]
    if profile.tool_json == "as_text":
        calls = [json.dumps({"name": b["name"], "arguments": b["input"]}) for b in uses]
        content = [b for b in content if b["type"] != "tool_use"] + [
            {"type": "text", "text": c} for c in calls
        ]
    elif len(uses) > 1 and profile.parallel == "merged":
        merged = {**uses[0], "input": "".join(json.dumps(b["input"]) for b in uses)}
        content = [b for b in content if b["type"] != "tool_use"] + [merged]
    elif len(uses) > 1 and profile.parallel == "same_id":
        content = [{**b, "id": uses[0]["id"]} if b["type"] == "tool_use" else b for b in content]
    return [{"type": "text", "text": ""}, *content] if profile.empty_text else content


def _block_events(
    index: int, block: Mapping[str, Any], *, dropped: bool = False
) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    if block["type"] == "text":
        events.append(
            ("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
        )
        text = block["text"]
        for start in range(0, len(text), 40):
            delta = {"type": "text_delta", "text": text[start : start + 40]}
            events.append(("content_block_delta", {"index": index, "delta": delta}))
    else:
        head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        events.append(("content_block_start", {"index": index, "content_block": head}))
        data = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
        for number, start in enumerate(range(0, len(data), _JSON_CHUNK)):
            if dropped and number % 2 == 1:
                continue
            delta = {"type": "input_json_delta", "partial_json": data[start : start + _JSON_CHUNK]}
            events.append(("content_block_delta", {"index": index, "delta": delta}))
    events.append(("content_block_stop", {"index": index}))
    return [(name, {"type": name, **data}) for name, data in events]


def _error(status: int, kind: str, message: str) -> web.Response:
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)


def build_app(standin: ModelStandin) -> web.Application:
    """The aiohttp app serving `standin` (``POST /v1/messages``)."""
    app = web.Application(client_max_size=8 << 20)
    app.router.add_post("/v1/messages", standin.handle)
    app.router.add_post("/v1/messages/count_tokens", standin.count_tokens)
    app.router.add_get("/_lab/model", standin.control)
    app.router.add_post("/_lab/model", standin.control)
    return app


@dataclass
class StandinHandle:
    """A running stand-in: ``base_url`` (``http://127.0.0.1:<port>``) and its state."""

    standin: ModelStandin
    base_url: str

    @property
    def requests(self) -> list[ModelRequest]:
        return self.standin.requests

    @property
    def key(self) -> str:
        return self.standin.key

    def set_fault(self, kind: str, *, count: int = 1, seconds: float = 1.0) -> None:
        self.standin.set_fault(kind, count=count, seconds=seconds)

    def set_script(self, script: str | Script) -> None:
        self.standin.script = resolve_script(script)

    def set_profile(self, name: str) -> None:
        self.standin.set_profile(name)


@contextlib.asynccontextmanager
async def run_model_standin(
    script: str | Script = "demo", *, key: str = DEFAULT_KEY, port: int = 0, profile: str = "anthropic"
) -> AsyncIterator[StandinHandle]:
    """Serve a stand-in on ``127.0.0.1:port`` (0: any free port) for the ``async with`` block,
    answering as server `profile` (`PROFILES`).

    Raises:
        LabError: an unknown script or profile name.
        FleetwatchError: ``socket_in_use`` when the port cannot be bound.
    """
    standin = ModelStandin(resolve_script(script), key)
    standin.set_profile(profile)
    async with serve_local(build_app(standin), port) as base_url:
        yield StandinHandle(standin, base_url)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m services.lab.model_standin``: serve until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m services.lab.model_standin",
        description="A local stand-in for the Anthropic Messages API that plays the demo model or a script.",
    )
    parser.add_argument("--script", default="demo", help="named script (demo, refuse, echo)")
    parser.add_argument("--port", type=int, default=8771, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--key", default=DEFAULT_KEY, help="the API key the stand-in accepts")
    parser.add_argument(
        "--profile", default="anthropic", choices=list(PROFILES), help="the server it answers as"
    )
    args = parser.parse_args(argv)

    async def serve() -> None:
        async with run_model_standin(
            args.script, key=args.key, port=args.port, profile=args.profile
        ) as handle:
            print(
                f"Model stand-in at {handle.base_url} (script {args.script}, profile {args.profile})",
                flush=True,
            )
            await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except FleetwatchError as exc:
        print(f"model_standin: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
