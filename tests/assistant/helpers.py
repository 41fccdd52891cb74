"""Helpers for the assistant's tests: boundary fakes (a proposal sink, a counting HTTP transport,
a concurrency-counting reader) and scripted models. Nothing of ours is mocked: fakes enter
through constructors."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from services.assistant.data_block import CLOSE, OPEN
from services.lab.model_standin import ModelRequest, Reply, StandinHandle, ToolResult, say
from services.lab.server import LabHandle
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.errors import Code, FleetwatchError
from shared.policy.loader import ToolPolicy
from shared.wire.approval import (
    Count,
    ExpireTurn,
    GetProposalState,
    ProposalAccepted,
    ProposalState,
    RecordAsk,
    RecordRefusal,
    SubmitProposal,
)
from shared.wire.executor import ListWritable, UpcomingEvent, WritableChannel, WritableDevice, WritableDevices

DEVICES = "get_devices_in_my_team"
ENG101 = "19012340201"
RECORD_ENG101 = {
    "tool": "batch_recording",
    "arguments": {"action": "start", "device_ids": [f"{ENG101}-1"]},
    "reason": "class soon",
}
"""A proposal the campus normal team can resolve: start recording ENG 101 Auditorium's channel 1."""


SANDBOX_CLASSROOM = "29088800004"
WRITABLE = WritableDevices(
    devices=(
        WritableDevice(
            device_id=SANDBOX_CLASSROOM,
            name="Sandbox Classroom",
            model="Pearl Mini",
            online=True,
            channels=(WritableChannel(channel_id="1", name="Lecture", recording=False),),
            next_event=UpcomingEvent(
                event_id="sbx6c4d1e3:1791486240",
                title="Sandbox practice lecture",
                start="2026-09-16T13:25:00.000Z",
                finish="2026-09-16T14:15:00.000Z",
            ),
        ),
    ),
    read_at="2026-09-16T13:00:00.000Z",
)
"""What a fake sink answers ``list_writable_devices`` with: the campus sandbox's idle classroom,
its class 25 minutes after the tests' frozen start (2026-09-16 13:00 UTC)."""
RECORD_CLASSROOM = {
    "tool": "batch_recording",
    "arguments": {"action": "start", "device_ids": [f"{SANDBOX_CLASSROOM}-1"]},
    "reason": "class soon",
}
"""A proposal the writable list resolves: start recording the sandbox classroom's channel 1."""


@dataclass
class FakeSink:
    """A proposal sink that accepts everything (or refuses with `refuse_with`) and keeps
    states in memory. It checks nothing: the real intake does (see test_fence.py).
    `writable_reply` is its answer to ``list_writable_devices``."""

    refuse_with: Code | None = None
    writable_reply: WritableDevices | FleetwatchError = WRITABLE
    writable_calls: int = 0
    submissions: list[SubmitProposal] = field(default_factory=list)
    states: dict[str, ProposalState] = field(default_factory=dict)
    turns: dict[str, str] = field(default_factory=dict)
    expired_turns: list[str] = field(default_factory=list)
    records: list[RecordAsk | RecordRefusal] = field(default_factory=list)

    async def call(self, request: Any, *, timeout_seconds: float | None = None) -> Any:
        """What approval.sock's client does with `request`, in memory."""
        match request:
            case SubmitProposal():
                return await self.submit(request)
            case GetProposalState(proposal_id=proposal_id):
                return await self.state(proposal_id)
            case ListWritable():
                return await self.writable()
            case ExpireTurn(turn_id=turn_id):
                return Count(count=await self.expire_turn(turn_id))
        await self.record(request)
        return Count(count=1)

    async def submit(self, proposal: SubmitProposal) -> ProposalAccepted:
        self.submissions.append(proposal)
        if self.refuse_with is not None:
            raise FleetwatchError(self.refuse_with, "refused by the fake intake")
        proposal_id = f"p_{len(self.submissions)}"
        arguments = proposal.arguments
        named = arguments.get("device_ids") or [arguments.get("device_id")]
        self.states[proposal_id] = ProposalState(
            proposal_id=proposal_id,
            tool=proposal.tool,
            status="pending",
            action=arguments.get("action"),
            targets=tuple(dict.fromkeys(str(t).split("-")[0] for t in named if t)),
        )
        self.turns[proposal_id] = proposal.turn_id or ""
        return ProposalAccepted(proposal_id=proposal_id, expires_at="2026-09-16T13:05:00.000Z")

    async def state(self, proposal_id: str) -> ProposalState:
        if proposal_id not in self.states:
            raise FleetwatchError(Code.PROPOSAL_NOT_FOUND, "no such proposal")
        return self.states[proposal_id]

    async def writable(self) -> WritableDevices:
        self.writable_calls += 1
        if isinstance(self.writable_reply, FleetwatchError):
            raise self.writable_reply
        return self.writable_reply

    async def expire_turn(self, turn_id: str) -> int:
        self.expired_turns.append(turn_id)
        count = 0
        for proposal_id, turn in self.turns.items():
            if turn == turn_id and self.states[proposal_id].status == "pending":
                self.set_status(proposal_id, "expired")
                count += 1
        return count

    async def record(self, record: RecordAsk | RecordRefusal) -> None:
        self.records.append(record)

    def set_status(self, proposal_id: str, status: str, **more: Any) -> None:
        old = self.states[proposal_id]
        self.states[proposal_id] = ProposalState(
            proposal_id=proposal_id,
            tool=old.tool,
            status=status,
            action=old.action,
            targets=old.targets,
            **more,
        )


class CountingTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that counts the MCP ``tools/call`` requests it carries."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.tool_calls: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.content
        if b'"tools/call"' in body:
            self.tool_calls.append(json.loads(body)["params"]["name"])
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class TrackingReader:
    """Wraps a reader and records how many reads were in flight at once, and their order."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.in_flight = 0
        self.max_in_flight = 0
        self.started: list[str] = []

    async def call_batched(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.started.append(tool)
        try:
            return await self._inner.call_batched(tool, arguments)
        finally:
            self.in_flight -= 1

    async def snapshot(self, **options: Any) -> Any:
        return await self._inner.snapshot(**options)


def model_client(standin: StandinHandle, *, timeout: float = 20.0) -> anthropic.AsyncAnthropic:
    """The real SDK pointed at the stand-in, without retries."""
    return anthropic.AsyncAnthropic(
        api_key=standin.key, base_url=standin.base_url, max_retries=0, timeout=timeout
    )


def sequence(*replies: Reply | Callable[[ModelRequest], Reply]) -> Callable[[ModelRequest], Reply]:
    """A script answering its n-th request with the n-th reply (a callable is called with the
    request); after the last, it says "done"."""
    counter = itertools.count()

    def script(request: ModelRequest) -> Reply:
        index = next(counter)
        if index >= len(replies):
            return say("done")
        reply = replies[index]
        return reply(request) if callable(reply) else reply

    return script


def blocks_in(text: str) -> list[Any]:
    """The JSON of every data block in `text`."""
    out = []
    rest = text
    while OPEN in rest:
        start = rest.index(OPEN)
        body_start = rest.index(">", start) + 1
        end = rest.index(CLOSE, body_start)
        out.append(json.loads(rest[body_start:end]))
        rest = rest[end + len(CLOSE) :]
    return out


def last_tool_results(request: ModelRequest) -> list[ToolResult]:
    """The ``tool_result`` blocks of a recorded request's last user message only."""
    last = request.messages[-1] if request.messages else {}
    ids = {
        b.get("tool_use_id")
        for b in last.get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    return [r for r in request.tool_results() if r.tool_use_id in ids]


def result_payloads(request: ModelRequest) -> list[Any]:
    """The JSON of every tool result (all data blocks) in a recorded request."""
    return [payload for result in request.tool_results() for payload in blocks_in(result.text)]


def error_codes(requests: Sequence[ModelRequest]) -> list[str]:
    """Every error code the model was shown in the last user message of each request."""
    codes = []
    for request in requests:
        for result in last_tool_results(request):
            for payload in blocks_in(result.text):
                if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
                    codes.append(payload["error"]["code"])
    return codes


@contextlib.asynccontextmanager
async def team_reader(lab: LabHandle, team: str, tool_policy: ToolPolicy) -> AsyncIterator[EpiphanReadClient]:
    """A guarded read client on one lab team."""
    connection = McpConnection(lab.mcp_url, lab.teams[team].token)
    async with EpiphanReadClient(connection, tool_policy.model_read_tools) as client:
        yield client
