"""The approval store: the SQLite file (WAL) that approval_web and the executor share. (The
assistant's watch keeps its own file, `services.assistant.watch.store`; both open SQLite
through `shared.sqlite`.)

Layers (each imports only those below it)::

    approvals.py      the approval state's writes: proposals, approvals, denials, expiry, the
                      kill switch (the public face: it re-exports the rows and reads)
    approval_rows.py  the rows as frozen dataclasses and the reads over a connection
    db.py  audit_safe.py
                      migrate (`shared.sqlite`'s open, ``BEGIN IMMEDIATE`` and database clock
                      re-exported), the audit hash chain | what a refusal's audit row may copy
                      of what it refuses
    migrations/       the versioned schema

The executor's own rows (its claim, outcome, verification) are `services.executor.executions`.
May import `shared.binding`, `shared.canonical`, `shared.errors`, `shared.sqlite` and
`shared.text`.
"""
