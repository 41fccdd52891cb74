"""Token slots: one file per sign-in (``read``, ``sandbox``), each readable by its owner only.

A slot file is JSON: ``{"access_token": str, "refresh_token": str | null, "expires_at": epoch
seconds | null, "server": MCP URL, "team_id": str | null, "kind": "oauth" | "static" | "lab"}``.
It lives in a 0700 folder with mode 0600. Reading refuses a symlink, a file another user owns,
and a file group/other can read, so a misplaced slot fails loudly instead of leaking. The
executor is the only process that reads the sandbox slot (a test holds every module to it).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import msgspec

from shared.errors import Code, FleetwatchError

SLOT_NAMES = ("read", "sandbox")


class SlotError(FleetwatchError):
    """A slot is missing (`no_sign_in`) or unsafe/unreadable (`config_invalid`)."""


class SignIn(msgspec.Struct, frozen=True):
    """A stored sign-in. ``access_token`` is never shown by ``repr``."""

    access_token: str
    server: str = ""
    refresh_token: str | None = None
    expires_at: float | None = None
    team_id: str | None = None
    kind: str = "oauth"

    def __repr__(self) -> str:
        return f"SignIn(server={self.server!r}, kind={self.kind!r}, team_id={self.team_id!r}, token=***)"

    __str__ = __repr__


def write_slot(path: Path, sign_in: SignIn) -> None:
    """Write a slot atomically: 0700 folder, 0600 file, never through a symlink.

    Raises:
        SlotError: `config_invalid` when the path or its folder is a symlink.
    """
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.is_symlink() or path.is_symlink():
        raise SlotError(Code.CONFIG_INVALID, f"{path}: refusing a symlinked token slot")
    os.chmod(folder, 0o700)
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(msgspec.json.encode(sign_in))
    os.replace(tmp, path)


def read_slot(path: Path) -> SignIn:
    """Read a slot.

    Raises:
        SlotError: `no_sign_in` when the file is missing; `config_invalid` when it is a symlink,
            owned by another user, readable by group or others, or not a valid slot.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError as exc:
        raise SlotError(Code.NO_SIGN_IN, f"{path}: no sign-in in this slot") from exc
    except OSError as exc:
        raise SlotError(Code.CONFIG_INVALID, f"{path}: cannot open the slot ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.geteuid():
            raise SlotError(Code.CONFIG_INVALID, f"{path}: owned by another user")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise SlotError(Code.CONFIG_INVALID, f"{path}: mode {stat.S_IMODE(info.st_mode):o}, must be 600")
        body = handle.read()
    try:
        return msgspec.json.decode(body, type=SignIn)
    except msgspec.DecodeError as exc:
        raise SlotError(Code.CONFIG_INVALID, f"{path}: not a valid token slot") from exc


def slot_summary(path: Path) -> dict[str, Any]:
    """What `doctor` may show about a slot: present, mode, kind, server, team, expiry. No token."""
    try:
        sign_in = read_slot(path)
    except SlotError as exc:
        return {"present": path.exists(), "ok": False, "code": str(exc.code), "message": exc.message}
    return {
        "present": True,
        "ok": True,
        "mode": f"{stat.S_IMODE(path.stat().st_mode):o}",
        "kind": sign_in.kind,
        "server": sign_in.server,
        "team_id": sign_in.team_id,
        "expires_at": sign_in.expires_at,
    }
