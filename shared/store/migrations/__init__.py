"""Versioned schema migrations of the store, applied in order by `shared.store.db.migrate`.

To change the schema, add a module ``mNNNN_<what>.py`` holding ``SQL`` (and, only when SQL
alone cannot say it, an ``after(conn)`` coroutine run after the script) and append
``Migration(NNNN, mNNNN_<what>.SQL, ...)`` to `MIGRATIONS`. Never edit a migration that has
shipped: a store already at that version would not see the change. Each version runs in one
``BEGIN IMMEDIATE`` transaction together with ``PRAGMA user_version = NNNN``.
"""

from __future__ import annotations

from shared.sqlite import Migration
from shared.store.migrations import (
    m0001_initial,
    m0002_executor,
    m0003_intake,
    m0004_binding,
    m0005_one_change,
    m0006_audit_macs,
    m0007_two_approvers,
    m0008_recorded_names,
)

__all__ = ["MIGRATIONS", "Migration"]

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, m0001_initial.SQL),
    Migration(2, m0002_executor.SQL),
    Migration(3, m0003_intake.SQL),
    Migration(4, m0004_binding.SQL, m0004_binding.after),
    Migration(5, m0005_one_change.SQL),
    Migration(6, m0006_audit_macs.SQL),
    Migration(7, m0007_two_approvers.SQL),
    Migration(8, m0008_recorded_names.SQL),
)
"""Versions strictly increasing from 1, without gaps."""
