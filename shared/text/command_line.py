"""A ``fleetwatch`` command as a surface prints it for a person to copy (a hint, the page's
"its record: ..." line): one helper, so every printed command keeps what the reader chose.
Pure.

A command printed in Spanish keeps ``--language es`` (a new terminal would otherwise answer in
English), and one printed by a Fleetwatch whose home is not the default keeps
``FLEETWATCH_HOME=...`` in front (a new terminal would otherwise look for another Fleetwatch
and find none: issue 28, items 1 and 5). Every word is made visible and shell-quoted. The
program is ``fleetwatch`` when that name, looked up on ``PATH``, is this install's script, else
the script's path (a checkout's ``.venv/bin/fleetwatch``, which a new shell would not find by
name): `this_program`, the one place that reads the environment.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
from pathlib import Path

from shared.text.display import visible
from shared.text.languages import LANGUAGES

PROGRAM = "fleetwatch"
WORD_CAP = 200
"""Longest word of a printed command (a room's name, a path) before it is cut."""


@functools.cache
def this_program() -> str:
    """How a person calls this install's ``fleetwatch`` from a new shell: ``fleetwatch`` when
    ``PATH`` finds this install's script by that name (an installed package, the container's
    link), or when this Python has no script beside it; else the script's absolute path (a
    checkout's venv that is not on ``PATH``). Read once per process."""
    script = Path(sys.executable).parent / PROGRAM
    if not script.is_file():
        return PROGRAM
    found = shutil.which(PROGRAM)
    if found is not None and os.path.realpath(found) == os.path.realpath(script):
        return PROGRAM
    return str(script)


def printed_command(
    *words: str, language: str = LANGUAGES[0], home: str | None = None, program: str | None = None
) -> str:
    """`program` (default `this_program`: ``fleetwatch``, or the path of this install's script)
    and `words` (each made visible, then shell-quoted), ``--language
    <language>`` after them unless `language` is the default (English), ``FLEETWATCH_HOME=<home>``
    before them when `home` is given (None: the default home).

    ``printed_command("pending", "show", "p-1", language="es", home="/srv/fw")`` is
    ``FLEETWATCH_HOME=/srv/fw fleetwatch pending show p-1 --language es``."""
    said = [shlex.quote(program or this_program()), *(shlex.quote(visible(word, WORD_CAP)) for word in words)]
    if language != LANGUAGES[0]:
        said += ["--language", shlex.quote(language)]
    if home is not None:
        said.insert(0, f"FLEETWATCH_HOME={shlex.quote(visible(home, WORD_CAP))}")
    return " ".join(said)
