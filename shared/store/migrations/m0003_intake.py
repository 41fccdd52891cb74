"""Schema version 3: indexes for the proposal intake's limits (owned by approval_web).

- ``proposals_by_created``: the hourly cap counts proposals by ``created_at`` whatever their
  status (`services.approval_web.limits.read_counts`).
- ``proposals_by_decision``: the denial pause counts denied proposals of one tool by
  ``decided_at`` (joined to ``proposal_targets`` by its ``proposal_targets_by_master`` index).
"""

SQL = """
CREATE INDEX proposals_by_created ON proposals (created_at);
CREATE INDEX proposals_by_decision ON proposals (tool, status, decided_at);
"""
