"""Audit MACs and anchors: a store writer who drops the triggers, edits rows and recomputes every
hash still cannot make another writer's rows verify, cannot strip or forge a MAC, and cannot cut
the newest rows off unnoticed by an anchor kept outside the store."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from shared.errors import Code
from shared.store.audit_seal import (
    APPROVAL_WEB,
    EXECUTOR,
    AuditKey,
    AuditKeyError,
    Keyring,
    RowMac,
    key_path,
    load_key,
    read_anchor,
    writer_of,
)
from shared.store.audit_witness import Witness
from shared.store.db import StoreError, append_audit, audit_head, migrate, open_store, verify_audit
from tests.shared.store.tampering import Statement, tamper
from tests.support import wait_until

WEB, EXE = AuditKey.new(APPROVAL_WEB), AuditKey.new(EXECUTOR)


def rehash(db: Path, *statements: Statement) -> None:
    """`statements` run by a store writer without the keys, every hash then recomputed."""
    tamper(db, *statements, rehash=True)


@contextlib.asynccontextmanager
async def store_at(path: Path, *keys: AuditKey) -> AsyncIterator[aiosqlite.Connection]:
    """A connection signing with `keys`, closed at the end whatever happens (an open one would
    keep its thread, and the test run, alive)."""
    conn = await open_store(path, keyring=Keyring(*keys))
    try:
        yield conn
    finally:
        await conn.close()


@pytest.fixture
async def db(tmp_path: Path) -> Path:
    """A store with six rows: approval_web, executor, approval_web, executor, approval_web,
    approval_web (the newest two are approval_web's)."""
    path = tmp_path / "fleetwatch.db"
    async with store_at(path, WEB, EXE) as conn:
        await migrate(conn)
        for actor, kind in (
            ("operator:1000", "kill_switch"),
            ("executor", "refusal"),
            ("approval_web", "approval"),
            ("executor", "verification"),
            ("assistant", "ask"),
            ("operator:1000", "kill_switch"),
        ):
            await append_audit(conn, actor=actor, kind=kind, detail={"n": 1})
    return path


async def verify(path: Path, *keys: AuditKey, anchors=()):
    async with store_at(path, *keys) as conn:
        return await verify_audit(conn, anchors=anchors)


async def test_every_row_carries_its_writers_mac_and_each_writer_verifies_its_own(db: Path):
    both = await verify(db, WEB, EXE)
    assert both.ok and dict(both.signed) == {APPROVAL_WEB: 4, EXECUTOR: 2}
    web_only = await verify(db, WEB)
    assert web_only.ok and web_only.signed == ((APPROVAL_WEB, 4),) and web_only.unchecked == 2
    raw = sqlite3.connect(db)
    writers = [w for (w,) in raw.execute("SELECT writer FROM audit ORDER BY seq")]
    raw.close()
    assert writers == ["approval_web", "executor", "approval_web", "executor", "approval_web", "approval_web"]


async def test_the_kill_switch_row_changed_and_rehashed_is_named_by_its_writer(db: Path):
    rehash(db, "UPDATE audit SET detail_json = '{\"on\":false}' WHERE seq = 1")
    result = await verify(db, WEB)
    assert (result.ok, result.first_bad_seq) == (False, 1)
    assert "MAC does not match under the approval_web's key" in result.reason


async def test_an_executor_row_changed_and_rehashed_is_named_by_the_executor(db: Path):
    rehash(db, "UPDATE audit SET detail_json = '{\"n\":2}' WHERE seq = 4")
    assert (await verify(db, EXE)).first_bad_seq == 4
    # approval_web cannot check row 4 itself, but its own row 5 was chained onto the old hash.
    assert (await verify(db, WEB)).first_bad_seq == 5


async def test_a_mac_recomputed_with_one_writers_key_does_not_pass_for_the_others_row(db: Path):
    forged = WEB.row_mac("x" * 64)
    rehash(db, ("UPDATE audit SET detail_json = '{\"n\":9}', writer = 'approval_web' WHERE seq = 2", ()))
    raw = sqlite3.connect(db)
    digest = raw.execute("SELECT hash FROM audit WHERE seq = 2").fetchone()[0]
    raw.execute("UPDATE audit SET mac = ? WHERE seq = 2", (WEB.row_mac(digest),))
    raw.commit()
    raw.close()
    result = await verify(db, WEB, EXE)
    assert result.first_bad_seq == 2 and "not its actor's" in result.reason
    assert forged != WEB.row_mac(digest)


async def test_a_row_inserted_in_the_middle_and_rehashed_is_named(db: Path):
    rehash(
        db,
        "UPDATE audit SET seq = seq + 100 WHERE seq >= 3",
        "UPDATE audit SET seq = seq - 99 WHERE seq >= 100",
        "INSERT INTO audit (seq, at, actor, kind, detail_json, prev_hash, hash, writer, mac)"
        " VALUES (3, '2030-01-01T00:00:00.000Z', 'operator:0', 'kill_switch', '{\"on\":false}', 'a', 'b',"
        " 'approval_web', 'c')",
    )
    result = await verify(db, WEB)
    assert (result.ok, result.first_bad_seq) == (False, 3)


async def test_a_mac_stripped_after_the_first_signed_row_is_named(db: Path):
    rehash(db, "UPDATE audit SET mac = NULL, writer = NULL WHERE seq = 5")
    result = await verify(db, WEB)
    assert result.first_bad_seq == 5 and "no MAC" in result.reason


async def test_rows_removed_from_the_end_are_named_against_the_anchor(db: Path, tmp_path: Path):
    witness = Witness(tmp_path / "keys", APPROVAL_WEB)
    async with store_at(db, WEB) as conn:
        await witness.observe(conn)
    assert witness.anchor is not None and witness.anchor.seq == 6 and witness.anchor.signed_from == 1
    # A writer who also rolls the table's counter back: the store alone cannot tell.
    rehash(db, "DELETE FROM audit WHERE seq >= 5", "UPDATE sqlite_sequence SET seq = 4 WHERE name = 'audit'")
    assert (await verify(db, WEB)).ok
    result = await verify(db, WEB, anchors=witness.anchors)
    assert (result.ok, result.first_bad_seq) == (False, 5)
    assert "rows 5 to 6 missing" in result.reason


async def test_the_anchor_never_moves_over_a_cut_log(db: Path, tmp_path: Path):
    keys = tmp_path / "keys"
    async with store_at(db, WEB) as conn:
        first = Witness(keys, APPROVAL_WEB)
        await first.observe(conn)
        rehash(
            db, "DELETE FROM audit WHERE seq = 6", "UPDATE sqlite_sequence SET seq = 5 WHERE name = 'audit'"
        )
        await append_audit(conn, actor="approval_web", kind="note", detail={})  # a new row 6
        again = Witness(keys, APPROVAL_WEB)  # as after a restart: read from the file
        assert again.anchor == first.anchor
        await again.observe(conn)
    assert again.anchor == first.anchor and again.problem == "row 6 is not the row seen before"
    result = await verify(db, WEB, anchors=again.anchors)
    assert result.first_bad_seq == 6 and "anchor" in result.reason


async def test_the_anchor_file_is_private_and_follows_the_growing_log(db: Path, tmp_path: Path):
    keys = tmp_path / "keys"
    witness = Witness(keys, APPROVAL_WEB)
    async with store_at(db, WEB) as conn:
        await witness.observe(conn)
        await append_audit(conn, actor="approval_web", kind="note", detail={})
        await witness.observe(conn)
    anchor = read_anchor(keys / "approval_web.anchor")
    assert anchor is not None and anchor.seq == 7 and anchor == witness.anchor
    assert stat.S_IMODE((keys / "approval_web.anchor").stat().st_mode) == 0o600


async def test_the_watch_moves_the_anchor_after_a_nudge_and_lets_the_store_lock_go(db: Path, tmp_path: Path):
    keys = tmp_path / "keys"
    witness = Witness(keys, APPROVAL_WEB)
    lock = asyncio.Lock()
    async with store_at(db, WEB) as conn:
        await append_audit(conn, actor="approval_web", kind="note", detail={})
        head = await audit_head(conn)
        assert head is not None
        watching = asyncio.create_task(witness.watch(conn, lock))
        try:
            witness.nudge()
            moved = await wait_until(
                lambda: witness.anchor is not None and witness.anchor.seq == head.seq,
                what="the watch's anchor",
            )
            assert moved and not lock.locked()
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
    assert read_anchor(keys / "approval_web.anchor") == witness.anchor


async def test_the_watch_stops_when_cancelled_in_the_same_turn_as_a_nudge(db: Path, tmp_path: Path):
    """A service stopping just after a request nudged the watch (the executor's SIGTERM after its
    last answer): the cancellation must end the watch. Python 3.11's ``asyncio.wait_for``
    returned the nudge instead and lost the cancellation, so the executor never exited (CI, stop
    22: SIGKILLed after 10 s)."""
    witness = Witness(tmp_path / "keys", APPROVAL_WEB)
    async with store_at(db, WEB) as conn:
        watching = asyncio.create_task(witness.watch(conn, asyncio.Lock()))
        for _ in range(5):  # the watch waits for a nudge now
            await asyncio.sleep(0)
        witness.nudge()
        watching.cancel()
        done, _ = await asyncio.wait({watching}, timeout=5)
        if not done:  # end it for good before failing, or its loop outlives the test
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
        assert done and watching.cancelled()


async def test_the_anchor_never_moves_back(db: Path, tmp_path: Path):
    keys = tmp_path / "keys"
    witness = Witness(keys, APPROVAL_WEB)
    async with store_at(db, WEB) as conn:
        older = await witness.observe(conn)
        await append_audit(conn, actor="approval_web", kind="note", detail={})
        newer = await witness.observe(conn)
    assert older is not None and newer is not None and newer.seq > older.seq
    await witness._move(older)  # a look that finished after a newer one was kept
    assert witness.anchor == newer and read_anchor(keys / "approval_web.anchor") == newer


async def test_a_connection_signs_only_the_rows_of_the_writers_whose_keys_it_holds(tmp_path: Path):
    async with store_at(tmp_path / "fw.db", WEB) as conn:
        await migrate(conn)
        with pytest.raises(StoreError) as caught:
            await append_audit(conn, actor="executor", kind="outcome", detail={})
        assert caught.value.code is Code.INTERNAL_ERROR and "executor's audit key" in caught.value.message
        await append_audit(conn, actor="operator:7", kind="denial", detail={})
    async with store_at(tmp_path / "fw.db") as keyless:
        with pytest.raises(StoreError):
            await append_audit(keyless, actor="operator:7", kind="denial", detail={})
        assert (await verify_audit(keyless)).ok  # reading and checking the chain needs no key


def test_rows_belong_to_the_executor_only_when_its_actor_is_the_executor():
    assert writer_of("executor") == EXECUTOR
    for actor in ("approval_web", "operator:0", "executor:1000", "page s-1", "assistant", "peer:5"):
        assert writer_of(actor) == APPROVAL_WEB
    ring = Keyring(WEB)
    assert ring.check("approval_web", "executor", "h" * 64, "m") is RowMac.WRONG_WRITER
    assert ring.check(None, "assistant", "h" * 64, None) is RowMac.UNSIGNED
    assert ring.check("executor", "executor", "h" * 64, "m") is RowMac.UNCHECKED


def test_a_key_is_made_once_private_and_kept(tmp_path: Path):
    folder = tmp_path / "home" / "keys"
    first = load_key(folder, EXECUTOR, create=True)
    again = load_key(folder, EXECUTOR, create=True)
    assert first == again and "secret" not in repr(first).replace("secret=", "")
    assert stat.S_IMODE(key_path(folder, EXECUTOR).stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_key_readable_by_others_or_behind_a_symlink_is_refused(tmp_path: Path):
    folder = tmp_path / "keys"
    load_key(folder, APPROVAL_WEB, create=True)
    os.chmod(key_path(folder, APPROVAL_WEB), 0o640)
    with pytest.raises(AuditKeyError) as caught:
        load_key(folder, APPROVAL_WEB, create=False)
    assert caught.value.code is Code.CONFIG_INVALID and "600" in caught.value.message
    elsewhere = tmp_path / "elsewhere.key"
    elsewhere.write_text("00" * 32)
    os.chmod(elsewhere, 0o600)
    key_path(folder, EXECUTOR).symlink_to(elsewhere)
    with pytest.raises(AuditKeyError) as caught:
        load_key(folder, EXECUTOR, create=True)
    assert "symlink" in caught.value.message


class CountingLock(asyncio.Lock):
    """The service's store lock, counting how often it is taken."""

    def __init__(self) -> None:
        super().__init__()
        self.taken = 0

    async def acquire(self) -> bool:
        got = await super().acquire()
        self.taken += 1
        return got


async def test_a_long_walk_takes_the_store_lock_one_chunk_at_a_time(db: Path):
    """A service's verification of a long chain holds its store lock only while it reads a
    chunk (the fuzzing's ``audit_verify`` over ~120,000 rows held it for the whole walk, and
    every other request of that service waited)."""
    async with store_at(db, WEB, EXE) as conn:
        for n in range(39):
            await append_audit(conn, actor="approval_web", kind="refusal", detail={"n": n})
        lock = CountingLock()
        result = await verify_audit(conn, lock=lock, chunk_rows=10)
    assert (result.ok, result.rows) == (True, 45)
    assert lock.taken == 5  # 10 + 10 + 10 + 10 + 5 rows
    assert not lock.locked()


async def test_rows_appended_between_chunks_are_walked_too(db: Path):
    """Between two chunks the service uses its connection (here: appends a row, as a refusal
    would); the walk goes on after it and checks the new row with the rest."""
    async with store_at(db, WEB, EXE) as conn:
        lock = CountingLock()
        appends: list[asyncio.Task[object]] = []

        async def append_when_free() -> None:
            async with lock:
                await append_audit(conn, actor="executor", kind="refusal", detail={"n": 7})

        class QueueAnAppend(CountingLock):
            """At the walk's first chunk, an append queues for the lock (behind the chunk)."""

            async def acquire(self) -> bool:
                got = await super().acquire()
                if self.taken == 1:
                    appends.append(asyncio.ensure_future(append_when_free()))
                return got

        lock = QueueAnAppend()
        result = await verify_audit(conn, lock=lock, chunk_rows=2)
        await appends[0]
    assert (result.ok, result.rows) == (True, 7)
    assert lock.taken == 5  # the walk's chunks 2 + 2 + 2 + 1 and the append between them


async def test_a_row_slipped_in_below_seq_1_is_still_named(db: Path):
    """The first chunk has no lower bound: a row inserted at seq 0 breaks the walk."""
    tamper(
        db,
        "INSERT INTO audit (seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash)"
        " SELECT 0, at, actor, kind, proposal_id, detail_json, 'slipped', 'in' FROM audit WHERE seq = 1",
    )
    result = await verify(db, WEB, EXE)
    assert (result.ok, result.first_bad_seq) == (False, 0)
    assert "out of order" in (result.reason or "")
