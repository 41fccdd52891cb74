"""The assistant's warm MCP session (issue 14), with the assistant as a real process on its
socket and the campus lab: questions reuse one session of the read sign-in while the slot holds
the same token, and a sign-in removed from the read slot stops the very next read, although
the session is warm. The lab records the MCP session of every call (`LabHandle.calls`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from shared.epiphan.slots import SignIn, write_slot
from shared.errors import Code
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
from tests.assistant.backend import Backend, backend
from tests.procs import running_service

pytestmark = pytest.mark.asyncio(loop_scope="module")
QUESTION = "which rooms are offline?"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("warm")) as running:
        yield running


async def ask(socket, question: str = QUESTION) -> Answer:
    reply = await request(socket, Ask(question=question), Answer, timeout_seconds=60)
    assert isinstance(reply, Answer), reply
    return reply


async def test_questions_reuse_one_session_and_a_removed_read_sign_in_stops_the_next_read(
    stack: Backend,
) -> None:
    await stack.clean()
    normal = stack.lab.teams["normal"]
    write_slot(
        stack.settings.read_token_file,
        SignIn(access_token=normal.token, server=stack.lab.mcp_url, team_id=normal.team_id, kind="lab"),
    )
    async with running_service("services.assistant", dict(stack.env), log_name="warm") as assistant:
        first, second = await ask(assistant.socket), await ask(assistant.socket)
        assert first.code is None and second.code is None
        reads = stack.lab.calls()
        assert len(reads) >= 2 and len({session for _, session in reads}) == 1

        stack.settings.read_token_file.unlink()
        refused = await ask(assistant.socket)
        assert refused.code == Code.NO_SIGN_IN
        assert stack.lab.calls() == reads  # nothing reached Epiphan on the warm session
