"""Schema version 2 (the executor's): an index so a restarted executor finds every execution
left ``running`` by a crash at once (`services.executor.executions.recover_running`), and one so the
intake's queue queries by expiry stay cheap."""

SQL = """
CREATE INDEX executions_by_outcome ON executions (outcome);
CREATE INDEX proposals_by_expiry ON proposals (status, expires_at);
"""
