"""Fleetwatch as a real package: ``pip install .`` (not editable) into a fresh venv, then
``fleetwatch demo`` and ``fleetwatch down`` from a folder that is not the checkout.

Everything the running product reads from disk must come with the package: the supervisord
template (``services/ctl/supervisord.conf``), the lab's scenarios, the pages' templates,
catalogues and stylesheet, and the policy (the checkout's ``policy/``, shipped as
``shared.policy.shipped``). The wheel is built from a copy of this checkout's files, so the
build writes nothing here; its dependencies come from the package registry or this machine's
pip cache, as ``deploy/install.sh`` says an operator installs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.support import demo_ports

ROOT = Path(__file__).resolve().parents[1]
DATA_PACKAGES = {"shared.policy.shipped": "policy"}
"""Packages made of data only, mapped from a folder of the checkout."""


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_package_list_names_every_folder_with_code_or_data_and_the_shipped_policy() -> None:
    setuptools = pyproject()["tool"]["setuptools"]
    tracked = subprocess.run(
        ["git", "ls-files", "services", "shared"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    on_disk = {".".join(Path(name).parent.parts) for name in tracked}
    assert sorted(setuptools["packages"]) == sorted([*on_disk, *DATA_PACKAGES])
    assert setuptools["package-dir"] == DATA_PACKAGES
    assert setuptools["package-data"]["shared.policy.shipped"] == ["policy.yaml", "tool_policy.yaml"]


def _run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float) -> str:
    result = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, (
        f"{argv[:3]} exited {result.returncode}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    return result.stdout


def _source_copy(into: Path) -> Path:
    """This checkout's tracked and unignored files, copied (the build writes into its source)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


@pytest.mark.timeout(900)  # a wheel, a fresh venv with every dependency, and the whole demo
def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_demo_from_any_folder(tmp_path: Path) -> None:
    started = time.monotonic()
    source = _source_copy(tmp_path / "source")
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), "."],
        cwd=source,
        timeout=600,
    )
    (wheel,) = (tmp_path / "dist").glob("fleetwatch-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, timeout=120)
    _run([str(venv / "bin" / "pip"), "install", "-q", "--no-compile", str(wheel)], cwd=tmp_path, timeout=600)

    where = tmp_path / "anywhere"
    where.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETWATCH_", "PYTHON"))}
    env.update(demo_ports(), FLEETWATCH_HOME=str(where / "home"))
    python = str(venv / "bin" / "python")
    installed = _run(
        [
            python,
            "-c",
            "import services, shared.config as c; print(services.__file__); print(c.DEFAULT_POLICY_DIR)",
        ],
        cwd=where,
        env=env,
        timeout=60,
    ).split()
    assert all(Path(p).is_relative_to(venv) for p in installed), installed
    fleetwatch = str(venv / "bin" / "fleetwatch")
    try:
        shown = _run([fleetwatch, "demo"], cwd=where, env=env, timeout=300)
        assert "waiting for approval" in shown, shown
        config = (where / "home" / "run" / "supervisord.conf").read_text()
        (command,) = re.findall(r"^command=(\S+) -m services\.executor$", config, re.M)
        assert Path(command).is_relative_to(venv), command  # the installed Python runs the services
        assert str(ROOT) not in config
        stopped = _run([fleetwatch, "down"], cwd=where, env=env, timeout=120)
        assert "Fleetwatch stopped." in stopped
    finally:  # whatever happened above, supervisord does not outlive the test
        subprocess.run(
            [fleetwatch, "down"], cwd=where, env=env, capture_output=True, timeout=120, check=False
        )
    print(f"wheel, fresh venv, demo and down: {time.monotonic() - started:.0f} s")
