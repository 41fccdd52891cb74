"""The assistant holds no store: what it records goes through approval.sock.

The assistant, approval_web and the executor run as real processes over the real sockets, with
the campus lab. The assistant is given a store path in a folder that does not exist: it must
never create or open it, while its ``ask`` row and every refusal of assistant.sock (a peer off
its allowlist, a malformed or over-long request, a blank question) still reach the audit,
written by approval_web with actor ``assistant``, small, and never holding what was sent.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from shared.epiphan.slots import SignIn, write_slot
from shared.errors import Code
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
from shared.wire.protocol import ErrorReply
from tests.assistant.backend import Backend, backend
from tests.caps import HUGE, MAX_ROW_BYTES, raw_exchange
from tests.procs import ServiceProcess, running_service
from tests.support import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 30


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("assistant_records")) as running:
        normal = running.lab.teams["normal"]
        write_slot(
            running.settings.read_token_file,
            SignIn(access_token=normal.token, server=running.lab.mcp_url, team_id=normal.team_id, kind="lab"),
        )
        yield running


def assistant_env(shared: Backend, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The backend's environment (its sockets, the lab, no model key), with a store path the
    assistant could only use by creating its folder."""
    return {**shared.env, "FLEETWATCH_DB": str(tmp_path / "no-store-here" / "fleetwatch.db"), **extra}


async def refusals_on_assistant_sock(shared: Backend) -> list[dict[str, Any]]:
    return [
        {**d, "actor": actor}
        for actor, kind, d in await shared.audit_kinds()
        if kind == "refusal" and d.get("socket") == "assistant.sock"
    ]


def holds_no_store(process: ServiceProcess, store: Path) -> bool:
    """True when none of the process's open files is the store or its -wal/-shm."""
    names = {str(store), f"{store}-wal", f"{store}-shm"}
    held = set()
    for fd in Path(f"/proc/{process.pid}/fd").iterdir():
        try:
            held.add(os.readlink(fd))
        except OSError:
            continue
    return not names & held


async def test_the_assistant_opens_no_store_and_approval_web_writes_its_ask_row(
    shared: Backend, tmp_path: Path
) -> None:
    env = assistant_env(shared, tmp_path)
    question = "What needs attention? secret-note-42"
    async with running_service("services.assistant", env) as assistant:
        answer = await request(assistant.socket, Ask(question=question), Answer, timeout_seconds=TIMEOUT)
        assert holds_no_store(assistant, shared.settings.db)
    assert isinstance(answer, Answer) and answer.answered_by == "keyword", answer
    assert not (tmp_path / "no-store-here").exists()
    asks = [(actor, d) for actor, kind, d in await shared.audit_kinds() if kind == "ask"]
    actor, detail = asks[-1]
    assert actor == "assistant" and detail["question_chars"] == len(question)
    assert detail["outcome"] == "keyword_no_model" and detail["turn_id"].startswith("t_")
    assert "secret-note" not in str(detail)


async def test_a_peer_off_assistant_socks_allowlist_is_refused_and_recorded_through_approval_sock(
    shared: Backend, tmp_path: Path
) -> None:
    env = assistant_env(shared, tmp_path, FLEETWATCH_ASSISTANT_UIDS=str(os.getuid() + 4242))
    async with running_service("services.assistant", env) as assistant:
        # The readiness probe that waited for the socket was refused too: count from here.
        await wait_until(
            lambda: refusals_on_assistant_sock(shared), what="the probe's refusal row", seconds=TIMEOUT
        )
        seen = len(await refusals_on_assistant_sock(shared))
        reply = await request(assistant.socket, Ask(question="hello"), Answer, timeout_seconds=TIMEOUT)
        assert isinstance(reply, ErrorReply) and reply.code == Code.PEER_NOT_ALLOWED

        async def added_rows() -> list | None:
            return (await refusals_on_assistant_sock(shared))[seen:] or None

        added = await wait_until(added_rows, what="the refusal row", seconds=TIMEOUT)
    assert [(r["actor"], r["operation"], r["code"], r["uid"]) for r in added] == [
        ("assistant", "connect", "peer_not_allowed", os.getuid())
    ]
    assert not (tmp_path / "no-store-here").exists()


async def test_each_refused_request_on_assistant_sock_leaves_one_small_row_written_by_approval_web(
    shared: Backend, tmp_path: Path
) -> None:
    huge_question = "Why? " * (HUGE // 5)
    cases = [
        (
            msgspec.msgpack.encode({"op": "ask", "question": huge_question}),
            "invalid_message",
            "ask",
            "$.question",
        ),
        (
            msgspec.msgpack.encode({"op": "ask", "question": "x" * 2001}),
            "invalid_message",
            "ask",
            "$.question",
        ),
        (
            msgspec.msgpack.encode({"op": "ask", "question": "Hola", "language": "fr" * (HUGE // 2)}),
            "invalid_message",
            "ask",
            "$.language",
        ),
        (
            msgspec.msgpack.encode({"op": "ask" * (HUGE // 3), "question": "Hola"}),
            "unknown_message",
            "unknown",
            None,
        ),
        (b"\xc1" * 100, "bad_frame", "unknown", None),
        (msgspec.msgpack.encode({"op": "ask", "question": "   "}), "invalid_message", "ask", "$.question"),
    ]
    async with running_service("services.assistant", assistant_env(shared, tmp_path)) as assistant:
        for body, code, operation, field in cases:
            seen = len(await refusals_on_assistant_sock(shared))
            reply = await raw_exchange(assistant.socket, body)
            assert reply["code"] == code and len(reply["message"]) <= 300, reply
            (row,) = (await refusals_on_assistant_sock(shared))[seen:]
            assert (row["actor"], row["code"], row["operation"], row.get("field")) == (
                "assistant",
                code,
                operation,
                field,
            )
            assert row["uid"] == os.getuid() and len(msgspec.json.encode(row)) < MAX_ROW_BYTES
            assert "Why? Why?" not in str(row) and "frfr" not in str(row) and "askask" not in str(row)
    assert not (tmp_path / "no-store-here").exists()
