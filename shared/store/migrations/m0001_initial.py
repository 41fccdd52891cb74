"""Schema version 1: proposals, their targets, approvals, executions, audit, sessions, limits, kv.

Times are TEXT in the database clock's form ``YYYY-MM-DDTHH:MM:SS.SSSZ`` (UTC, fixed width, so
comparing text compares time). JSON columns hold canonical JSON (`shared.canonical`).
"""

SQL = """
CREATE TABLE proposals (
    id               TEXT PRIMARY KEY,
    created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    tool             TEXT NOT NULL,
    arguments_json   TEXT NOT NULL,
    targets_json     TEXT NOT NULL,
    fingerprint_json TEXT NOT NULL,
    fingerprint_hash TEXT NOT NULL,
    schema_version   INTEGER NOT NULL,
    slot             TEXT NOT NULL DEFAULT 'sandbox',
    reason           TEXT NOT NULL,
    proposed_by      TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'executed')),
    status_code      TEXT,
    bound_record     BLOB NOT NULL,
    seal             TEXT NOT NULL,
    expires_at       TEXT,
    decided_at       TEXT,
    session_turn     TEXT
);
CREATE INDEX proposals_by_status ON proposals (status, created_at);
CREATE INDEX proposals_by_tool ON proposals (tool, created_at);

CREATE TABLE proposal_targets (
    proposal_id TEXT NOT NULL REFERENCES proposals (id) ON DELETE CASCADE,
    master_id   TEXT NOT NULL,
    PRIMARY KEY (proposal_id, master_id)
) WITHOUT ROWID;
CREATE INDEX proposal_targets_by_master ON proposal_targets (master_id);

CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    last_seen       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    approvals_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    proposal_id TEXT NOT NULL REFERENCES proposals (id),
    session_id  TEXT NOT NULL,
    card_hash   TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    expires_at  TEXT NOT NULL,
    used        INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1)),
    used_at     TEXT,
    claimed     INTEGER NOT NULL DEFAULT 0 CHECK (claimed IN (0, 1)),
    claimed_at  TEXT,
    CHECK (claimed = 0 OR used = 1)
);
CREATE INDEX approvals_by_proposal ON approvals (proposal_id);
-- At most one consumed approval per proposal: a proposal runs at most once.
CREATE UNIQUE INDEX approvals_one_used_per_proposal ON approvals (proposal_id) WHERE used = 1;

CREATE TABLE executions (
    id                  TEXT PRIMARY KEY,
    approval_id         TEXT NOT NULL UNIQUE REFERENCES approvals (id),
    proposal_id         TEXT NOT NULL REFERENCES proposals (id),
    started_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    finished_at         TEXT,
    outcome             TEXT NOT NULL DEFAULT 'running'
                        CHECK (outcome IN ('running', 'ok', 'error', 'unknown', 'refused')),
    refusal_code        TEXT,
    detail_json         TEXT,
    verification        TEXT CHECK (verification IN ('verified', 'not_observed', 'contradicted')),
    verified_at         TEXT,
    verification_detail TEXT,
    CHECK (outcome = 'refused' OR refusal_code IS NULL)
);
-- A proposal's write tool is called at most once: one execution that was not refused.
CREATE UNIQUE INDEX executions_one_run_per_proposal ON executions (proposal_id) WHERE outcome != 'refused';

CREATE TABLE audit (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    proposal_id TEXT,
    detail_json TEXT NOT NULL,
    prev_hash   TEXT NOT NULL UNIQUE,
    hash        TEXT NOT NULL UNIQUE
);
CREATE INDEX audit_by_proposal ON audit (proposal_id, seq);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'audit rows are append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'audit rows are append-only');
END;

CREATE TABLE limits (
    key        TEXT PRIMARY KEY,
    value      INTEGER NOT NULL DEFAULT 0,
    until      TEXT,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);

CREATE TABLE kv (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
"""
