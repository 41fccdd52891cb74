"""The page's two questions to the executor: Inspect (read the card's facts afresh) and Execute.

`ExecutorClient` is the shape the page needs; `SocketExecutorClient` asks executor.sock.
Tests pass another implementation through `build_page_app` to count what reaches the executor.

Errors: `ExecutorError` (a `FleetwatchError`) with the executor's own code when it answered
with an error, or the transport's: ``service_unavailable`` (never reached: nothing ran) or
``service_no_answer`` (sent, then no answer: the outcome is unknown).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from shared.errors import Code, FleetwatchError
from shared.wire.client import request
from shared.wire.executor import Execute, ExecutionReport, Inspect, Inspection
from shared.wire.protocol import ErrorReply, ProtocolError


class ExecutorError(FleetwatchError):
    """Inspect or Execute did not give its answer; `code` says why; `raw_code` is the
    executor's text when it is not a declared code (then `code` is ``internal_error``)."""

    def __init__(self, code: Code, message: str | None = None, raw_code: str | None = None) -> None:
        super().__init__(code, message)
        self.raw_code = raw_code or str(code)


class ExecutorClient(Protocol):
    """What the page asks the executor."""

    async def inspect(self, proposal_id: str) -> Inspection:
        """A fresh read of the card's facts. Raises `ExecutorError`."""
        ...

    async def execute(self, request: Execute) -> ExecutionReport:
        """Run the consumed approval once (`request` carries what the person approved).
        Raises `ExecutorError`."""
        ...


def _error(reply: ErrorReply) -> ExecutorError:
    try:
        code = Code(reply.code)
    except ValueError:
        return ExecutorError(Code.INTERNAL_ERROR, reply.message[:200], raw_code=reply.code[:64])
    return ExecutorError(code, reply.message[:200] or None)


class SocketExecutorClient:
    """`ExecutorClient` over executor.sock, one connection per request.

    Args:
        path: ``settings.executor_socket``.
        inspect_timeout_seconds: the whole Inspect exchange (the executor reads Epiphan).
        execute_timeout_seconds: the whole Execute exchange (reads, one write, a re-read).
    """

    def __init__(
        self, path: Path, *, inspect_timeout_seconds: float = 20.0, execute_timeout_seconds: float = 90.0
    ) -> None:
        self.path = path
        self.inspect_timeout_seconds = inspect_timeout_seconds
        self.execute_timeout_seconds = execute_timeout_seconds

    async def inspect(self, proposal_id: str) -> Inspection:
        try:
            reply = await request(
                self.path,
                Inspect(proposal_id=proposal_id),
                Inspection,
                timeout_seconds=self.inspect_timeout_seconds,
            )
        except ProtocolError as exc:
            raise ExecutorError(exc.code, exc.message) from exc
        if isinstance(reply, ErrorReply):
            raise _error(reply)
        return reply

    async def execute(self, execute: Execute) -> ExecutionReport:
        try:
            reply = await request(
                self.path,
                execute,
                ExecutionReport,
                timeout_seconds=self.execute_timeout_seconds,
            )
        except ProtocolError as exc:
            # A reply that does not decode came after the request was sent: outcome unknown.
            code = (
                exc.code
                if exc.code in (Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER)
                else Code.SERVICE_NO_ANSWER
            )
            raise ExecutorError(code, exc.message) from exc
        if isinstance(reply, ErrorReply):
            raise _error(reply)
        return reply
