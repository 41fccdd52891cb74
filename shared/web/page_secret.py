"""A local page's secret: made at start, never put in a URL, shown to the person once.

Both local pages keep one: the approval page (`FLEETWATCH_APPROVE_SECRET_FILE`) and the ask page
(`FLEETWATCH_ASK_SECRET_FILE`). On a terminal the secret is printed once. Otherwise
(supervisord, systemd, launchd) it is written to a file and only the file's path is printed;
the file is deleted at a clean stop and, if a crash left it, at the next start before the new
one is written. The secret lives in this process's memory only.

The file is ``0600`` in a folder of the service's own, except in a folder made to share it: a
setgid folder (on a server ``/var/lib/NAME/approve``, group ``NAME-approvers``, and
``/var/lib/NAME/ask``, group ``NAME-operators``; ``2750``), where it is ``0640`` and takes the
folder's group, so that group's members, and nobody else, can read it. It is written through a
descriptor of its folder, never through a symlink.

A secret is 20 characters from an alphabet without look-alikes (0/O, 1/I/L), shown in groups
of four (``K7QM-3XRP-...``): 100 bits. `PageSecret.matches` ignores case, spaces and dashes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import TextIO

from shared.private_files import ensure_folder, open_in_folder

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""Characters of a secret: digits and capitals without 0, 1, I, L, O (31 symbols)."""
LENGTH = 20
GROUP = 4


def _normalise(text: str) -> str:
    return "".join(c for c in text.upper() if c not in " -\t\r\n")


@dataclasses.dataclass(frozen=True, slots=True)
class PageSecret:
    """The secret a person types once per browser session. ``repr`` never shows it."""

    _value: str = dataclasses.field(repr=False)

    @classmethod
    def new(cls) -> PageSecret:
        """A fresh secret from the OS's random source."""
        return cls("".join(secrets.choice(ALPHABET) for _ in range(LENGTH)))

    def shown(self) -> str:
        """The secret in groups of four, for a person to read and type."""
        return "-".join(self._value[i : i + GROUP] for i in range(0, len(self._value), GROUP))

    def matches(self, typed: str) -> bool:
        """True when `typed` is this secret (case, spaces and dashes ignored); constant time
        for inputs of the secret's length. Inputs longer than 200 characters never match."""
        if len(typed) > 200:
            return False
        return hmac.compare_digest(_normalise(typed).encode("utf-8"), self._value.encode("ascii"))


@dataclasses.dataclass(frozen=True, slots=True)
class SecretSink:
    """Where the secret goes at start: `stream` (printed) and, when `stream` is not a terminal,
    the 0600 file `path` (only the path is printed).

    Attributes:
        path: `FLEETWATCH_APPROVE_SECRET_FILE` or `FLEETWATCH_ASK_SECRET_FILE`.
        stream: where the one line is printed (standard output in the service).
        terminal: print the secret itself (True only when `stream` is a terminal).
        label: the page's name in that line ("Approval page", "Ask page").
    """

    path: Path
    stream: TextIO
    terminal: bool
    label: str = "Approval page"

    @classmethod
    def for_stream(cls, path: Path, stream: TextIO, label: str = "Approval page") -> SecretSink:
        """A sink that prints the secret only if `stream` is a terminal (``isatty()``)."""
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError, OSError):
            terminal = False
        return cls(path=path, stream=stream, terminal=terminal, label=label)

    def publish(self, secret: PageSecret, url: str) -> None:
        """Remove any file an earlier run left, then print the secret (terminal) or write it
        to `path` (created exclusively, never through a symlink; ``0640`` in a setgid folder,
        else ``0600``) and print the path.

        Raises:
            OSError: the file could not be written (the service must not start without it);
                `shared.private_files.UnsafePath` when its folder's path is unsafe.
        """
        self.withdraw()
        if self.terminal:
            print(
                f"{self.label}: {url}  secret (type it once per browser session): {secret.shown()}",
                file=self.stream,
                flush=True,
            )
            return
        if not self.path.parent.exists():
            ensure_folder(self.path.parent, 0o700)
        shared = bool(self.path.parent.stat().st_mode & stat.S_ISGID)
        fd = open_in_folder(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            os.fchmod(handle.fileno(), 0o640 if shared else 0o600)
            handle.write(secret.shown() + "\n")
        print(f"{self.label}: {url}  secret in: {self.path}", file=self.stream, flush=True)

    def withdraw(self) -> None:
        """Delete the secret file if it exists (a clean stop, or a crash's leftover)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def read_secret_file(path: Path) -> str:
    """The secret as written by `SecretSink.publish` (for tests and ``fleetwatch``)."""
    return path.read_text(encoding="ascii").strip()
