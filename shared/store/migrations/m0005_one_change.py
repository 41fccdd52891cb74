"""Schema version 5: one change per room at a time, pauses a person can lift, rooms in words.

- ``proposal_targets.name``: the room's name as the executor read it on the sandbox team's list
  when the proposal was prepared (display text only, never bound, never resolved again).
- ``executions.acknowledged_at`` / ``acknowledged_by``: an operator looked at a change that
  ended ``unknown`` or ran without being verified, and said so (``fleetwatch acknowledge``);
  until then, or until a fresh read verifies it, no new proposal may name its rooms.
- ``denial_lifts``: an operator lifted the denial pause of one tool on one room
  (``fleetwatch resume --denials``): denials decided at or before ``lifted_at`` no longer count.
- ``executions_by_proposal``: the intake reads the last change on each room.
"""

SQL = """
ALTER TABLE proposal_targets ADD COLUMN name TEXT;
ALTER TABLE executions ADD COLUMN acknowledged_at TEXT;
ALTER TABLE executions ADD COLUMN acknowledged_by TEXT;
CREATE TABLE denial_lifts (
    tool      TEXT NOT NULL,
    master_id TEXT NOT NULL,
    lifted_at TEXT NOT NULL,
    actor     TEXT NOT NULL,
    PRIMARY KEY (tool, master_id)
) WITHOUT ROWID;
CREATE INDEX executions_by_proposal ON executions (proposal_id, started_at);
"""
