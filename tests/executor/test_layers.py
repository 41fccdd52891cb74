"""The executor's layers as its package docstring draws them: it imports `shared.*` and itself,
never another service (approval_web, assistant, ctl, the lab)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "services" / "executor"
ALLOWED = ("services.executor", "shared")


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_executor_imports_no_other_service() -> None:
    ours = {
        (path.name, module)
        for path in PACKAGE.glob("*.py")
        for module in imported_modules(path)
        if module.split(".")[0] in ("services", "shared", "tests")
    }
    assert ours, "the scan found no imports"
    assert {(name, m) for name, m in ours if not m.startswith(ALLOWED)} == set()
