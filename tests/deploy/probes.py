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

CAN = """
import asyncio, json, socket, sqlite3, sys
from shared.wire.client import CallError, SocketClient
from shared.wire.protocol import GetCapabilities

def read(path):
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        return "ok"
    except OSError as exc:
        return type(exc).__name__

def write_store(path):
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=10, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO kv (key, value) VALUES ('fence-test', 'x')")
        conn.execute("ROLLBACK")
        return "ok"
    except sqlite3.Error as exc:
        return f"{type(exc).__name__}: {exc}"

def use(path):
    try:
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(10)
            probe.connect(path)
    except OSError as exc:
        return type(exc).__name__
    try:
        asyncio.run(SocketClient(path, timeout_seconds=30).call(GetCapabilities()))
        return "ok"
    except CallError as exc:
        return str(exc.code)

checks = json.loads(sys.argv[1])
kinds = {"read": read, "write_store": write_store, "use": use}
print(json.dumps({what: kinds[kind](path) for what, (kind, path) in checks.items()}))
"""
"""What the user running it can do: argv[1] is ``{what: [kind, path]}`` with kind ``read`` (open a
file and read a byte), ``write_store`` (a write transaction on the store, rolled back: nothing is
kept) or ``use`` (connect to a socket and have its manifest answered). Prints ``{what: "ok"}``
for each that worked, else why not (an exception's name, or the service's refusal code)."""
