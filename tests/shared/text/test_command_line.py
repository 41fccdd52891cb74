"""A command printed for a person keeps their language and their home (issue 28, item 5): a new
terminal that runs it answers in the same language and finds the same Fleetwatch."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from services.ctl.admin_words import View, render_status
from shared.config import home_given
from shared.text.command_line import printed_command, this_program
from tests.ctl.test_doctor import settling_status

NOW = dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC)
A = "29088800004"  # the paused room of `settling_status`


def test_a_printed_command_keeps_the_language_and_a_home_that_is_not_the_default() -> None:
    assert printed_command("pending", "show", "p-1") == "fleetwatch pending show p-1"
    assert (
        printed_command("pending", "show", "p-1", language="es")
        == "fleetwatch pending show p-1 --language es"
    )
    assert printed_command("status", language="es", home="/srv/fw room") == (
        "FLEETWATCH_HOME='/srv/fw room' fleetwatch status --language es"
    )
    assert printed_command("resume", "--denials", "batch_reboot", "Aula 1; rm -rf ~") == (
        "fleetwatch resume --denials batch_reboot 'Aula 1; rm -rf ~'"
    )


def test_the_home_is_kept_only_when_it_is_not_the_default() -> None:
    assert home_given({"HOME": "/home/ana"}) is None
    assert home_given({"HOME": "/home/ana", "FLEETWATCH_HOME": "/home/ana/.fleetwatch"}) is None
    assert home_given({"HOME": "/home/ana", "FLEETWATCH_HOME": "~/.fleetwatch/"}) is None
    assert home_given({"HOME": "/home/ana", "FLEETWATCH_HOME": "/srv/fw"}) == "/srv/fw"


def test_status_prints_its_lift_command_in_the_operators_language_and_home() -> None:
    status = settling_status()
    spanish = View("es", ZoneInfo("America/Mexico_City"), NOW, home="/srv/fw")
    assert (
        f"FLEETWATCH_HOME=/srv/fw fleetwatch resume --denials batch_recording {A} --language es"
        in render_status(spanish, status)
    )
    english = dataclasses.replace(spanish, language="en", home=None)
    assert (
        f"lift it: fleetwatch resume --denials batch_recording {A}\n" in render_status(english, status) + "\n"
    )


@pytest.fixture
def fresh_program() -> Iterator[None]:
    """`this_program` read again under the test's PATH, and again after it."""
    this_program.cache_clear()
    yield
    this_program.cache_clear()


def test_a_checkout_whose_venv_is_not_on_path_prints_the_scripts_path(
    fresh_program: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new shell in a checkout does not find ``fleetwatch`` by name (the walk: every hint but
    the demo's was a dead end): the printed command is the venv's script itself."""
    script = Path(sys.executable).parent / "fleetwatch"
    assert script.is_file(), "the suite runs from the venv ./scripts/setup makes"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert printed_command("pending", "list", language="es") == f"{script} pending list --language es"


def test_another_fleetwatch_first_on_path_is_not_the_one_printed(
    fresh_program: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other = tmp_path / "fleetwatch"
    other.write_text("#!/bin/sh\nexit 0\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), str(Path(sys.executable).parent)]))
    assert printed_command("status") == f"{Path(sys.executable).parent / 'fleetwatch'} status"


def test_this_installs_script_found_by_name_is_printed_by_name(
    fresh_program: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    link = tmp_path / "fleetwatch"  # as the container links /usr/local/bin/fleetwatch
    link.symlink_to(Path(sys.executable).parent / "fleetwatch")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), "/usr/bin:/bin"]))
    assert printed_command("status") == "fleetwatch status"
