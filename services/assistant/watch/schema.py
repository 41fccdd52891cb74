"""The watch store's schema (its own SQLite file, ``FLEETWATCH_WATCH_DB``; never the approval
store), as versioned migrations applied by `shared.sqlite.apply_migrations` with `APPLICATION_ID`.

Times are TEXT, UTC ``YYYY-MM-DDTHH:MM:SS.SSSZ`` (fixed width: text order is time order), from
the watch's clock (the beat's ``now``). JSON columns hold ``json.dumps`` of plain values.

- ``devices``: each room as last read, first and last seen, ``gone_at`` when a read no
  longer listed it.
- ``findings``: each finding with first seen, last seen and ``resolved_at``; at most one open
  row per ``key`` (room, kind, channel or source: `services.assistant.watch.diff.finding_key`).
- ``history``: what changed, when (rooms, findings, reads, posts, notes), in ``seq`` order;
  the digest posts what is after the cursor ``kv.digest_seq``.
- ``beats``: each heartbeat: when, how long, whether it read the fleet (else its code).
- ``readiness_posts``: one row per event posted (room, event ID, start): never posted twice.
- ``sweeps``: one nightly sweep per local date, and when it was posted.
- ``notes``: an operator's one-line note per room.
- ``notices``: the proposals a notice was posted for.
- ``kv``: the watch's small state (failed beats in a row, the digest cursor, the last read).

Version 2 (issue 29):

- ``silences``: an operator's silence of a room or a group: who (uid and user name), why,
  from when, until when (always set: every silence expires), ``lifted_at`` when lifted early,
  and whether it also hides "not recording during an event" (``include_classes``).
- ``event_captures``: each event the watch saw coming or on, per room: whether a recording was
  seen on its channels while it was on, and ``judged_at`` once its end was judged (a missed
  recording, or one that may have been missed while the watch was down).
- ``notice_followups``: per noticed proposal, when its reminder went out and when the line
  saying it was decided or expired went out (each once).
"""

from __future__ import annotations

from typing import Final

from shared.sqlite import Migration

APPLICATION_ID: Final = 0x46574154
"""``PRAGMA application_id`` of a watch store ("FWAT"): the approval store's file is refused."""

V1: Final = """
CREATE TABLE devices (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    model       TEXT NOT NULL DEFAULT '',
    group_name  TEXT NOT NULL DEFAULT '',
    firmware    TEXT NOT NULL DEFAULT '',
    online      INTEGER NOT NULL,
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL,
    gone_at     TEXT
);
CREATE TABLE findings (
    id          INTEGER PRIMARY KEY,
    key         TEXT NOT NULL,
    device_id   TEXT NOT NULL,
    room        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    priority    INTEGER NOT NULL,
    facts_json  TEXT NOT NULL,
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL,
    resolved_at TEXT
);
CREATE UNIQUE INDEX findings_open ON findings (key) WHERE resolved_at IS NULL;
CREATE INDEX findings_by_resolved ON findings (resolved_at);
CREATE TABLE history (
    seq          INTEGER PRIMARY KEY,
    at           TEXT NOT NULL,
    kind         TEXT NOT NULL,
    device_id    TEXT,
    room         TEXT,
    key          TEXT,
    finding_kind TEXT,
    priority     INTEGER,
    old_priority INTEGER,
    facts_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX history_by_time ON history (at);
CREATE TABLE beats (
    seq         INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    code        TEXT,
    devices     INTEGER NOT NULL DEFAULT 0,
    findings    INTEGER NOT NULL DEFAULT 0,
    changes     INTEGER NOT NULL DEFAULT 0,
    elapsed_ms  INTEGER NOT NULL
);
CREATE INDEX beats_by_time ON beats (started_at);
CREATE TABLE readiness_posts (
    device_id    TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    event_start  TEXT NOT NULL,
    verdict      TEXT NOT NULL,
    reasons_json TEXT NOT NULL,
    posted_at    TEXT NOT NULL,
    PRIMARY KEY (device_id, event_id, event_start)
) WITHOUT ROWID;
CREATE TABLE sweeps (
    local_date  TEXT PRIMARY KEY,
    at          TEXT NOT NULL,
    report_json TEXT NOT NULL,
    posted_at   TEXT
);
CREATE TABLE notes (
    device_id TEXT PRIMARY KEY,
    room      TEXT NOT NULL,
    text      TEXT NOT NULL,
    set_at    TEXT NOT NULL,
    set_by    INTEGER NOT NULL
);
CREATE TABLE notices (
    proposal_id TEXT PRIMARY KEY,
    at          TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE kv (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"""

V2: Final = """
CREATE TABLE silences (
    id              INTEGER PRIMARY KEY,
    target_kind     TEXT NOT NULL CHECK (target_kind IN ('room', 'group')),
    target          TEXT NOT NULL,
    target_name     TEXT NOT NULL,
    reason          TEXT NOT NULL,
    include_classes INTEGER NOT NULL DEFAULT 0,
    set_by          INTEGER NOT NULL,
    set_by_name     TEXT NOT NULL,
    set_at          TEXT NOT NULL,
    until           TEXT NOT NULL,
    lifted_at       TEXT,
    lifted_by       INTEGER
);
CREATE INDEX silences_by_until ON silences (until);
CREATE TABLE event_captures (
    device_id   TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    start       TEXT NOT NULL,
    finish      TEXT NOT NULL,
    room        TEXT NOT NULL,
    title       TEXT NOT NULL,
    seen_on     INTEGER NOT NULL DEFAULT 0,
    recorded    INTEGER NOT NULL DEFAULT 0,
    last_seen   TEXT NOT NULL,
    judged_at   TEXT,
    PRIMARY KEY (device_id, event_id, start)
) WITHOUT ROWID;
CREATE INDEX event_captures_open ON event_captures (finish) WHERE judged_at IS NULL;
CREATE TABLE notice_followups (
    proposal_id TEXT PRIMARY KEY,
    reminded_at TEXT,
    closed_at   TEXT,
    closed_as   TEXT
) WITHOUT ROWID;
"""

MIGRATIONS: Final[tuple[Migration, ...]] = (Migration(1, V1), Migration(2, V2))
"""Versions strictly increasing from 1 (this store's own numbering)."""
