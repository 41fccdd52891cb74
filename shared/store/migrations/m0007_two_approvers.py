"""Schema version 7: two people for the riskiest changes (a propose rule's ``approvers: 2``).

- ``first_approvals``: the first of two approvals of one proposal, bound like an approval to
  the page session, the uid that signed it in, the card's hash, the executor's facts hash and
  the shown-at time, with its own window (``expires_at``). The proposal stays pending. It ends
  (``ended_code``) when its window passes, when the card changes before the second approval,
  or with the proposal; the executor claims it together with the second (``claimed``).
- ``approvals.uid``: the uid of the page session that approved (NULL before this version).
- ``approvals.first_approval_id``: the first approval a second one completes (NULL: one person).
- ``first_approvals_one_live``: at most one live first approval per proposal.
"""

SQL = """
CREATE TABLE first_approvals (
    id          TEXT PRIMARY KEY,
    proposal_id TEXT NOT NULL REFERENCES proposals (id),
    session_id  TEXT NOT NULL,
    uid         INTEGER NOT NULL,
    card_hash   TEXT NOT NULL,
    facts_hash  TEXT NOT NULL,
    shown_at    TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    expires_at  TEXT NOT NULL,
    claimed     INTEGER NOT NULL DEFAULT 0 CHECK (claimed IN (0, 1)),
    claimed_at  TEXT,
    ended_code  TEXT
);
CREATE UNIQUE INDEX first_approvals_one_live ON first_approvals (proposal_id)
    WHERE ended_code IS NULL AND claimed = 0;
ALTER TABLE approvals ADD COLUMN uid INTEGER;
ALTER TABLE approvals ADD COLUMN first_approval_id TEXT REFERENCES first_approvals (id);
"""
