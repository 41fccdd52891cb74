"""A capture folder: what ``fleetwatch capture`` writes and the lab replays
(``python -m services.lab --capture DIR``). Used by two processes: the CLI writes, the lab reads.

Layout::

    DIR/manifest.json            the `Manifest`: when, from which server (host only), each call
    DIR/calls/NNN-<tool>.json    the redacted data of each call that answered (JSON)

The folder is made 0700 and each file 0600 (owner only, whatever the umask), opened with
``O_EXCL``/``O_NOFOLLOW`` so nothing already there is written through. A capture refuses a
folder that is not empty, and one inside a git checkout unless asked (``--in-checkout``): a
capture is for the person who made it until it has been checked (``docs/live-run.md``).

Times are UTC ISO 8601 with seconds (``2026-09-16T13:00:00Z``); ``captured_at`` is whole
seconds, so a replay can put every time back to the second.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import msgspec

from shared.errors import N_, Code, FleetwatchError
from shared.private_files import UnsafePath, ensure_folder, open_in_folder

FORMAT: Final = 1
MANIFEST: Final = "manifest.json"
CALLS: Final = "calls"


class CaptureError(FleetwatchError):
    """A capture folder was refused (``capture_refused``) or cannot be read
    (``capture_invalid``)."""


class CallError(msgspec.Struct, frozen=True):
    """A call that answered with an error: its stable code and (redacted) message."""

    code: Code
    message: str


class CaptureCall(msgspec.Struct, frozen=True):
    """One call of a capture.

    ``arguments`` are as sent (redacted and renamed as the data is); ``file`` is the data's
    file under ``calls/`` (None for an error or a picture, which is never saved); ``shape`` is
    the known shape the answer has (`shared.epiphan.fleet_shapes`), None when it has none, and
    ``problem`` says why Fleetwatch could not read it (no known shape, or a row it cannot read).
    """

    seq: int
    tool: str
    arguments: dict[str, Any]
    at: str
    file: str | None = None
    error: CallError | None = None
    shape: str | None = None
    problem: str | None = None
    note: str = ""


class Manifest(msgspec.Struct, frozen=True):
    """What a capture holds (one of the open questions of a first live run answered by it: the
    proposable tools' arguments). ``placeholders`` counts the values replaced per kind (``secret``,
    ``ip``, ``serial``, ``mac``, ``host``), never the values; ``renamed`` says whether names and
    IDs were replaced by invented ones (``--rename``)."""

    format: int
    captured_at: str
    server: str
    renamed: bool
    calls: tuple[CaptureCall, ...]
    placeholders: dict[str, int] = {}
    fleetwatch: str = ""
    tools_file: str | None = None
    """``tools.json``: the server's tools with their input and output schemas (``tools/list``),
    None when the server did not list them."""
    proposable: dict[str, str] = {}
    """Each proposable tool of the policy: whether the server's argument schema has the same
    arguments as the reviewed one (``same arguments``, ``differs: …``, ``not offered``)."""

    @property
    def captured(self) -> datetime:
        """``captured_at`` as an aware UTC datetime."""
        return datetime.fromisoformat(self.captured_at.replace("Z", "+00:00")).astimezone(UTC)


def utc_text(when: datetime) -> str:
    """``2026-09-16T13:00:00Z`` (whole seconds, UTC)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_checkout_above(folder: Path) -> Path | None:
    """The top of the git checkout `folder` is in (a parent holding ``.git``), or None."""
    here = folder.resolve()
    for place in (here, *here.parents):
        if (place / ".git").exists():
            return place
    return None


def check_folder(folder: Path, *, in_checkout: bool = False) -> None:
    """Refuse a folder a capture must not use (nothing is made or read).

    Raises:
        CaptureError: ``capture_refused`` when it exists and is not an empty folder, or when it
            is inside a git checkout and `in_checkout` is not set.
    """
    checkout = git_checkout_above(folder)
    if checkout is not None and not in_checkout:
        raise CaptureError.said(
            Code.CAPTURE_REFUSED,
            N_(
                "%(folder)s is inside the git checkout %(checkout)s: a capture is not anonymised for sharing "
                "until it has been checked (docs/live-run.md); choose a folder outside it, or add --in-checkout"
            ),
            folder=folder,
            checkout=checkout,
        )
    if folder.is_symlink() or (folder.exists() and (not folder.is_dir() or any(folder.iterdir()))):
        raise CaptureError.said(
            Code.CAPTURE_REFUSED,
            N_("%(folder)s is not an empty folder; a capture needs a new one"),
            folder=folder,
        )


def _unsafe(exc: UnsafePath) -> CaptureError:
    return CaptureError.said(exc.code, exc.template or exc.message, **exc.params)


def prepare_folder(folder: Path, *, in_checkout: bool = False) -> None:
    """Make `folder` (and ``calls/``) for a new capture, mode 0700, after `check_folder`, by
    descriptor (`shared.private_files.ensure_folder`): a folder swapped for another user's
    symlink after the check is refused, never followed (``capture`` may run as root).

    Raises:
        CaptureError: ``capture_refused`` as `check_folder`, or when it cannot be made;
            ``unsafe_path`` when it or a folder above it is another user's symlink.
    """
    check_folder(folder, in_checkout=in_checkout)
    try:
        ensure_folder(folder, 0o700)
        ensure_folder(folder / CALLS, 0o700)
    except UnsafePath as exc:
        raise _unsafe(exc) from exc
    except OSError as exc:
        raise CaptureError.said(
            Code.CAPTURE_REFUSED, N_("cannot make %(folder)s: %(why)s"), folder=folder, why=exc.strerror
        ) from exc


def write_json(folder: Path, relative: str, data: Any) -> None:
    """Write `data` as JSON to ``folder/relative``, a new file of mode 0600.

    Raises:
        CaptureError: ``capture_refused`` when the file exists or cannot be written;
            ``unsafe_path`` when its folder was swapped for another user's symlink.
    """
    path = folder / relative
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        fd = open_in_folder(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    except UnsafePath as exc:
        raise _unsafe(exc) from exc
    except OSError as exc:
        raise CaptureError(Code.CAPTURE_REFUSED, f"cannot write {path}: {exc.strerror}") from exc


def write_manifest(folder: Path, manifest: Manifest) -> None:
    """Write the manifest (0600). Raises as `write_json`."""
    write_json(folder, MANIFEST, msgspec.to_builtins(manifest))


@dataclass(frozen=True)
class Capture:
    """A capture folder as read back: its manifest and each answered call's data."""

    folder: Path
    manifest: Manifest
    data: dict[int, Any]

    def answers(self, tool: str) -> Iterator[tuple[CaptureCall, Any]]:
        """(call, data) of every call of `tool` that answered with data, in order."""
        for call in self.manifest.calls:
            if call.tool == tool and call.seq in self.data:
                yield call, self.data[call.seq]


def read_capture(folder: Path) -> Capture:
    """Read a capture folder.

    Raises:
        CaptureError: ``capture_invalid`` when the manifest is missing, unreadable or of an
            unknown format, or a file it names is missing, outside the folder or unreadable.
    """
    try:
        manifest = msgspec.json.decode((folder / MANIFEST).read_bytes(), type=Manifest)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CaptureError(Code.CAPTURE_INVALID, f"{folder}: no readable {MANIFEST} ({exc})") from exc
    if manifest.format != FORMAT:
        raise CaptureError(Code.CAPTURE_INVALID, f"{folder}: capture format {manifest.format}, not {FORMAT}")
    data: dict[int, Any] = {}
    for call in manifest.calls:
        if call.file is None:
            continue
        path = (folder / CALLS / call.file).resolve()
        if path.parent != (folder / CALLS).resolve() or not stat.S_ISREG(
            path.stat().st_mode if path.exists() else 0
        ):
            raise CaptureError(
                Code.CAPTURE_INVALID, f"{folder}: call {call.seq} names a missing file {call.file!r}"
            )
        try:
            data[call.seq] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CaptureError(Code.CAPTURE_INVALID, f"{folder}: {call.file} is not readable JSON") from exc
    return Capture(folder, manifest, data)
