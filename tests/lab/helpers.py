"""Helpers for the lab's tests: a real MCP client session to a running lab."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import DEFAULT_MAX_SSE_EVENT_SIZE, streamable_http_client


@asynccontextmanager
async def open_session(
    mcp_url: str,
    token: str | None,
    *,
    read_timeout_seconds: float | None = None,
    max_sse_event_size: int | None = DEFAULT_MAX_SSE_EVENT_SIZE,
) -> AsyncIterator[ClientSession]:
    """An initialized MCP session over streamable HTTP, sending ``token`` as the bearer."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(mcp_url, http_client=http, max_sse_event_size=max_sse_event_size) as (
            read,
            write,
        ),
        ClientSession(read, write, read_timeout_seconds=read_timeout_seconds) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: types.CallToolResult) -> str:
    """The result's text content (the first block)."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def data_of(result: types.CallToolResult) -> Any:
    """The JSON a successful result carries; its text and structured content agree."""
    assert not result.is_error, text_of(result)
    data = json.loads(text_of(result))
    assert data == result.structured_content
    return data


async def raw_call(
    session: ClientSession, name: str, arguments: dict[str, Any], *, timeout: float | None = None
) -> types.CallToolResult:
    """``tools/call`` without the SDK's output-schema check (it raises on drift or bad JSON,
    which a tolerant client has to read around)."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    return await session.send_request(request, types.CallToolResult, request_read_timeout_seconds=timeout)
