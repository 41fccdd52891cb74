"""Small programs a test runs as a service's user (``python -c PROBE ARGS``) to see what that
user can do."""

from __future__ import annotations

WRITE_STORE = """
import sqlite3, sys
try:
    open(sys.argv[1], "r+b").close()
    opened = "ok"
except OSError as exc:
    opened = type(exc).__name__
try:
    conn = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO kv (key, value) VALUES ('fence-test', 'x')")
    conn.execute("ROLLBACK")
    inserted = "ok"
except sqlite3.Error as exc:
    inserted = type(exc).__name__
print(opened, inserted)
"""
"""Open the store (argv[1]) for writing, then insert a row in a transaction rolled back
(nothing is kept). Prints ``ok ok`` when both worked, else the exceptions' names
(``PermissionError OperationalError`` for a user who cannot reach the store)."""
