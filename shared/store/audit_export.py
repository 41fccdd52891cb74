"""The audit outside the store: its rows as JSON lines, each with its chain position and MAC.

- `export_rows`: the rows at or after a time, oldest first (``fleetwatch audit export``).
- `AuditSink`: the continuous copy (``FLEETWATCH_AUDIT_EXPORT``: an absolute JSON-lines file
  path, or ``syslog``). Each writing service (approval_web, the executor) attaches it to the
  connections it writes through; every row that service appends is sent right after it
  commits. A row that cannot be sent (a full disk, no syslog) is dropped and counted, never
  retried and never in the way of the write it records: the store stays the record.
- `sink_counts`: what a service's sink sent and dropped, from the small counts file it keeps
  beside the store (``audit_export.<writer>.json``), read by ``fleetwatch status`` and ``doctor``.

An exported row is the row as the table holds it (`shared.store.db.EXPORT_COLUMNS`): ``seq``,
``at``, ``actor``, ``kind``, ``proposal_id``, ``detail_json`` (the exact text the hash covers),
``prev_hash``, ``hash``, ``writer`` and ``mac``; so anyone holding the rows can recompute the
chain, and a service's key checks its MACs. It never holds a question's text or a secret
because no audit row does (the rows' own rules: `shared.store.audit_safe`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import syslog
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Final

import aiosqlite

from shared.store.db import EXPORT_COLUMNS, export_own_appends

SYSLOG: Final = "syslog"
"""The ``FLEETWATCH_AUDIT_EXPORT`` value that sends rows to the local syslog."""


def row_line(row: Mapping[str, Any]) -> str:
    """One exported row as one line of JSON (keys sorted, no line break)."""
    return json.dumps({k: row[k] for k in EXPORT_COLUMNS}, sort_keys=True, ensure_ascii=False)


async def export_rows(
    conn: aiosqlite.Connection, *, since: str | None = None, after_seq: int = 0
) -> AsyncIterator[dict[str, Any]]:
    """Every audit row whose ``at`` is at or after `since` (DB-clock text, UTC; None: all) and
    whose ``seq`` is above `after_seq`, oldest first, as `EXPORT_COLUMNS` dicts. Reads only."""
    sql = (
        "SELECT seq, at, actor, kind, proposal_id, detail_json, prev_hash, hash, writer, mac FROM audit"
        " WHERE (? IS NULL OR at >= ?) AND seq > ? ORDER BY seq"
    )
    async with conn.execute(sql, (since, since, int(after_seq))) as cursor:
        async for row in cursor:
            yield dict(zip(EXPORT_COLUMNS, tuple(row), strict=True))


@dataclasses.dataclass(frozen=True, slots=True)
class SinkCounts:
    """A service's continuous export: where to, rows sent, rows dropped."""

    writer: str
    target: str
    sent: int
    dropped: int


def counts_path(db: Path, writer: str) -> Path:
    """Where `writer`'s sink keeps its counts: beside the store."""
    return db.parent / f"audit_export.{writer}.json"


def sink_counts(db: Path, writer: str) -> SinkCounts | None:
    """`writer`'s counts as its sink last wrote them, or None (no sink ran, or unreadable)."""
    try:
        data = json.loads(counts_path(db, writer).read_text(encoding="utf-8"))
        return SinkCounts(writer, str(data["target"]), int(data["sent"]), int(data["dropped"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def sink_for(target: str | None, *, db: Path, writer: str) -> AuditSink | None:
    """`writer`'s sink for ``FLEETWATCH_AUDIT_EXPORT`` = `target`, or None when it is unset."""
    return None if target is None else AuditSink(target, db=db, writer=writer)


class AuditSink:
    """The continuous export of one writing service (`writer`) to `target` (a path or
    `SYSLOG`); counts kept in `counts_path` (`db`, `writer`)."""

    def __init__(self, target: str, *, db: Path, writer: str) -> None:
        self.target = target
        self.writer = writer
        self.sent = 0
        self.dropped = 0
        self._counts = counts_path(db, writer)
        if target == SYSLOG:
            syslog.openlog(f"fleetwatch-{writer}", 0, syslog.LOG_AUTH)

    def attach(self, conn: aiosqlite.Connection) -> None:
        """Send every row appended on `conn` once it commits (`export_own_appends`)."""
        export_own_appends(conn, self.send)

    def send(self, row: Mapping[str, Any]) -> None:
        """Send one row; a failure is counted as dropped. Never raises."""
        line = row_line(row)
        try:
            if self.target == SYSLOG:
                syslog.syslog(syslog.LOG_INFO, line)
            else:
                with open(self.target, "a", encoding="utf-8") as sink:
                    sink.write(line + "\n")
            self.sent += 1
        except OSError:
            self.dropped += 1
        self._write_counts()

    def _write_counts(self) -> None:
        data = {"target": self.target, "sent": self.sent, "dropped": self.dropped}
        part = self._counts.with_name(self._counts.name + ".part")
        try:
            part.write_text(json.dumps(data), encoding="utf-8")
            os.replace(part, self._counts)
        except OSError:
            pass  # the counts are a report; the rows themselves went (or were counted) above
