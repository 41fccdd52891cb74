"""Versioned schema migrations of the store, applied in order by `shared.store.migrate`.

To change the schema, add a module ``mNNNN_<what>.py`` holding ``SQL`` and append
``(NNNN, mNNNN_<what>.SQL)`` to `MIGRATIONS`. Never edit a migration that has shipped: a store
already at that version would not see the change. Each script runs in one ``BEGIN
IMMEDIATE`` transaction together with ``PRAGMA user_version = NNNN``.
"""

from __future__ import annotations

from shared.migrations import m0001_initial, m0002_executor, m0003_intake

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, m0001_initial.SQL),
    (2, m0002_executor.SQL),
    (3, m0003_intake.SQL),
)
"""(version, SQL script), versions strictly increasing from 1."""
