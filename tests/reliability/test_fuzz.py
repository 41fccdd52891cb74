"""Generated frames on the three sockets and generated HTTP on the two pages, against real
processes (the lab in this process; the executor, approval_web and the assistant with its ask
page as ``python -m`` processes over one store): no crash, no state change, one stable code
each (`tests.reliability.fuzz`). CI sends a bounded number (1,500 frames, 500 requests) to
one set of processes (the ``services`` fixture of ``conftest.py``);
``bench/reliability.py`` sends 100,000 frames and 10,000 requests through the same functions."""

from __future__ import annotations

import asyncio

import pytest

from tests.reliability.fuzz import Tally, capabilities_answer, fuzz_http, fuzz_socket
from tests.reliability.services import Services

pytestmark = pytest.mark.asyncio(loop_scope="session")

FRAMES_PER_SOCKET = 500
REQUESTS_PER_PAGE = 250


@pytest.mark.parametrize("service", ["executor", "approval_web", "assistant"])
async def test_generated_frames_get_one_declared_code_each_and_change_nothing(
    services: Services, service: str
) -> None:
    before = await services.state()
    tally = Tally()
    path = services.socket(service)
    await asyncio.to_thread(fuzz_socket, service, path, FRAMES_PER_SOCKET, tally)
    assert tally.sent >= FRAMES_PER_SOCKET
    assert services.alive(), services.logs()
    assert await asyncio.to_thread(capabilities_answer, path)
    assert await services.state() == before
    assert await services.audit_ok()
    assert {"bad_frame", "frame_too_large", "invalid_message", "unknown_message"} <= set(tally.codes)


@pytest.mark.parametrize("page", ["approval", "ask"])
async def test_generated_http_gets_one_stable_code_each_and_changes_nothing(
    services: Services, page: str
) -> None:
    before = await services.state()
    tally = Tally()
    name = "localhost" if page == "ask" else "127.0.0.1"
    await asyncio.to_thread(fuzz_http, services.page_port(page), REQUESTS_PER_PAGE, tally, name)
    assert tally.sent >= REQUESTS_PER_PAGE
    assert services.alive(), services.logs()
    assert await services.state() == before
    assert await services.audit_ok()
    assert tally.codes["bad_host"] and tally.codes["ok"] and tally.codes["page_not_found"]
