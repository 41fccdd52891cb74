"""One MCP session to an Epiphan Edge server over streamable HTTP, with a bearer token.

This module is the only place that sends ``tools/call`` (and ``tools/list``, which the guarded
read client asks for to compare the server's tool definitions with the reviewed ones,
`shared.policy.definitions`, and ``fleetwatch capture`` to save them). It is used by exactly two classes: the guarded read client
(`shared.epiphan.read_client.EpiphanReadClient`) and the executor's write client
(`services.executor.write_client`); a test fails if any other module calls it. It knows nothing
of read or write: the guard lives in the callers.

Facts from Epiphan (see EPIPHAN.md): the server admits anonymous sessions and reports a missing
or expired sign-in *inside* a tool result; declared output schemas do not always match the data.
So results are read raw (``send_request`` with ``CallToolResult``), never validated against the
declared output schema by the SDK, and never retried here.

The MCP SDK and its HTTP client (`_sdk`) are imported when a session first opens, not when this
module is: a process or a command that never calls Epiphan never loads them (issue 14).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from shared.epiphan.sdk_import import import_client
from shared.errors import Code, FleetwatchError

if TYPE_CHECKING:
    import httpx2
    from mcp.client.session import ClientSession

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 30.0
"""Seconds a single tool call may take before it counts as timed out."""

_SESSION_GONE = re.compile(r"session (?:not found|terminated)", re.IGNORECASE)
"""How a server that no longer holds a session answers (HTTP 404): the SDK's server says
"Session not found" in a JSON-RPC error, its client "Session terminated" when the body is not
one. An idle session is reaped this way (the SDK's default is after 30 minutes), or a server
restarted: the connection is gone, not the call's fault (`Code.EPIPHAN_UNREACHABLE`)."""

MAX_RESULT_BYTES = 64 * 1024 * 1024
"""Largest single answer accepted (bytes). The SDK's default of 1 MiB is too small for a team
of a few thousand devices, whose device list is several MiB."""


class McpCallError(FleetwatchError):
    """The call did not produce a tool result (unreachable server, timeout, protocol error).

    ``code`` is `Code.EPIPHAN_UNREACHABLE`, `Code.EPIPHAN_TIMEOUT` or `Code.EPIPHAN_BAD_RESULT`.
    For a write this means the outcome is unknown: the request may have reached the server.
    """


@dataclass(frozen=True, slots=True)
class RawToolResult:
    """A tool result as the server sent it.

    Attributes:
        tool: the tool's name.
        is_error: the result's ``isError`` flag.
        structured: ``structuredContent`` when the server sent one, else None.
        text: every text content block joined by newlines ("" when there is none).
    """

    tool: str
    is_error: bool
    structured: Any
    text: str

    def data(self) -> Any:
        """The result's data: structured content, else the text parsed as JSON, else the text.

        Raises:
            ValueError: never; unreadable JSON is returned as the text itself (a ``str``).
        """
        if self.structured is not None:
            return self.structured
        try:
            return json.loads(self.text)
        except ValueError:
            return self.text


@functools.cache
def _sdk() -> SimpleNamespace:
    """The MCP SDK's parts this module uses, imported on first use (once per process).

    ``broken`` holds the exceptions that mean the connection broke (not a protocol answer).
    The SDK's client modules come without its server side (`shared.epiphan.sdk_import`)."""
    import anyio
    import httpx2
    import mcp_types

    session, streamable_http, exceptions = import_client(
        "mcp.client.session", "mcp.client.streamable_http", "mcp.shared.exceptions"
    )
    return SimpleNamespace(
        types=mcp_types,
        httpx2=httpx2,
        ClientSession=session.ClientSession,
        streamable_http_client=streamable_http.streamable_http_client,
        MCPError=exceptions.MCPError,
        broken=(httpx2.HTTPError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError),
    )


async def loaded_sdk() -> SimpleNamespace:
    """`_sdk`, imported in a thread the first time (a second or more on a busy machine), so the
    event loop of the process that reads Epiphan for the first time keeps answering meanwhile."""
    if _sdk.cache_info().currsize:
        return _sdk()
    return await asyncio.to_thread(_sdk)


def _root_cause(exc: BaseException) -> str:
    """The type name of the innermost first exception (task groups wrap them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return type(exc).__name__


class McpConnection:
    """An open MCP session; use as ``async with McpConnection(url, bearer) as conn``.

    Args:
        url: the server's MCP endpoint, e.g. ``http://127.0.0.1:8770/mcp``.
        bearer: the slot's access token, or None for an anonymous session. Never logged or shown
            in a repr.
        timeout_seconds: a bound on each call and on connecting.
        transport: an optional httpx2 transport (tests count requests with it).

    The session is opened lazily by the first `call`, so a call refused before it (by a guard)
    sends no byte at all. A session that broke is closed; the next `call` opens another, unless
    it says ``reopen=False`` (a write: it goes on the session the reads before it used, or not
    at all), or the connection was retired (`retire`). ``answered`` counts the calls that came
    back with a result, over every session.
    """

    def __init__(
        self,
        url: str,
        bearer: str | None,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url
        self._bearer = bearer
        self.timeout_seconds = timeout_seconds
        self._transport = transport
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._opened = False
        self._retired = False
        self.answered = 0
        self.sessions = 0
        """How many MCP sessions this connection opened (the read client takes the tool list's
        fingerprint again on each new one)."""

    @property
    def is_open(self) -> bool:
        """True while a session is open (the next call goes on it, not on a new one)."""
        return self._session is not None

    def __repr__(self) -> str:
        return f"McpConnection(url={self.url!r}, signed_in={self._bearer is not None})"

    async def __aenter__(self) -> McpConnection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the session (idempotent). Waits for the owning task to finish."""
        owner, closing = self._owner, self._closing
        self._owner, self._closing, self._session = None, None, None
        if owner is None or closing is None:
            return
        closing.set()
        sdk = _sdk()
        try:
            async with asyncio.timeout(self.timeout_seconds):
                await asyncio.shield(owner)
        except TimeoutError:
            owner.cancel()
        except asyncio.CancelledError:
            owner.cancel()  # the caller was cancelled while closing: end the owner, then go on ending
            raise
        except (sdk.MCPError, *sdk.broken):
            pass  # the session was already broken; closing it has nothing more to say

    async def retire(self) -> None:
        """Close the session and never open another on this connection: a call after this
        fails (`Code.EPIPHAN_UNREACHABLE`) without sending anything. For a token that left its
        slot (`shared.epiphan.signed_session`): a read still running with it cannot bring it
        back."""
        self._retired = True
        await self.close()

    async def _close_broken(self, session: ClientSession | None) -> None:
        """Close the session a failed call used, unless another call already replaced it (calls
        run at once on a warm session: the second to fail must not close the first's new one)."""
        if session is None or session is self._session:
            await self.close()

    async def _own(self, ready: asyncio.Future[ClientSession], closing: asyncio.Event) -> None:
        """Open the session, hand it over, keep it until ``closing`` is set; all in one task.

        anyio task groups (inside the SDK's transport) must be entered and left by the same
        task, so the session lives in this task and calls from any task use it.
        """
        sdk = _sdk()
        headers = {"Authorization": f"Bearer {self._bearer}"} if self._bearer else {}
        timeout = sdk.httpx2.Timeout(self.timeout_seconds)
        try:
            async with (
                sdk.httpx2.AsyncClient(
                    headers=headers, timeout=timeout, transport=self._transport
                ) as http_client,
                sdk.streamable_http_client(
                    self.url, http_client=http_client, max_sse_event_size=MAX_RESULT_BYTES
                ) as (read, write),
                sdk.ClientSession(read, write) as session,
            ):
                await session.initialize()
                ready.set_result(session)
                await closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(
                    McpCallError(Code.EPIPHAN_UNREACHABLE, f"cannot open an MCP session: {_root_cause(exc)}")
                )
            if not isinstance(exc, Exception):
                raise

    async def _open(self, *, reopen: bool = True) -> ClientSession:
        async with self._lock:
            if self._retired:
                raise McpCallError(Code.EPIPHAN_UNREACHABLE, "this connection's sign-in was withdrawn")
            if self._session is not None:
                return self._session
            if self._opened and not reopen:
                raise McpCallError(
                    Code.EPIPHAN_UNREACHABLE, "the session closed before this call; not reopened"
                )
            self._opened = True
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[ClientSession] = loop.create_future()
            closing = asyncio.Event()
            owner = loop.create_task(self._own(ready, closing), name=f"mcp-session {self.url}")
            self._owner, self._closing = owner, closing
            try:
                async with asyncio.timeout(self.timeout_seconds):
                    self._session = await asyncio.shield(ready)
                self.sessions += 1
            except BaseException:
                await self.close()
                raise
            return self._session

    async def list_tools(self, *, max_pages: int = 20) -> list[dict[str, Any]]:
        """The server's tools: ``[{name, description, input_schema, output_schema}]`` (the
        description is the server's untrusted text: compared with the reviewed one, shown only
        through `shared.text.display`, never sent to the model). Follows at most `max_pages`
        pages. Asks the server each time (the SDK's own per-session cache is not used).

        Raises:
            McpCallError: as `call`.
        """
        sdk = await loaded_sdk()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        try:
            async with asyncio.timeout(self.timeout_seconds * max_pages):
                session = await self._open()
                for _ in range(max_pages):
                    params = sdk.types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    result = await session.list_tools(params=params)
                    tools += [
                        {
                            "name": t.name,
                            "description": t.description,
                            "input_schema": t.input_schema,
                            "output_schema": t.output_schema,
                        }
                        for t in result.tools
                    ]
                    cursor = result.next_cursor
                    if not cursor:
                        break
        except TimeoutError as exc:
            await self.close()
            raise McpCallError(Code.EPIPHAN_TIMEOUT, "tools/list: no answer in time") from exc
        except sdk.MCPError as exc:
            await self.close()
            raise McpCallError(Code.EPIPHAN_BAD_RESULT, f"tools/list: protocol error {exc.code}") from exc
        except sdk.broken as exc:
            await self.close()
            raise McpCallError(Code.EPIPHAN_UNREACHABLE, f"tools/list: {type(exc).__name__}") from exc
        return tools

    async def call(
        self, tool: str, arguments: Mapping[str, Any] | None = None, *, reopen: bool = True
    ) -> RawToolResult:
        """Send one ``tools/call`` and return the raw result. Never retries. With
        ``reopen=False`` a session that closed since this connection first opened one is not
        replaced: the call fails (`Code.EPIPHAN_UNREACHABLE`) without sending anything.

        Raises:
            McpCallError: `Code.EPIPHAN_TIMEOUT` when no answer came within ``timeout_seconds``;
                `Code.EPIPHAN_UNREACHABLE` when the server could not be reached or the connection
                broke; `Code.EPIPHAN_BAD_RESULT` for a protocol-level error answer.
        """
        sdk = await loaded_sdk()
        types = sdk.types
        session: ClientSession | None = None
        try:
            async with asyncio.timeout(self.timeout_seconds):
                session = await self._open(reopen=reopen)  # McpCallError when none can be had
                result = await session.send_request(
                    types.CallToolRequest(
                        params=types.CallToolRequestParams(name=tool, arguments=dict(arguments or {}))
                    ),
                    types.CallToolResult,
                    request_read_timeout_seconds=self.timeout_seconds,
                )
        except TimeoutError as exc:
            await self._close_broken(session)
            raise McpCallError(
                Code.EPIPHAN_TIMEOUT, f"{tool}: no answer within {self.timeout_seconds:g} s"
            ) from exc
        except sdk.MCPError as exc:
            await self._close_broken(session)
            if exc.code == types.REQUEST_TIMEOUT:
                raise McpCallError(Code.EPIPHAN_TIMEOUT, f"{tool}: no answer in time") from exc
            if exc.code == types.CONNECTION_CLOSED:
                raise McpCallError(Code.EPIPHAN_UNREACHABLE, f"{tool}: connection closed") from exc
            if exc.code == types.INVALID_REQUEST and _SESSION_GONE.search(str(exc)):
                raise McpCallError(Code.EPIPHAN_UNREACHABLE, f"{tool}: the server ended the session") from exc
            raise McpCallError(Code.EPIPHAN_BAD_RESULT, f"{tool}: protocol error {exc.code}") from exc
        except sdk.broken as exc:
            await self._close_broken(session)
            raise McpCallError(Code.EPIPHAN_UNREACHABLE, f"{tool}: {type(exc).__name__}") from exc
        self.answered += 1
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        return RawToolResult(
            tool=tool,
            is_error=bool(result.is_error),
            structured=result.structured_content,
            text="\n".join(texts),
        )
