"""`fleetwatch demo` and `fleetwatch fleet` as a user runs them: real processes, the lab."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.ctl.main import build_parser
from services.lab.scenario import Scenario
from services.lab.server import run_lab
from shared.text.display import has_hidden
from tests.assistant.hostile import hostile_scenario
from tests.ctl.cli import error_code, run_cli, run_cli_async, sign_in_home


@contextlib.asynccontextmanager
async def home_on(scenario: str | Scenario, home: Path) -> AsyncIterator[Path]:
    """A lab of `scenario` on the real clock (the CLI reads the time itself), its normal team's
    token in the read slot of `home`."""
    async with run_lab(scenario) as lab:
        sign_in_home(home, lab)
        yield home


@pytest.fixture
async def lab_home(tmp_path):
    """The campus lab, its normal team's token in the read slot of a home."""
    async with home_on("campus", tmp_path) as home:
        yield home


async def test_fleet_shows_the_lab_fleet_with_attention_words(lab_home):
    # The fleet family's one real-process run: the console script as a shell sees it.
    code, out, err = await run_cli_async("fleet", home=lab_home, real_process=True)
    assert code == 0, err
    assert "30 devices, 28 online, 2 offline." in out
    assert "Fix first:" in out and "Fix soon:" in out and "When convenient:" in out


async def test_fleet_speaks_spanish_with_language_es_every_word_from_the_catalogue(lab_home):
    code, out, err = await run_cli_async("fleet", "--language", "es", home=lab_home)
    assert code == 0, err
    assert out.startswith("GRUPO ") and "PRÓXIMO EVENTO" in out
    assert "30 dispositivos: 28 conectados, 2 desconectados." in out
    assert "Arreglar primero:" in out and "Arreglar pronto:" in out and "Cuando convenga:" in out
    assert "desconocida (último dato: grabando, desde el" in out  # the offline room's recording
    for english in ("Fix first", "devices,", "OFFLINE", "unknown (last known", "family runs"):
        assert english not in out, english


async def test_fleet_json_lists_the_snapshot_and_findings_without_any_stream_key(lab_home):
    code, out, err = await run_cli_async("fleet", "--json", home=lab_home)
    assert code == 0, err
    data = json.loads(out)
    assert len(data["snapshot"]["devices"]) == 30
    assert {f["priority"] for f in data["findings"]} == {"Fix first", "Fix soon", "When convenient"}
    assert "live_sk_" not in out and "Sup3rSecret" not in out


def test_fleet_without_a_read_sign_in_is_a_clear_error_with_a_code(tmp_path):
    result = run_cli("fleet", home=tmp_path)
    assert result.returncode == 2
    assert error_code(result.stderr) == "no_sign_in"


def test_help_says_no_command_approves():
    help_text = build_parser().format_help()
    assert "No command approves a change" in help_text


@pytest.mark.parametrize("name", ["FLEETWATCH_TYPO_HOME"])
def test_an_unknown_fleetwatch_variable_is_refused_before_anything_runs(tmp_path, name):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(FLEETWATCH_HOME=str(tmp_path), **{name: "x"})
    result = subprocess.run(
        [sys.executable, "-m", "services.ctl.main", "fleet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "config_invalid" in result.stderr and name in result.stderr


@pytest.fixture
async def hostile_home(tmp_path):
    """The campus lab with every name replaced by a hostile one (bidi overrides, terminal
    escapes, zero-width characters), its normal team's token in the read slot of a home."""
    async with home_on(hostile_scenario(), tmp_path) as home:
        yield home


async def test_fleet_prints_hostile_names_inert_as_text_and_as_json(hostile_home):
    code, text, err = await run_cli_async("fleet", home=hostile_home)
    assert code == 0, err
    assert "⟦U+" in text and not has_hidden(text.replace("\n", ""))
    code, out, err = await run_cli_async("fleet", "--json", home=hostile_home)
    assert code == 0, err
    assert not has_hidden(out.replace("\n", "")) and "\\u202e" in out
    names = {d["name"] for d in json.loads(out)["snapshot"]["devices"]}
    assert any("\u202e" in name for name in names)  # lossless: the JSON still holds the real name


@pytest.fixture
async def faulty_events_home(tmp_path):
    """The campus lab whose events answer cannot be read (half a JSON text), its normal team's
    token in the read slot."""
    async with run_lab("campus") as lab:
        lab.set_fault("get_current_or_next_cms_events_for_devices", "malformed_json")
        sign_in_home(tmp_path, lab)
        yield tmp_path


async def test_one_unreadable_answer_leaves_the_rest_of_the_fleet_shown_and_marked(faulty_events_home):
    code, out, err = await run_cli_async("fleet", home=faulty_events_home)
    assert code == 0, err
    assert "30 devices, 28 online, 2 offline." in out
    assert "events: could not be read: " in out
    code, out, err = await run_cli_async("fleet", "--json", home=faulty_events_home)
    assert code == 0, err
    data = json.loads(out)
    assert len(data["snapshot"]["devices"]) == 30
    (unread,) = data["snapshot"]["unread"]
    assert unread["part"] == "events" and unread["code"] == "epiphan_bad_result"
    assert unread["tool"] == "get_current_or_next_cms_events_for_devices"
    assert len(unread["device_ids"]) == 30


async def test_the_older_events_shape_of_the_issue_is_read_and_shown(tmp_path):
    shapes = {"get_current_or_next_cms_events_for_devices": "keyed_devices"}
    async with run_lab("campus", shapes=shapes) as lab:
        sign_in_home(tmp_path, lab)
        code, out, err = await run_cli_async("fleet", home=tmp_path)
    assert code == 0, err
    assert "could not be read" not in out and '"CHEM 201 Organic Chemistry" in ' in out


async def test_an_offline_room_s_recording_is_unknown_with_what_was_last_reported(lab_home):
    code, out, err = await run_cli_async("fleet", home=lab_home)
    assert code == 0, err
    (row,) = [line for line in out.splitlines() if "LIB Room 2" in line and "OFFLINE" in line]
    assert "OFFLINE" in row and "REC" not in row and "unknown (last known: recording, since " in row
