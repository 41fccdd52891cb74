"""`fleetwatch demo` and `fleetwatch fleet` as a user runs them: real processes, the lab."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from services.ctl.main import build_parser


def run_cli(*args: str, home, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env["FLEETWATCH_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "services.ctl.main", *args],
        env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )


def test_demo_places_both_lab_sign_ins_and_shows_the_fleet_with_attention_words(tmp_path):
    result = run_cli("demo", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "30 devices, 28 online, 2 offline." in result.stdout
    assert "Fix first:" in result.stdout and "Fix soon:" in result.stdout
    for slot in ("read.json", "sandbox.json"):
        assert (tmp_path / "tokens" / slot).stat().st_mode & 0o777 == 0o600


def test_demo_json_lists_the_snapshot_and_findings_without_any_stream_key(tmp_path):
    result = run_cli("demo", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(data["snapshot"]["devices"]) == 30
    assert {f["priority"] for f in data["findings"]} == {"Fix first", "Fix soon", "When convenient"}
    assert "live_sk_" not in result.stdout and "Sup3rSecret" not in result.stdout


def test_fleet_without_a_read_sign_in_is_a_clear_error_with_a_code(tmp_path):
    result = run_cli("fleet", home=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("fleetwatch: no_sign_in:")


def test_help_says_no_command_approves():
    help_text = build_parser().format_help()
    assert "No command approves a change" in help_text


@pytest.mark.parametrize("name", ["FLEETWATCH_TYPO_HOME"])
def test_an_unknown_fleetwatch_variable_is_refused_before_anything_runs(tmp_path, name):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(FLEETWATCH_HOME=str(tmp_path), **{name: "x"})
    result = subprocess.run([sys.executable, "-m", "services.ctl.main", "fleet"], env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 2 and "config_invalid" in result.stderr and name in result.stderr
