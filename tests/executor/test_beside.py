"""`Beside`: the tool list is listed beside Execute's last reads and judged after their checks;
a block that ends first (a failed read, a refusal) leaves nothing of it running (issue 34)."""

from __future__ import annotations

import asyncio

import pytest

from services.executor import ExecutorError
from services.executor.world import Beside
from shared.errors import Code


async def test_the_read_beside_runs_while_the_block_waits_and_its_answer_comes_after() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def listed() -> str:
        started.set()
        await release.wait()
        return "tools"

    async with Beside(listed) as beside:
        beside.start()
        beside.start()  # once only
        await started.wait()  # it runs while the block does its own reads
        release.set()
        assert await beside.result() == "tools"


async def test_its_error_is_raised_where_it_is_judged_not_before() -> None:
    async def changed() -> None:
        raise ExecutorError(Code.TOOL_CHANGED, "changed")

    async with Beside(changed) as beside:
        beside.start()
        await asyncio.sleep(0)  # it has failed by now; the block's own checks still come first
        with pytest.raises(ExecutorError) as raised:
            await beside.result()
    assert raised.value.code is Code.TOOL_CHANGED


async def test_a_block_that_ends_first_cancels_it_and_its_error_never_covers_the_blocks() -> None:
    cancelled = asyncio.Event()

    async def listed() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    with pytest.raises(ExecutorError) as raised:
        async with Beside(listed) as beside:
            beside.start()
            await asyncio.sleep(0)
            raise ExecutorError(Code.STATE_READ_FAILED, "a read failed")
    assert raised.value.code is Code.STATE_READ_FAILED
    assert cancelled.is_set()


async def test_a_block_left_before_it_started_sends_nothing() -> None:
    sent = []

    async def listed() -> None:
        sent.append("tools/list")

    with pytest.raises(ExecutorError):
        async with Beside(listed):
            raise ExecutorError(Code.DEVICE_LIST_UNREADABLE, "the device list failed")
    await asyncio.sleep(0)
    assert sent == []
