"""The one SQLite store (WAL) that approval_web and the executor share.

Layers (each imports only those below it)::

    approvals.py      the approval state's writes: proposals, approvals, denials, expiry, the
                      kill switch (the public face: it re-exports the rows and reads)
    approval_rows.py  the rows as frozen dataclasses and the reads over a connection
    db.py  audit_safe.py
                      open, migrate, ``BEGIN IMMEDIATE``, the database clock, the audit hash
                      chain | what a refusal's audit row may copy of what it refuses
    migrations/       the versioned schema

The executor's own rows (its claim, outcome, verification) are `services.executor.executions`.
May import `shared.binding`, `shared.canonical`, `shared.errors` and `shared.text`.
"""
