"""The watch store: the assistant's own SQLite file (``FLEETWATCH_WATCH_DB``), through
`shared.sqlite` (WAL, ``BEGIN IMMEDIATE`` for every read-then-write). Schema: `schema`.

One `WatchStore` per process, one connection used by one coroutine at a time (a lock). Times
passed in are the watch's clock as UTC text (`services.assistant.watch.times.utc_text`). Nothing here decides what to post:
it records what the heartbeat found and answers what it asks.

Errors: `shared.sqlite.StoreError` (``store_busy``, ``store_schema_too_new`` for a newer schema
or a file that is not a watch store, e.g. the approval store).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import msgspec

from services.assistant.watch.diff import Change, KnownDevice, OpenFinding
from services.assistant.watch.schema import APPLICATION_ID, MIGRATIONS
from services.assistant.watch.silences import Silence
from shared.epiphan.attention import Finding, Priority
from shared.epiphan.fleet import Device
from shared.sqlite import apply_migrations, open_store, write_tx


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One row of ``history`` (see `Change` and `schema`)."""

    seq: int
    at: str
    kind: str
    device_id: str | None = None
    room: str | None = None
    key: str | None = None
    finding_kind: str | None = None
    priority: Priority | None = None
    old_priority: Priority | None = None
    facts: tuple[tuple[str, str], ...] = ()

    def finding(self) -> Finding:
        """The finding this row is about (a finding row's fields)."""
        return Finding(
            self.priority or Priority.WHEN_CONVENIENT,
            self.finding_kind or "",
            self.device_id or "",
            self.room or "",
            self.facts,
        )


@dataclass(frozen=True, slots=True)
class NoteRow:
    device_id: str
    room: str
    text: str
    set_at: str
    set_by: int


def _facts(raw: str | None) -> tuple[tuple[str, str], ...]:
    data = json.loads(raw or "[]")
    if isinstance(data, dict):
        return tuple((str(k), str(v)) for k, v in data.items())
    return tuple((str(k), str(v)) for k, v in data)


def _history(row: aiosqlite.Row) -> HistoryRow:
    return HistoryRow(
        seq=row["seq"],
        at=row["at"],
        kind=row["kind"],
        device_id=row["device_id"],
        room=row["room"],
        key=row["key"],
        finding_kind=row["finding_kind"],
        priority=None if row["priority"] is None else Priority(row["priority"]),
        old_priority=None if row["old_priority"] is None else Priority(row["old_priority"]),
        facts=_facts(row["facts_json"]),
    )


def _silence(row: aiosqlite.Row) -> Silence:
    return Silence(
        id=int(row["id"]),
        target_kind=row["target_kind"],
        target=row["target"],
        target_name=row["target_name"],
        reason=row["reason"],
        include_classes=bool(row["include_classes"]),
        set_by=int(row["set_by"]),
        set_by_name=row["set_by_name"],
        set_at=row["set_at"],
        until=row["until"],
        lifted_at=row["lifted_at"],
    )


def _silence_facts(silence: Silence) -> dict[str, str]:
    return {
        "silence": str(silence.id),
        "target_kind": silence.target_kind,
        "until": silence.until,
        "by": silence.set_by_name,
        "uid": str(silence.set_by),
        "reason": silence.reason,
        "include_classes": "yes" if silence.include_classes else "no",
    }


class WatchStore:
    """The watch's tables; see the module docstring. Build with `connect`."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, path: Path) -> WatchStore:
        """Open (creating) and migrate the watch store at `path`.

        Raises:
            StoreError: as the module docstring says.
        """
        conn = await open_store(path)
        try:
            await apply_migrations(conn, MIGRATIONS, application_id=APPLICATION_ID, name="a watch store")
        except BaseException:
            await conn.close()
            raise
        return cls(conn)

    async def close(self) -> None:
        await self._conn.close()

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[aiosqlite.Row]:
        async with self._lock, self._conn.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    # --- small state ------------------------------------------------------------------------

    async def kv(self) -> dict[str, str]:
        """Every ``kv`` entry."""
        return {row["key"]: row["value"] for row in await self._all("SELECT key, value FROM kv")}

    async def set_kv(self, **values: str | int) -> None:
        """Set ``kv`` entries (one transaction)."""
        async with self._lock, write_tx(self._conn):
            for key, value in values.items():
                await self._conn.execute(
                    "INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, str(value)),
                )

    # --- the fleet as last read -------------------------------------------------------------

    async def known_devices(self) -> dict[str, KnownDevice]:
        rows = await self._all("SELECT id, name, online, gone_at FROM devices")
        return {
            r["id"]: KnownDevice(r["id"], r["name"], bool(r["online"]), r["gone_at"] is not None)
            for r in rows
        }

    async def rooms(self) -> list[KnownDevice]:
        """The rooms of the last read (not gone), by name."""
        rows = await self._all("SELECT id, name, online FROM devices WHERE gone_at IS NULL ORDER BY name, id")
        return [KnownDevice(r["id"], r["name"], bool(r["online"])) for r in rows]

    async def open_findings(self) -> dict[str, OpenFinding]:
        rows = await self._all(
            "SELECT key, device_id, room, kind, priority, facts_json FROM findings WHERE resolved_at IS NULL"
        )
        return {
            r["key"]: OpenFinding(
                r["key"],
                r["device_id"],
                r["room"],
                r["kind"],
                Priority(r["priority"]),
                _facts(r["facts_json"]),
            )
            for r in rows
        }

    async def record_read(
        self,
        at: str,
        devices: Iterable[Device],
        changes: Iterable[Change],
        current: dict[str, Finding],
        extra: Iterable[tuple[str, dict[str, Any]]] = (),
    ) -> None:
        """Record one good read in one transaction: every room (first and last seen, gone ones
        marked), every finding (opened, worse/better, seen, resolved), a history row per
        change, and the `extra` history rows (``(kind, facts)``)."""
        rows = [
            (d.id, d.name or d.id, d.model, d.group_name, d.firmware, int(d.online), at, at) for d in devices
        ]
        async with self._lock, write_tx(self._conn):
            conn = self._conn
            await conn.executemany(
                "INSERT INTO devices (id, name, model, group_name, firmware, online, first_seen, last_seen)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
                " model = excluded.model, group_name = excluded.group_name, firmware = excluded.firmware,"
                " online = excluded.online, last_seen = excluded.last_seen, gone_at = NULL",
                rows,
            )
            for change in changes:
                if change.kind == "device_gone":
                    await conn.execute(
                        "UPDATE devices SET gone_at = ? WHERE id = ? AND gone_at IS NULL",
                        (at, change.device_id),
                    )
                elif change.kind == "finding_resolved":
                    await conn.execute(
                        "UPDATE findings SET resolved_at = ? WHERE key = ? AND resolved_at IS NULL",
                        (at, change.key),
                    )
                elif change.kind == "finding_opened":
                    await self._insert_finding(at, change)
                if change.kind != "finding_better":
                    await self._add_history(at, change)
            await conn.executemany(
                "UPDATE findings SET last_seen = ?, priority = ?, facts_json = ?, room = ?"
                " WHERE key = ? AND resolved_at IS NULL",
                [
                    (at, int(f.priority), json.dumps(f.facts), f.device_name, key)
                    for key, f in current.items()
                ],
            )
            for kind, facts in extra:
                await self._insert_history(at, kind, facts=facts)

    async def _insert_finding(self, at: str, change: Change) -> None:
        await self._conn.execute(
            "INSERT INTO findings (key, device_id, room, kind, priority, facts_json, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                change.key,
                change.device_id,
                change.room,
                change.finding_kind,
                int(change.priority or 0),
                json.dumps(change.facts),
                at,
                at,
            ),
        )

    async def _add_history(self, at: str, change: Change) -> None:
        await self._insert_history(
            at,
            change.kind,
            device_id=change.device_id,
            room=change.room,
            key=change.key,
            finding_kind=change.finding_kind,
            priority=change.priority,
            old_priority=change.old_priority,
            facts=change.facts,
        )

    async def _insert_history(
        self,
        at: str,
        kind: str,
        *,
        device_id: str | None = None,
        room: str | None = None,
        key: str | None = None,
        finding_kind: str | None = None,
        priority: int | None = None,
        old_priority: int | None = None,
        facts: Any = (),
    ) -> None:
        await self._conn.execute(
            "INSERT INTO history (at, kind, device_id, room, key, finding_kind, priority, old_priority, facts_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                at,
                kind,
                device_id,
                room,
                key,
                finding_kind,
                None if priority is None else int(priority),
                None if old_priority is None else int(old_priority),
                json.dumps(facts if isinstance(facts, dict) else list(facts)),
            ),
        )

    async def add_history(self, at: str, kind: str, **fields: Any) -> None:
        """One history row (``device_id``, ``room``, ``key``, ``finding_kind``, ``priority``,
        ``facts``...)."""
        async with self._lock, write_tx(self._conn):
            await self._insert_history(at, kind, **fields)

    async def open_fleet_finding(self, at: str, change: Change) -> None:
        """Open a finding about the whole fleet (``fleet_unreadable``) and record it."""
        async with self._lock, write_tx(self._conn):
            await self._insert_finding(at, change)
            await self._add_history(at, change)

    async def resolve_fleet_finding(self, at: str, change: Change) -> bool:
        """Resolve the open fleet finding `change` names; False when none was open."""
        async with self._lock, write_tx(self._conn):
            cursor = await self._conn.execute(
                "UPDATE findings SET resolved_at = ? WHERE key = ? AND resolved_at IS NULL", (at, change.key)
            )
            if cursor.rowcount != 1:
                return False
            await self._add_history(at, change)
            return True

    # --- history ------------------------------------------------------------------------------

    async def history_after(self, seq: int) -> list[HistoryRow]:
        """History rows after `seq`, oldest first."""
        rows = await self._all("SELECT * FROM history WHERE seq > ? ORDER BY seq", (seq,))
        return [_history(r) for r in rows]

    async def history_since(self, at: str, limit: int) -> tuple[list[HistoryRow], int]:
        """History rows at or after `at`, newest first, at most `limit`; and how many more."""
        rows = await self._all(
            "SELECT * FROM history WHERE at >= ? ORDER BY seq DESC LIMIT ?", (at, limit + 1)
        )
        total = len(rows)
        if total > limit:
            count = await self._all("SELECT count(*) AS n FROM history WHERE at >= ?", (at,))
            return [_history(r) for r in rows[:limit]], int(count[0]["n"]) - limit
        return [_history(r) for r in rows], 0

    async def last_seq(self) -> int:
        rows = await self._all("SELECT coalesce(max(seq), 0) AS seq FROM history")
        return int(rows[0]["seq"])

    async def record_beat(
        self, started: str, finished: str, *, ok: bool, code: str | None, elapsed_ms: int, **counts: int
    ) -> None:
        """One heartbeat (``devices``, ``findings``, ``changes`` counts)."""
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO beats (started_at, finished_at, ok, code, devices, findings, changes, elapsed_ms)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    started,
                    finished,
                    int(ok),
                    code,
                    counts.get("devices", 0),
                    counts.get("findings", 0),
                    counts.get("changes", 0),
                    elapsed_ms,
                ),
            )

    # --- readiness, notices, sweeps -------------------------------------------------------------

    async def readiness_posted(self, since: str) -> set[str]:
        """The keys (room|event|start) of readiness posts for events starting at or after `since`."""
        rows = await self._all(
            "SELECT device_id, event_id, event_start FROM readiness_posts WHERE event_start >= ?", (since,)
        )
        return {f"{r['device_id']}|{r['event_id']}|{r['event_start']}" for r in rows}

    async def record_readiness(
        self, at: str, items: Iterable[tuple[str, str, str, str, Sequence[str], str, str]]
    ) -> None:
        """``(device_id, event_id, event_start, verdict, reasons, room, title)`` per event
        posted, and a history row each."""
        async with self._lock, write_tx(self._conn):
            for device_id, event_id, start, verdict, reasons, room, title in items:
                await self._conn.execute(
                    "INSERT OR IGNORE INTO readiness_posts (device_id, event_id, event_start, verdict,"
                    " reasons_json, posted_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (device_id, event_id, start, verdict, json.dumps(list(reasons)), at),
                )
                await self._insert_history(
                    at,
                    "readiness",
                    device_id=device_id,
                    room=room,
                    facts={"verdict": verdict, "event": event_id, "title": title},
                )

    async def noticed(self, proposal_ids: Iterable[str]) -> set[str]:
        """The proposals among `proposal_ids` a notice was already posted for."""
        rows = await self._all(
            "SELECT proposal_id FROM notices WHERE proposal_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(proposal_ids)),),
        )
        return {r["proposal_id"] for r in rows}

    async def record_notice(self, at: str, proposal_id: str) -> bool:
        """Mark a proposal as noticed; False when it already was (a notice is posted once)."""
        async with self._lock:
            cursor = await self._conn.execute(
                "INSERT OR IGNORE INTO notices (proposal_id, at) VALUES (?, ?)", (proposal_id, at)
            )
            return cursor.rowcount == 1

    async def sweep_dates(self) -> dict[str, str | None]:
        """``{local date: posted_at or None}`` of every sweep kept."""
        rows = await self._all("SELECT local_date, posted_at FROM sweeps")
        return {r["local_date"]: r["posted_at"] for r in rows}

    async def last_sweep(self) -> tuple[str, str] | None:
        """(its local date, when it ran) of the newest sweep, or None."""
        rows = await self._all("SELECT local_date, at FROM sweeps ORDER BY local_date DESC LIMIT 1")
        return (rows[0]["local_date"], rows[0]["at"]) if rows else None

    async def record_sweep(self, at: str, local_date: str, report: dict[str, Any]) -> None:
        async with self._lock, write_tx(self._conn):
            await self._conn.execute(
                "INSERT OR IGNORE INTO sweeps (local_date, at, report_json) VALUES (?, ?, ?)",
                (local_date, at, json.dumps(report)),
            )
            await self._insert_history(
                at, "sweep", facts={"rooms": report["rooms"], "online": report["online"], "date": local_date}
            )

    async def unposted_sweeps(self) -> list[tuple[str, dict[str, Any]]]:
        rows = await self._all(
            "SELECT local_date, report_json FROM sweeps WHERE posted_at IS NULL ORDER BY local_date"
        )
        return [(r["local_date"], json.loads(r["report_json"])) for r in rows]

    async def mark_sweep_posted(self, local_date: str, at: str) -> None:
        async with self._lock:
            await self._conn.execute("UPDATE sweeps SET posted_at = ? WHERE local_date = ?", (at, local_date))

    async def count_history(self, since: str) -> dict[str, int]:
        """History rows per kind at or after `since`."""
        rows = await self._all(
            "SELECT kind, count(*) AS n FROM history WHERE at >= ? GROUP BY kind", (since,)
        )
        return {r["kind"]: int(r["n"]) for r in rows}

    # --- notes ------------------------------------------------------------------------------------

    async def set_note(self, at: str, device_id: str, room: str, text: str, uid: int) -> None:
        async with self._lock, write_tx(self._conn):
            await self._conn.execute(
                "INSERT INTO notes (device_id, room, text, set_at, set_by) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (device_id) DO UPDATE SET room = excluded.room, text = excluded.text,"
                " set_at = excluded.set_at, set_by = excluded.set_by",
                (device_id, room, text, at, uid),
            )
            await self._insert_history(at, "note", device_id=device_id, room=room, facts={"text": text})

    async def clear_note(self, at: str, device_id: str, room: str) -> bool:
        async with self._lock, write_tx(self._conn):
            cursor = await self._conn.execute("DELETE FROM notes WHERE device_id = ?", (device_id,))
            if cursor.rowcount:
                await self._insert_history(at, "note_cleared", device_id=device_id, room=room)
            return bool(cursor.rowcount)

    async def notes(self) -> list[NoteRow]:
        """Every note, by room name."""
        rows = await self._all(
            "SELECT device_id, room, text, set_at, set_by FROM notes ORDER BY room, device_id"
        )
        return [NoteRow(r["device_id"], r["room"], r["text"], r["set_at"], int(r["set_by"])) for r in rows]

    # --- silences (issue 29) ---------------------------------------------------------------------

    async def add_silence(self, silence: Silence, audit: Callable[[Silence], Awaitable[None]]) -> Silence:
        """Keep `silence` (its ``id`` is ignored) and a ``silence`` history row, in one
        transaction that commits only when `audit` (given the silence with its ID) returned:
        when it raises, nothing is kept and its exception propagates. It with its ID."""
        async with self._lock, write_tx(self._conn):
            cursor = await self._conn.execute(
                "INSERT INTO silences (target_kind, target, target_name, reason, include_classes, set_by,"
                " set_by_name, set_at, until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    silence.target_kind,
                    silence.target,
                    silence.target_name,
                    silence.reason,
                    int(silence.include_classes),
                    silence.set_by,
                    silence.set_by_name,
                    silence.set_at,
                    silence.until,
                ),
            )
            kept = msgspec.structs.replace(silence, id=int(cursor.lastrowid or 0))
            await self._insert_history(
                silence.set_at,
                "silence",
                device_id=silence.target if silence.target_kind == "room" else None,
                room=silence.target_name,
                facts=_silence_facts(kept),
            )
            await audit(kept)
            return kept

    async def silences(self, since: str) -> list[Silence]:
        """Every silence that held at or after `since` (lifted and expired ones too), oldest
        first."""
        rows = await self._all(
            "SELECT * FROM silences WHERE until > ? AND (lifted_at IS NULL OR lifted_at > ?) ORDER BY id",
            (since, since),
        )
        return [_silence(r) for r in rows]

    async def lift_silence(
        self, at: str, silence_id: int, uid: int, audit: Callable[[Silence], Awaitable[None]]
    ) -> Silence | None:
        """Lift the silence `silence_id` if it still holds at `at` (and record it), committed
        only when `audit` (given the silence) returned (else nothing changes and its exception
        propagates); None when no such silence holds."""
        async with self._lock, write_tx(self._conn):
            cursor = await self._conn.execute(
                "UPDATE silences SET lifted_at = ?, lifted_by = ? WHERE id = ? AND lifted_at IS NULL"
                " AND until > ? AND set_at <= ?",
                (at, uid, silence_id, at, at),
            )
            if cursor.rowcount != 1:
                return None
            async with self._conn.execute("SELECT * FROM silences WHERE id = ?", (silence_id,)) as rows:
                row = await rows.fetchone()
            assert row is not None  # the UPDATE above found it, in this transaction
            lifted = _silence(row)
            await self._insert_history(
                at,
                "unsilence",
                device_id=lifted.target if lifted.target_kind == "room" else None,
                room=lifted.target_name,
                facts={**_silence_facts(lifted), "lifted_by": str(uid)},
            )
            await audit(lifted)
            return lifted

    # --- event captures (issue 29) --------------------------------------------------------------

    async def see_events(
        self, at: str, seen: Iterable[tuple[str, str, str, str, str, str, bool, bool]]
    ) -> None:
        """``(device_id, event_id, start, finish, room, title, on_now, recording)`` per event
        a read saw coming or on: kept, and marked on and recorded when it was."""
        async with self._lock, write_tx(self._conn):
            await self._conn.executemany(
                "INSERT INTO event_captures (device_id, event_id, start, finish, room, title, seen_on,"
                " recorded, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                " finish = excluded.finish, room = excluded.room, title = excluded.title,"
                " seen_on = max(seen_on, excluded.seen_on), recorded = max(recorded, excluded.recorded),"
                " last_seen = excluded.last_seen",
                [(d, e, st, fi, r, t, int(on), int(rec), at) for d, e, st, fi, r, t, on, rec in seen],
            )

    async def ended_events(self, at: str) -> list[aiosqlite.Row]:
        """The kept events that finished before `at` and were not judged yet, by finish."""
        return await self._all(
            "SELECT * FROM event_captures WHERE judged_at IS NULL AND finish <= ? ORDER BY finish, device_id",
            (at,),
        )

    async def judge_events(
        self, at: str, judged: Iterable[tuple[str, str, str, str | None, dict[str, Any]]]
    ) -> None:
        """``(device_id, event_id, start, history kind or None, facts)`` per ended event: each
        marked judged, and a history row (Fix first) when a kind is given."""
        async with self._lock, write_tx(self._conn):
            for device_id, event_id, start, kind, facts in judged:
                await self._conn.execute(
                    "UPDATE event_captures SET judged_at = ? WHERE device_id = ? AND event_id = ? AND start = ?",
                    (at, device_id, event_id, start),
                )
                if kind is not None:
                    await self._insert_history(
                        at,
                        kind,
                        device_id=device_id,
                        room=facts.get("room", ""),
                        key=f"{device_id}|{kind}|{event_id}|{start}",
                        finding_kind=kind,
                        priority=int(Priority.FIX_FIRST),
                        facts=facts,
                    )

    # --- notice follow-ups (issue 29) -----------------------------------------------------------

    async def followups(self, proposal_ids: Iterable[str]) -> dict[str, tuple[str | None, str | None]]:
        """``{proposal ID: (reminded_at, closed_at)}`` of the noticed proposals among
        `proposal_ids` (a noticed one with no follow-up yet: ``(None, None)``)."""
        rows = await self._all(
            "SELECT n.proposal_id, f.reminded_at, f.closed_at FROM notices n LEFT JOIN notice_followups f"
            " USING (proposal_id) WHERE n.proposal_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(proposal_ids)),),
        )
        return {r["proposal_id"]: (r["reminded_at"], r["closed_at"]) for r in rows}

    async def record_followup(self, at: str, proposal_id: str, *, closed_as: str | None = None) -> bool:
        """Mark the reminder (or, with `closed_as`, the closing line) of a proposal as posted;
        False when it already was (each goes out once)."""
        sql = (
            "UPDATE notice_followups SET closed_at = ?, closed_as = ? WHERE proposal_id = ? AND closed_at IS NULL"
            if closed_as is not None
            else "UPDATE notice_followups SET reminded_at = ?, closed_as = coalesce(?, closed_as)"
            " WHERE proposal_id = ? AND reminded_at IS NULL"
        )
        async with self._lock, write_tx(self._conn):
            await self._conn.execute(
                "INSERT OR IGNORE INTO notice_followups (proposal_id) VALUES (?)", (proposal_id,)
            )
            cursor = await self._conn.execute(sql, (at, closed_as, proposal_id))
            return cursor.rowcount == 1

    # --- asks from Slack ----------------------------------------------------------------------

    async def claim_slack_ask(self, key: str, at: str) -> bool:
        """Claim the Slack ask `key` (its ``event_id``, or a slash command's ``envelope_id``) at
        `at`: True the first time, False when it was claimed before (a redelivery: answer once)."""
        async with self._lock:
            cursor = await self._conn.execute(
                "INSERT OR IGNORE INTO slack_seen (key, at) VALUES (?, ?)", (key, at)
            )
            return cursor.rowcount == 1

    # --- upkeep -------------------------------------------------------------------------------------

    async def prune(self, before: str) -> None:
        """Forget history, beats, resolved findings, readiness posts, notices, sweeps and Slack asks older
        than `before` (the store keeps `shared.wire.assistant.MAX_HISTORY_DAYS`)."""
        async with self._lock, write_tx(self._conn):
            for sql in (
                "DELETE FROM history WHERE at < ?",
                "DELETE FROM beats WHERE started_at < ?",
                "DELETE FROM findings WHERE resolved_at IS NOT NULL AND resolved_at < ?",
                "DELETE FROM readiness_posts WHERE event_start < ?",
                "DELETE FROM notices WHERE at < ?",
                "DELETE FROM sweeps WHERE at < ?",
                "DELETE FROM slack_seen WHERE at < ?",
                "DELETE FROM silences WHERE until < ?",
                "DELETE FROM event_captures WHERE finish < ?",
                "DELETE FROM notice_followups WHERE proposal_id NOT IN (SELECT proposal_id FROM notices)"
                " AND ? IS NOT NULL",
            ):
                await self._conn.execute(sql, (before,))
