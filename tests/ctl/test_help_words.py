"""Every ``--help`` of the command tree, ``fleetwatch lab --help`` among them, reads in Spanish
to its placeholders (issue 28, item 4): no line of a Spanish help is a line of the English one
(options, commands and settings aside), and no English placeholder (``ROOM``, ``FILE``) is left."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.ctl.main import COMMANDS
from shared.text.catalogue import PLACEHOLDER, Lexicon
from tests.ctl.cli import fleetwatch_in_process, home_env

SUBCOMMANDS = {
    "pending": ("list", "show"),
    "audit": ("tail", "verify", "export", "decisions"),
    "tools": ("diff",),
}
HELPS = [
    (),
    ("lab",),
    *((command,) for command in COMMANDS),
    *((command, sub) for command, subs in SUBCOMMANDS.items() for sub in subs),
]
KEPT = re.compile(
    r"--?[\w-]+|\{[^}]*\}|\bFLEETWATCH_\w+|\bfleetwatch\b|\b\w+_\w+\b|\b[A-Z][A-Z0-9=|]+\b|https?://\S+|\S*/\S*|\d+"
)
"""What a help line keeps in every language: options, choices, settings, commands, tools and
codes, placeholders (checked apart), addresses, paths and numbers."""


ACRONYMS = frozenset(
    {
        "UTC",
        "JSON",
        "MAC",
        "HTTP",
        "MCP",
        "YAML",
        "ISO",
        "URL",
        "IANA",
        "CLI",
        "API",
        "CSRF",
        "IP",
        "PID",
        "OK",
    }
)
"""Upper-case words a help says in every language."""


def words_of(line: str) -> str:
    """`line`'s words once what stays as it is was taken out ("" when none is left)."""
    return " ".join(re.findall(r"[^\W\d_]{2,}", KEPT.sub(" ", line)))


def helps(language: str, argv: tuple[str, ...], home: Path) -> str:
    code, out, err = fleetwatch_in_process(
        {**home_env(home), "FLEETWATCH_LANGUAGE": language}, *argv, "--help"
    )
    assert code == 0, (argv, err)
    return out


@pytest.mark.parametrize("argv", HELPS, ids=lambda argv: " ".join(argv) or "fleetwatch")
def test_a_spanish_help_has_no_line_of_the_english_one_and_no_english_placeholder(
    argv: tuple[str, ...], tmp_path: Path
) -> None:
    spanish, english = helps("es", argv, tmp_path), helps("en", argv, tmp_path)
    commands = set(COMMANDS) | {"lab"}
    english_lines = {words_of(line) for line in english.splitlines()}
    left = [
        line
        for line in spanish.splitlines()
        if (said := words_of(line)) in english_lines
        and len(said.split()) >= 2
        and not set(said.split()) <= commands  # a line listing command names
    ]
    assert left == []
    placeholders = Lexicon(PLACEHOLDER)
    alike = {key for key in placeholders["en"] if placeholders["es"].get(key, key) == key} | ACRONYMS
    assert alike >= {"ID", "N"}  # the placeholders are in the catalogue
    english_caps = set(re.findall(r"\b[A-Z][A-Z=|]+\b", english))
    assert set(re.findall(r"\b[A-Z][A-Z=|]+\b", spanish)) & english_caps - alike == set()
