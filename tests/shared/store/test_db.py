"""The store: schema migrations, transactions, the database clock, and the audit hash chain."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import sys

import pytest

from shared.canonical import CanonicalError
from shared.errors import Code
from shared.store.audit_seal import APPROVAL_WEB, own_keyring
from shared.store.db import (
    GENESIS_HASH,
    MIGRATIONS,
    AuditHead,
    StoreError,
    append_audit,
    audit_head,
    cannot_write,
    db_now,
    migrate,
    open_store,
    schema_version,
    verify_audit,
    write_tx,
)
from tests.audit_keys import fresh_keyring
from tests.shared.store.tampering import tamper

NEWEST = MIGRATIONS[-1][0]
TABLES = {"proposals", "proposal_targets", "approvals", "executions", "audit", "sessions", "limits", "kv"}
TIME_FORMAT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")

WRITER = """
import asyncio, sys
from pathlib import Path
from shared.store.audit_seal import own_keyring
from shared.store.db import append_audit, open_store

async def main(path, actor, count):
    conn = await open_store(path, keyring=own_keyring(Path(path).parent / "keys", "approval_web"))
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        await append_audit(conn, actor=actor, kind="test_append", detail={"i": i})
    await conn.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""

HOLDER = """
import asyncio, sys
from pathlib import Path
from shared.store.audit_seal import own_keyring
from shared.store.db import append_audit, open_store, write_tx

async def main(path):
    conn = await open_store(path, keyring=own_keyring(Path(path).parent / "keys", "approval_web"))
    async with write_tx(conn):
        await append_audit(conn, actor="holder", kind="test_hold", detail={})
        print("holding", flush=True)
        sys.stdin.readline()
    await conn.close()

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
async def store(tmp_path):
    """The store at ``state/fleetwatch.db``, signing with approval_web's key in ``state/keys``
    (which the writer processes below load too)."""
    conn = await open_store(
        tmp_path / "state" / "fleetwatch.db", keyring=own_keyring(tmp_path / "state" / "keys", APPROVAL_WEB)
    )
    await migrate(conn)
    yield conn
    await conn.close()


async def fetch_all(conn, sql, params=()):
    async with conn.execute(sql, params) as cursor:
        return [tuple(row) for row in await cursor.fetchall()]


async def schema_dump(conn):
    return await fetch_all(conn, "SELECT type, name, sql FROM sqlite_master ORDER BY name")


async def append_rows(conn, count):
    return [
        await append_audit(conn, actor="test", kind="note", proposal_id=f"p{i}", detail={"i": i})
        for i in range(count)
    ]


# --- migrations and connection settings ------------------------------------------------------


async def test_migrating_an_empty_file_creates_every_table_at_the_newest_version(tmp_path):
    conn = await open_store(tmp_path / "new" / "fleetwatch.db")
    try:
        assert await schema_version(conn) == 0
        assert await migrate(conn) == NEWEST
        assert await schema_version(conn) == NEWEST
        tables = {
            name for (name,) in await fetch_all(conn, "SELECT name FROM sqlite_master WHERE type='table'")
        }
        assert TABLES <= tables
    finally:
        await conn.close()


async def test_migrating_again_changes_nothing(store):
    before = await schema_dump(store)
    assert await migrate(store) == NEWEST
    assert await schema_dump(store) == before


async def test_a_store_from_a_newer_fleetwatch_is_refused_and_left_alone(tmp_path):
    db = tmp_path / "future.db"
    raw = sqlite3.connect(db)
    raw.execute(f"PRAGMA user_version = {NEWEST + 1}")
    raw.close()
    conn = await open_store(db)
    try:
        with pytest.raises(StoreError) as caught:
            await migrate(conn)
        assert caught.value.code is Code.STORE_SCHEMA_TOO_NEW
        assert str(NEWEST + 1) in caught.value.message
        assert await schema_version(conn) == NEWEST + 1
        assert await fetch_all(conn, "SELECT name FROM sqlite_master") == []
    finally:
        await conn.close()


async def test_the_store_uses_wal_a_busy_timeout_and_foreign_keys(store):
    assert await fetch_all(store, "PRAGMA journal_mode") == [("wal",)]
    assert await fetch_all(store, "PRAGMA busy_timeout") == [(10_000,)]
    assert await fetch_all(store, "PRAGMA foreign_keys") == [(1,)]
    with pytest.raises(sqlite3.IntegrityError):
        await store.execute(
            "INSERT INTO approvals (id, proposal_id, session_id, card_hash, expires_at) VALUES ('a', 'nope', 's', 'h', 'x')"
        )


def test_migrations_are_numbered_from_one_without_gaps():
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


# --- transactions and clock ------------------------------------------------------------------


async def test_a_write_transaction_rolls_back_when_its_body_raises(store):
    with pytest.raises(RuntimeError, match="boom"):
        async with write_tx(store):
            await store.execute("INSERT INTO kv (key, value) VALUES ('kill_switch', 'on')")
            raise RuntimeError("boom")
    assert await fetch_all(store, "SELECT * FROM kv") == []
    assert not store.in_transaction


async def test_a_write_transaction_commits_its_body(store):
    async with write_tx(store):
        await store.execute("INSERT INTO kv (key, value) VALUES ('kill_switch', 'on')")
    assert await fetch_all(store, "SELECT key, value FROM kv") == [("kill_switch", "on")]


async def test_a_write_transaction_holds_the_write_lock_from_its_start(tmp_path, store):
    other = await open_store(tmp_path / "state" / "fleetwatch.db")
    try:
        await other.execute("PRAGMA busy_timeout = 0")
        async with write_tx(store):
            with pytest.raises(StoreError) as caught:
                async with write_tx(other):
                    pytest.fail("the second writer must not get the lock")
            assert caught.value.code is Code.STORE_BUSY
            assert not other.in_transaction
        async with write_tx(other):
            await other.execute("INSERT INTO kv (key, value) VALUES ('after', '1')")
    finally:
        await other.close()
    assert await fetch_all(store, "SELECT key FROM kv") == [("after",)]


async def test_write_transactions_do_not_nest(store):
    async with write_tx(store):
        with pytest.raises(StoreError) as caught:
            async with write_tx(store):
                pass
        assert caught.value.code is Code.INTERNAL_ERROR


async def test_the_database_clock_is_utc_with_milliseconds_and_can_look_ahead(store):
    now = await db_now(store)
    later = await db_now(store, plus_seconds=300)
    earlier = await db_now(store, plus_seconds=-300)
    assert TIME_FORMAT.match(now) and TIME_FORMAT.match(later) and TIME_FORMAT.match(earlier)
    assert earlier < now < later
    (minutes,) = (await fetch_all(store, "SELECT (julianday(?) - julianday(?)) * 1440", (later, now)))[0]
    assert 4.99 < minutes < 5.01


# --- schema guards for the next issues -------------------------------------------------------


async def insert_proposal(conn, proposal_id="p1"):
    await conn.execute(
        "INSERT INTO proposals (id, tool, arguments_json, targets_json, fingerprint_json, fingerprint_hash,"
        " schema_version, reason, proposed_by, bound_record, seal)"
        " VALUES (?, 'batch_reboot', '{}', '[]', '{}', 'h', 1, 'r', 'assistant', x'00', 's')",
        (proposal_id,),
    )


async def test_a_proposal_can_have_only_one_consumed_approval(store):
    await insert_proposal(store)
    for approval in ("a1", "a2"):
        await store.execute(
            "INSERT INTO approvals (id, proposal_id, session_id, card_hash, expires_at) VALUES (?, 'p1', 's', 'h', ?)",
            (approval, await db_now(store, plus_seconds=300)),
        )
    await store.execute("UPDATE approvals SET used = 1 WHERE id = 'a1'")
    with pytest.raises(sqlite3.IntegrityError):
        await store.execute("UPDATE approvals SET used = 1 WHERE id = 'a2'")
    with pytest.raises(sqlite3.IntegrityError):
        await store.execute("UPDATE approvals SET claimed = 1 WHERE id = 'a2'")


async def test_a_proposal_status_outside_the_known_states_is_refused(store):
    await insert_proposal(store)
    with pytest.raises(sqlite3.IntegrityError):
        await store.execute("UPDATE proposals SET status = 'maybe' WHERE id = 'p1'")


# --- audit hash chain ------------------------------------------------------------------------


async def test_appended_rows_form_a_chain_that_verifies(store):
    heads = await append_rows(store, 5)
    assert [h.seq for h in heads] == [1, 2, 3, 4, 5]
    assert await audit_head(store) == heads[-1]
    result = await verify_audit(store)
    assert (result.ok, result.rows, result.first_bad_seq, result.reason) == (True, 5, None, None)
    rows = await fetch_all(store, "SELECT prev_hash, hash FROM audit ORDER BY seq")
    assert rows[0][0] == GENESIS_HASH
    assert all(rows[i][0] == rows[i - 1][1] for i in range(1, 5))


async def test_an_empty_audit_log_verifies_and_has_no_head(store):
    assert await audit_head(store) is None
    assert (await verify_audit(store)).ok


async def test_an_audit_row_commits_or_rolls_back_with_the_change_it_records(store):
    with pytest.raises(RuntimeError):
        async with write_tx(store):
            await store.execute("INSERT INTO kv (key, value) VALUES ('kill_switch', 'on')")
            await append_audit(store, actor="ctl", kind="kill_switch_on", detail={})
            raise RuntimeError("the change failed")
    assert await audit_head(store) is None
    async with write_tx(store):
        await store.execute("INSERT INTO kv (key, value) VALUES ('kill_switch', 'on')")
        head = await append_audit(store, actor="ctl", kind="kill_switch_on", detail={"by": "ops"})
    assert head.seq == 1
    assert await fetch_all(store, "SELECT detail_json FROM audit") == [('{"by":"ops"}',)]


async def test_an_audit_detail_without_a_canonical_form_writes_nothing(store):
    with pytest.raises(CanonicalError):
        await append_audit(store, actor="t", kind="k", detail={"seconds": 1.5})
    assert await audit_head(store) is None and not store.in_transaction


async def test_audit_rows_cannot_be_updated_or_deleted_through_sql(store):
    await append_rows(store, 2)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await store.execute("UPDATE audit SET actor = 'x' WHERE seq = 1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await store.execute("DELETE FROM audit WHERE seq = 2")


async def test_the_chain_cannot_fork_two_rows_never_share_a_previous_hash(store):
    await append_rows(store, 2)
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        await store.execute(
            "INSERT INTO audit (at, actor, kind, detail_json, prev_hash, hash) VALUES ('t', 'a', 'k', '{}', ?, ?)",
            (GENESIS_HASH, "f" * 64),
        )


async def test_two_processes_appending_at_once_keep_one_verified_chain(tmp_path, store):
    db = tmp_path / "state" / "fleetwatch.db"
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WRITER,
            str(db),
            actor,
            "200",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for actor in ("writer_a", "writer_b")
    ]
    for proc in procs:
        assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"ready\n"
    for proc in procs:
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
    results = [await asyncio.wait_for(proc.communicate(), 60) for proc in procs]
    for proc, (_, stderr) in zip(procs, results, strict=True):
        assert proc.returncode == 0, stderr.decode()
        assert b"locked" not in stderr
    result = await verify_audit(store)
    assert result.ok and result.rows == 400
    actors = [actor for (actor,) in await fetch_all(store, "SELECT actor FROM audit ORDER BY seq")]
    assert actors.count("writer_a") == actors.count("writer_b") == 200
    # How much the two interleave is up to SQLite's busy handler and the scheduler (from one
    # switch under load to a dozen when idle), so it is not asserted.


async def test_an_append_waits_for_another_process_s_open_transaction_and_chains_onto_it(tmp_path, store):
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER,
        str(tmp_path / "state" / "fleetwatch.db"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert await asyncio.wait_for(holder.stdout.readline(), 60) == b"holding\n"
    waiting = asyncio.create_task(append_audit(store, actor="parent", kind="test_wait", detail={}))
    holder.stdin.write(b"commit\n")
    await holder.stdin.drain()
    head = await asyncio.wait_for(waiting, 30)
    _, stderr = await asyncio.wait_for(holder.communicate(), 30)
    assert holder.returncode == 0, stderr.decode()
    assert head.seq == 2
    assert [a for (a,) in await fetch_all(store, "SELECT actor FROM audit ORDER BY seq")] == [
        "holder",
        "parent",
    ]
    assert (await verify_audit(store)).ok


async def test_an_edited_row_is_named(tmp_path, store):
    await append_rows(store, 10)
    tamper(tmp_path / "state" / "fleetwatch.db", "UPDATE audit SET detail_json = '{\"i\":99}' WHERE seq = 6")
    result = await verify_audit(store)
    assert (result.ok, result.first_bad_seq) == (False, 6)
    assert "edited" in result.reason


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE audit SET at = '2030-01-01T00:00:00.000Z' WHERE seq = 3",
        "UPDATE audit SET actor = 'forged' WHERE seq = 3",
        "UPDATE audit SET kind = 'forged' WHERE seq = 3",
        "UPDATE audit SET proposal_id = NULL WHERE seq = 3",
        "UPDATE audit SET detail_json = '{\"i\": 2}' WHERE seq = 3",
    ],
)
async def test_an_edit_to_any_hashed_column_is_named(tmp_path, store, edit):
    await append_rows(store, 4)
    tamper(tmp_path / "state" / "fleetwatch.db", edit)
    result = await verify_audit(store)
    assert (result.ok, result.first_bad_seq) == (False, 3)


@pytest.mark.parametrize(("deleted", "named"), [(1, 1), (5, 5), (9, 9)])
async def test_a_deleted_row_is_named(tmp_path, store, deleted, named):
    await append_rows(store, 10)
    tamper(tmp_path / "state" / "fleetwatch.db", ("DELETE FROM audit WHERE seq = ?", (deleted,)))
    result = await verify_audit(store)
    assert (result.ok, result.first_bad_seq) == (False, named)
    assert "missing" in result.reason


async def test_a_row_inserted_in_the_middle_is_named(tmp_path, store):
    await append_rows(store, 10)
    tamper(
        tmp_path / "state" / "fleetwatch.db",
        "UPDATE audit SET seq = seq + 1000 WHERE seq >= 5",
        "UPDATE audit SET seq = seq - 999 WHERE seq >= 1000",
        (
            "INSERT INTO audit (seq, at, actor, kind, detail_json, prev_hash, hash)"
            " VALUES (5, '2030-01-01T00:00:00.000Z', 'forger', 'approval', '{}', ?, ?)",
            ("a" * 64, "b" * 64),
        ),
    )
    result = await verify_audit(store)
    assert (result.ok, result.first_bad_seq, result.rows) == (False, 5, 5)


async def test_a_row_appended_by_hand_is_named(tmp_path, store):
    heads = await append_rows(store, 3)
    tamper(
        tmp_path / "state" / "fleetwatch.db",
        (
            "INSERT INTO audit (at, actor, kind, detail_json, prev_hash, hash)"
            " VALUES ('2030-01-01T00:00:00.000Z', 'forger', 'approval', '{}', ?, ?)",
            (heads[-1].hash, "c" * 64),
        ),
    )
    result = await verify_audit(store)
    assert (result.ok, result.first_bad_seq) == (False, 4)


async def test_deleting_the_newest_rows_is_named_by_the_counter_a_deletion_cannot_roll_back(tmp_path, store):
    await append_rows(store, 6)
    tamper(tmp_path / "state" / "fleetwatch.db", "DELETE FROM audit WHERE seq >= 5")
    result = await verify_audit(store)
    assert (result.ok, result.first_bad_seq) == (False, 5)
    assert "rows 5 to 6 missing: the store's counter" in result.reason
    head = await append_audit(store, actor="approval_web", kind="note", detail={})
    assert head.seq == 7  # the deleted numbers are not taken again
    assert (await verify_audit(store)).first_bad_seq == 5


async def test_deleting_the_newest_rows_and_the_counter_is_caught_only_against_an_external_anchor(
    tmp_path, store
):
    await append_rows(store, 6)
    anchor = await audit_head(store)
    tamper(
        tmp_path / "state" / "fleetwatch.db",
        "DELETE FROM audit WHERE seq >= 5",
        "UPDATE sqlite_sequence SET seq = 4 WHERE name = 'audit'",
    )
    assert (await verify_audit(store)).ok
    result = await verify_audit(store, anchor=anchor)
    assert (result.ok, result.first_bad_seq) == (False, 5)
    assert "rows 5 to 6 missing" in result.reason


async def test_a_chain_rewritten_from_scratch_is_caught_only_against_an_external_anchor(tmp_path, store):
    await append_rows(store, 3)
    anchor = await audit_head(store)
    forged = tmp_path / "forged.db"
    conn = await open_store(forged, keyring=fresh_keyring())
    await migrate(conn)
    await append_audit(conn, actor="forger", kind="note", detail={})
    await append_audit(conn, actor="forger", kind="note", detail={})
    await append_audit(conn, actor="forger", kind="note", detail={})
    assert (await verify_audit(conn)).ok
    result = await verify_audit(conn, anchor=anchor)
    await conn.close()
    assert (result.ok, result.first_bad_seq) == (False, 3)
    assert (await verify_audit(store, anchor=anchor)).ok
    assert (await verify_audit(store, anchor=AuditHead(2, anchor.hash))).first_bad_seq == 2


async def test_a_write_the_file_cannot_grow_for_is_refused_as_store_full_and_rolled_back(store):
    await store.execute("INSERT INTO kv (key, value) VALUES ('before', 'x')")
    async with store.execute("PRAGMA page_count") as cursor:
        (pages,) = await cursor.fetchone()
    await store.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "disk full"
    with pytest.raises(StoreError) as full:
        async with write_tx(store):
            await append_audit(store, actor="test", kind="filler", detail={"text": "x" * 200_000})
    assert full.value.code == Code.STORE_FULL
    assert not store.in_transaction
    assert await fetch_all(store, "SELECT key FROM kv") == [("before",)]
    assert (await verify_audit(store)).ok


async def test_a_write_on_a_store_opened_read_only_is_refused_as_store_read_only(tmp_path):
    db = tmp_path / "fleetwatch.db"
    conn = await open_store(db)
    await migrate(conn)
    await conn.close()
    raw = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError) as refused:
            raw.execute("INSERT INTO kv (key, value) VALUES ('kill_switch', 'on')")
    finally:
        raw.close()
    translated = cannot_write(refused.value)
    assert translated is not None and translated.code == Code.STORE_READ_ONLY
    assert cannot_write(sqlite3.OperationalError("no such table: nowhere")) is None
    assert cannot_write(RuntimeError("not SQLite")) is None
