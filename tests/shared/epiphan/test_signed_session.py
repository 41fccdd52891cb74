"""Reading through a slot's sign-in when its token has ended: refreshed before use when the slot
says so (and a warm connection replaced), refreshed once and the read repeated once when Epiphan
refuses it in-band although this machine's clock says it is valid; never more."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN, EpiphanError
from shared.epiphan.signed_session import SignedReader
from shared.epiphan.signin import oauth_sign_in
from shared.epiphan.signin_oauth import http_client
from shared.epiphan.slots import SignIn, read_slot, write_slot
from shared.errors import Code
from tests.deploy.person import Person

pytestmark = pytest.mark.asyncio(loop_scope="module")
TTL = 3600
"""The campus lab's access token life, lab time (``access_token_ttl_seconds``)."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


@pytest_asyncio.fixture(loop_scope="module")
async def slot(lab: LabHandle, tmp_path: Path) -> AsyncIterator[Path]:
    """A read slot holding a fresh OAuth sign-in to the normal team (refreshable)."""
    person = Person("normal")
    async with http_client() as http:
        try:
            sign_in = await oauth_sign_in(lab.mcp_url, show_url=person.show, http=http, timeout_seconds=30)
        finally:
            await person.done()
    path = tmp_path / "tokens" / "read.json"
    write_slot(path, sign_in)
    lab.clear_faults()
    yield path


async def devices_of(reader: SignedReader) -> Any:
    """The team's device list, read through `reader` (one call)."""
    return (await reader.call_batched("get_devices_in_my_team")).data


def refused(lab: LabHandle, tool: str) -> int:
    """Calls of `tool` the lab refused for want of a valid sign-in."""
    return sum(1 for r in lab.rejected() if r["tool"] == tool and r["reason"] == "not signed in")


async def test_a_token_the_slot_says_has_ended_is_refreshed_before_the_read(lab, slot):
    before = read_slot(slot)
    write_slot(slot, msgspec.structs.replace(before, expires_at=time.time() - 10))
    async with SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as reader:
        devices = await devices_of(reader)
    after = read_slot(slot)
    assert devices["devices"] and after.access_token != before.access_token
    assert after.refresh_token != before.refresh_token  # rotated
    assert reader.connection.refreshed == 0  # not a refusal: the slot's own clock


async def test_a_warm_connection_is_replaced_once_the_slot_has_moved_on(lab, slot):
    async with SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as reader:
        await devices_of(reader)
        warm = reader.connection.last_used
        write_slot(slot, msgspec.structs.replace(read_slot(slot), expires_at=time.time() - 10))
        await devices_of(reader)
        assert reader.connection.last_used is not warm


async def test_a_read_epiphan_refuses_although_the_slot_says_valid_is_refreshed_and_repeated_once(lab, slot):
    before = read_slot(slot)
    async with SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as reader:
        await devices_of(reader)  # a warm connection, with the token
        lab.advance(TTL + 60)  # the server's clock: the token has ended; this machine's says valid
        assert read_slot(slot).expires_at > time.time()
        refused_before = refused(lab, "get_devices_in_my_team")
        devices = await devices_of(reader)
        assert devices["devices"] and reader.connection.refreshed == 1
    assert refused(lab, "get_devices_in_my_team") == refused_before + 1  # one refusal, then the one repeat
    assert read_slot(slot).access_token != before.access_token


async def test_a_refusal_after_the_refresh_is_not_repeated_again(lab, slot):
    lab.set_fault("get_devices_in_my_team", "auth_401")
    try:
        async with SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as reader:
            with pytest.raises(EpiphanError) as caught:
                await devices_of(reader)
            assert caught.value.code is Code.EPIPHAN_AUTH and reader.connection.refreshed == 1
    finally:
        lab.clear_faults()
    rejected = [r for r in lab.rejected() if r["reason"] != "not signed in"]
    assert [r["tool"] for r in rejected[-2:]] == ["get_devices_in_my_team"] * 2


async def test_a_sign_in_that_cannot_refresh_keeps_the_refusal(lab, tmp_path):
    slot = tmp_path / "tokens" / "read.json"
    token = lab.issue_token("normal", ttl_seconds=60)
    write_slot(
        slot, SignIn(access_token=token, server=lab.mcp_url, kind="lab", expires_at=time.time() + 3600)
    )
    async with SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as reader:
        lab.advance(120)
        with pytest.raises(EpiphanError) as caught:
            await devices_of(reader)
    assert caught.value.code is Code.EPIPHAN_AUTH and reader.connection.refreshed == 0


async def test_two_readers_share_one_refresh_of_the_rotating_token(lab, slot):
    async with (
        SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as one,
        SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as two,
    ):
        await devices_of(one)
        await devices_of(two)
        lab.advance(TTL + 60)
        first = await devices_of(one)
        second = await devices_of(two)
    assert first["devices"] and second["devices"]
    # The second reader saw the slot's new token before its read: no refusal, no second refresh
    # (one with the same, rotated, refresh token would have made the lab revoke the sign-in).
    assert (one.connection.refreshed, two.connection.refreshed) == (1, 0)
    assert not read_slot(slot).dead
    assert await devices_of(one)


async def test_a_snapshot_part_epiphan_refuses_is_refreshed_and_the_snapshot_read_once_more(lab, slot):
    """A per-device read refused in-band inside a snapshot leaves that part unread rather than
    raising; it counts as the read refused all the same: refresh, then read again, once."""
    async with SignedReader(slot, lab.mcp_url, READ_TOOLS_OF_EPIPHAN) as reader:
        await devices_of(reader)  # a warm connection
        lab.set_fault("get_recorder_status_for_devices", "auth_401", count=1)
        try:
            snapshot = await reader.snapshot()
        finally:
            lab.clear_faults()
    assert snapshot.unread == () and snapshot.devices and reader.connection.refreshed == 1
