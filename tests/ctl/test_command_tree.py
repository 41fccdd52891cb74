"""The ``fleetwatch`` command tree as `services.ctl.main` builds it for one command (issue 14:
``fleetwatch COMMAND`` imports only the module that adds COMMAND): the map of commands to
modules names every command of the whole tree, and each command's own tree holds it with the
same options."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from services.ctl.main import COMMANDS, MODULES, build_parser

ALWAYS = {"lab"}
"""The commands `services.ctl.main` adds itself."""


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def options(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    return sorted(tuple(a.option_strings) or (a.dest,) for a in parser._actions)


def test_the_map_names_every_command_of_the_whole_tree_and_only_those() -> None:
    whole = commands(build_parser())
    assert set(whole) - ALWAYS == set(COMMANDS)
    assert set(COMMANDS.values()) == set(MODULES)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_s_own_tree_holds_it_as_the_whole_tree_does(command: str) -> None:
    own, whole = commands(build_parser(command)), commands(build_parser())
    assert set(own) == ALWAYS | {c for c, m in COMMANDS.items() if m == COMMANDS[command]}
    assert options(own[command]) == options(whole[command])


PROBE = """
import json, sys
from services.ctl.main import build_parser
build_parser(sys.argv[1])
print(json.dumps(sorted(n for n in sys.modules if n.startswith("services.ctl.commands_"))))
"""


def test_a_command_imports_only_the_module_that_adds_it() -> None:
    argv = [sys.executable, "-c", PROBE, "status"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    assert set(json.loads(done.stdout)) == {"services.ctl.commands_admin"}  # the watch's: when status runs
