"""The watch store: its own file, its own schema; never the approval store."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from services.assistant.watch.diff import Change
from services.assistant.watch.schema import APPLICATION_ID
from services.assistant.watch.store import WatchStore
from shared.epiphan.attention import Priority
from shared.errors import Code
from shared.sqlite import StoreError
from shared.store.db import migrate, open_store
from tests.assistant.watch.helpers import device

AT = "2026-09-16T13:00:00.000Z"


async def test_a_new_watch_store_is_stamped_as_one_and_opens_again(tmp_path: Path):
    path = tmp_path / "state" / "watch.db"
    store = await WatchStore.connect(path)
    await store.close()
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    conn = await open_store(path)
    try:
        async with conn.execute("PRAGMA application_id") as cursor:
            assert (await cursor.fetchone())[0] == APPLICATION_ID
    finally:
        await conn.close()
    store = await WatchStore.connect(path)
    await store.close()


async def test_the_approval_store_is_refused_as_a_watch_store_and_a_watch_store_as_the_approval_store(
    tmp_path: Path,
):
    approval = tmp_path / "fleetwatch.db"
    conn = await open_store(approval)
    await migrate(conn)
    await conn.close()
    with pytest.raises(StoreError) as refused:
        await WatchStore.connect(approval)
    assert refused.value.code == Code.STORE_SCHEMA_TOO_NEW and "not a watch store" in refused.value.message
    watch = tmp_path / "watch.db"
    await (await WatchStore.connect(watch)).close()
    conn = await open_store(watch)
    try:
        with pytest.raises(StoreError) as other:
            await migrate(conn)
        assert "another store" in other.value.message
    finally:
        await conn.close()


async def test_a_read_records_rooms_and_findings_with_first_last_seen_and_resolved(tmp_path: Path):
    store = await WatchStore.connect(tmp_path / "watch.db")
    try:
        opened = Change(
            "finding_opened",
            "d1",
            "ENG 210",
            key="d1|offline|",
            finding_kind="offline",
            priority=Priority.FIX_SOON,
        )
        await store.record_read(
            AT, [device("d1", "ENG 210", online=False)], [opened], {}, [("first_read", {"rooms": 1})]
        )
        assert (await store.known_devices())["d1"].online is False
        assert list(await store.open_findings()) == ["d1|offline|"]
        later = "2026-09-16T13:03:00.000Z"
        resolved = Change(
            "finding_resolved",
            "d1",
            "ENG 210",
            key="d1|offline|",
            finding_kind="offline",
            priority=Priority.FIX_SOON,
        )
        await store.record_read(later, [device("d1", "ENG 210")], [resolved], {})
        assert await store.open_findings() == {}
        rows = await store.history_after(0)
        assert [r.kind for r in rows] == ["finding_opened", "first_read", "finding_resolved"]
        assert rows[-1].at == later and rows[-1].priority == Priority.FIX_SOON
    finally:
        await store.close()
