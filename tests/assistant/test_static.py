"""Static rules on the assistant's source: what it must never hold or call. (What it may import
is an import contract in ``pyproject.toml``, run by ``tests/test_imports.py``.)"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.reach import ENTRY_POINTS, module_file, reached

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "services" / "assistant"
FILES = sorted(PACKAGE.rglob("*.py"))


def _names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return names


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    out |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return out


def test_the_assistant_never_names_the_sandbox_slot_or_the_sandbox_token_setting():
    assert FILES
    for path in FILES:
        text = path.read_text()
        assert "sandbox_token_file" not in text, path
        assert "FLEETWATCH_SANDBOX_TOKEN_FILE" not in text, path
        assert "sandbox.json" not in text, path


def test_the_assistant_sends_no_tool_call_of_its_own():
    for path in FILES:
        names = _names(path)
        assert "call_tool" not in names and "send_request" not in names, path
        assert "McpConnection" not in names or path.name == "reader.py", path


def test_model_content_is_echoed_with_to_dict_not_model_dump():
    for path in FILES:
        names = _names(path)
        assert "model_dump" not in names and "model_dump_json" not in names, path
    assert "to_dict" in _names(PACKAGE / "loop.py")


def test_prompts_are_never_written_to_disk():
    for path in FILES:
        names = _names(path)
        assert not {"write_text", "write_bytes", "open"} & names, path


def test_nothing_the_assistant_process_can_load_opens_the_approval_store():
    """Under the OS-user fence its user cannot write the approval store; it records there
    through approval.sock. Its only SQLite file is the watch's own (``FLEETWATCH_WATCH_DB``):
    checked over every module ``python -m services.assistant`` can load, only the SQLite
    helpers (`shared.sqlite`) and the watch store import a SQLite driver."""
    loaded = reached(ENTRY_POINTS["assistant"])
    assert {"services.assistant.server", "services.assistant.watch.store"} <= loaded
    store_modules = {
        "shared.store.db",
        "shared.store.approvals",
        "shared.store.approval_rows",
        "services.executor.executions",
    }
    assert not loaded & store_modules
    assert not any(m.startswith("shared.store.migrations") for m in loaded)
    sqlite_users = {
        module
        for module in loaded
        if {"aiosqlite", "sqlite3"} & _imports(module_file(module) or Path("/nonexistent"))
    }
    assert sqlite_users == {"shared.sqlite", "services.assistant.watch.store"}
    for module in loaded:
        assert module_file(module) is not None, module
