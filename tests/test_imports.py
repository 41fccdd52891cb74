"""The layers and the dependencies, checked by machines over this checkout.

`lint-imports` holds the import contracts of ``pyproject.toml`` (``[tool.importlinter]``): the
services are independent of each other, ``shared`` never imports ``services``, the assistant
holds no store, the lab imports nothing of the product but what it serves, and every package's
layers are the ones its docstring draws. `deptry` holds the declared dependencies to the
imports, both ways. `ruff` holds the banned APIs (``[tool.ruff.lint.flake8-tidy-imports]``:
``asyncio.wait_for``, which on Python 3.11 loses a cancellation). All run as real processes, as
a person runs them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=170, check=False)


def test_the_import_contracts_hold(tmp_path: Path) -> None:
    result = run(str(BIN / "lint-imports"), "--cache-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_every_import_is_a_declared_dependency_and_every_dependency_is_imported() -> None:
    result = run(str(BIN / "deptry"), ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_no_banned_api_is_called() -> None:
    result = run(str(BIN / "ruff"), "check", "--no-cache", "--select", "TID251", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
