"""The approval store: the SQLite file (WAL) that approval_web and the executor share. (The
assistant's watch keeps its own file, `services.assistant.watch.store`; both open SQLite
through `shared.sqlite`.)

Layers (each imports only those below it)::

    approvals.py  audit_witness.py  audit_export.py
                      the approval state's writes: proposals, approvals, denials, expiry, the
                      kill switch's requests (the public face: it re-exports the rows and
                      reads) | a service's anchor on the audit's head, kept outside the store
                      | the audit's rows as JSON lines, and the continuous export
    approval_rows.py  the rows as frozen dataclasses and the reads over a connection
    db.py  audit_safe.py
                      migrate (`shared.sqlite`'s open, ``BEGIN IMMEDIATE`` and database clock
                      re-exported, the audit functions installed on open), the audit hash
                      chain, its verification | what a refusal's audit row may copy
    audit_seal.py  audit_kinds.py
                      each writing service's audit key, the SQL functions that sign and check
                      rows with it, the anchors' files | every kind of audit row, in words
    migrations/       the versioned schema

The executor's own rows (its claim, outcome, verification) are `services.executor.executions`.
May import `shared.binding`, `shared.canonical`, `shared.errors`, `shared.private_files`,
`shared.sqlite` and `shared.text`.
"""
