"""Token slots: one file per sign-in (``read``, ``sandbox``), each readable by its owner only.

A slot file is JSON (`SignIn`): ``{"access_token", "refresh_token", "expires_at" (epoch
seconds, UTC), "server" (MCP URL), "team_id", "kind" ("oauth" | "static" | "lab"), and for an
OAuth sign-in what refreshing and revoking need: "client_id", "token_endpoint",
"revocation_endpoint", "issuer", "resource", "scope"; "dead" (a refresh was refused: sign in
again) and "dead_reason"}``.

It lives in a 0700 folder with mode 0600. **A slot belongs to its folder's owner**: on a
server the sandbox slot's folder is owned by the executor's user and the read slot's by the
assistant's. Reading refuses a symlink, a file group/other can read, and a file not owned by the
reader; every open and write goes through a descriptor of the folder reached without following
a symlink another user owns (`shared.private_files`), so root writing a service's slot cannot
be steered elsewhere; root (``fleetwatch login`` on a server) may read and write a slot in place, and what it
writes is owned by the folder's owner. The executor is the only process that reads the sandbox
slot (a test holds every module to it).

Beside each slot is a lock file (``<slot>.lock``, same owner and mode): refreshing or replacing a
sign-in holds it (`locked_slot`), so two processes never refresh one rotating token at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec

from shared.errors import N_, Code, FleetwatchError
from shared.private_files import (
    UnsafePath,
    ensure_folder,
    open_in_folder,
    open_plain,
    remove_file,
    write_private,
)

SLOT_NAMES = ("read", "sandbox")
LOCK_SECONDS = 30.0
"""How long `locked_slot` waits for another process's lock before giving up (seconds)."""
_LOCK_POLL_SECONDS = 0.05


class SlotError(FleetwatchError):
    """A slot is missing (`no_sign_in`), behind a symlink (`unsafe_path`), unreadable
    (`config_invalid`), or its lock was held by another process past the bound
    (`sign_in_busy`)."""


class SignIn(msgspec.Struct, frozen=True):
    """A stored sign-in. ``access_token`` and ``refresh_token`` are never shown by ``repr``.

    ``expires_at`` is the access token's end, epoch seconds (UTC), from the token response's
    ``expires_in``; None when unknown (a static token). ``dead`` is set when the server refused
    a refresh with 400/401 (the sign-in cannot come back: sign in again).
    """

    access_token: str
    server: str = ""
    refresh_token: str | None = None
    expires_at: float | None = None
    team_id: str | None = None
    kind: str = "oauth"
    client_id: str | None = None
    token_endpoint: str | None = None
    revocation_endpoint: str | None = None
    issuer: str | None = None
    resource: str | None = None
    scope: str | None = None
    dead: bool = False
    dead_reason: str | None = None

    def __repr__(self) -> str:
        return (
            f"SignIn(server={self.server!r}, kind={self.kind!r}, team_id={self.team_id!r}, "
            f"dead={self.dead!r}, token=***)"
        )

    __str__ = __repr__


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def slot_owner(path: Path) -> int:
    """The uid a slot belongs to: the reader itself, or for root the owner of the slot's folder
    (of its nearest existing ancestor when the folder does not exist yet).

    Raises:
        SlotError: `unsafe_path` when the folder is a symlink.
    """
    if os.geteuid() != 0:
        return os.geteuid()
    folder = path.parent
    if folder.is_symlink():
        raise SlotError.said(Code.UNSAFE_PATH, N_("%(path)s: refusing a symlinked token folder"), path=folder)
    return _nearest_existing(folder).stat().st_uid


def _make_folder(folder: Path, owner: int) -> None:
    """The slot's folder: ``0700`` of `owner`, made when missing; reached through descriptors,
    never through a symlink (root writes here for the service that owns it)."""
    if folder.is_symlink():
        raise SlotError.said(Code.UNSAFE_PATH, N_("%(path)s: refusing a symlinked token folder"), path=folder)
    if folder.exists() and folder.lstat().st_uid != owner:
        raise SlotError.said(
            Code.UNSAFE_PATH,
            N_("%(path)s: owned by uid %(uid)s, not the slot's owner"),
            path=folder,
            uid=folder.lstat().st_uid,
        )
    try:
        ensure_folder(folder, 0o700, owner=owner)
    except UnsafePath as exc:
        raise _unsafe(exc) from exc


def _open_private(path: Path, flags: int, owner: int) -> int:
    """Open (creating 0600) through the folder's descriptor without following a symlink, and
    only a regular file with no other hard link (`open_plain`: root then hands it to `owner`,
    never a file of root's a service's user linked there)."""
    try:
        fd = open_plain(path, flags, 0o600)
    except UnsafePath as exc:
        raise _unsafe(exc) from exc
    if os.geteuid() == 0 and owner != 0:
        os.fchown(fd, owner, -1)
    return fd


def write_slot(path: Path, sign_in: SignIn) -> None:
    """Write a slot atomically: 0700 folder, 0600 file, never through a symlink. Run as root,
    the file (and a folder it makes) belongs to the slot's owner (`slot_owner`).

    Raises:
        SlotError: `unsafe_path` when the path or its folder is a symlink, or the folder is
            owned by someone else than the slot's owner.
    """
    owner = slot_owner(path)
    _make_folder(path.parent, owner)
    if path.is_symlink():
        raise SlotError.said(Code.UNSAFE_PATH, N_("%(path)s: refusing a symlinked token slot"), path=path)
    try:
        write_private(path, msgspec.json.encode(sign_in), mode=0o600, owner=owner)
    except UnsafePath as exc:
        raise _unsafe(exc) from exc


def read_slot(path: Path) -> SignIn:
    """Read a slot.

    Raises:
        SlotError: `no_sign_in` when the file is missing; `unsafe_path` when it or its folder
            is a symlink another user owns; `config_invalid` when it is not owned by the slot's
            owner (the reader; for root, the folder's owner), readable by group or others, or
            not a valid slot.
    """
    try:
        fd = open_in_folder(path, os.O_RDONLY)
    except FileNotFoundError as exc:
        raise SlotError.said(Code.NO_SIGN_IN, N_("%(path)s: no sign-in in this slot"), path=path) from exc
    except UnsafePath as exc:
        raise SlotError.said(
            Code.UNSAFE_PATH, N_("%(path)s: cannot open the slot (%(why)s)"), path=path, why=exc.message
        ) from exc
    except OSError as exc:
        raise SlotError.said(
            Code.CONFIG_INVALID, N_("%(path)s: cannot open the slot (%(why)s)"), path=path, why=exc.strerror
        ) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != slot_owner(path):
            raise SlotError.said(Code.CONFIG_INVALID, N_("%(path)s: owned by another user"), path=path)
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise SlotError.said(
                Code.CONFIG_INVALID,
                N_("%(path)s: mode %(mode)s, must be 600"),
                path=path,
                mode=f"{stat.S_IMODE(info.st_mode):o}",
            )
        body = handle.read()
    try:
        return msgspec.json.decode(body, type=SignIn)
    except msgspec.DecodeError as exc:
        raise SlotError.said(Code.CONFIG_INVALID, N_("%(path)s: not a valid token slot"), path=path) from exc


def _unsafe(exc: UnsafePath) -> SlotError:
    """`exc` as a `SlotError` with its code (``unsafe_path``) and its words."""
    return SlotError.said(exc.code, exc.template or "%(path)s: %(problem)s", **exc.params)


def remove_slot(path: Path) -> bool:
    """Delete a slot through a descriptor of its folder (`shared.private_files.remove_file`):
    a ``tokens`` folder swapped for a symlink between a read and this removal is refused,
    never followed. True when there was one to delete.

    Raises:
        SlotError: `unsafe_path` when the folder's path crosses a symlink another user owns.
    """
    try:
        return remove_file(path)
    except UnsafePath as exc:
        raise _unsafe(exc) from exc


def lock_path(path: Path) -> Path:
    """The lock file beside a slot: ``<slot>.lock``."""
    return path.with_name(path.name + ".lock")


@contextlib.asynccontextmanager
async def locked_slot(path: Path, *, timeout_seconds: float = LOCK_SECONDS) -> AsyncIterator[None]:
    """Hold the slot's inter-process lock (``flock`` on `lock_path`) for the block.

    Waits (polling, never blocking the event loop) up to `timeout_seconds` for another
    process to let go. The lock file is 0600 and belongs to the slot's owner.

    Raises:
        SlotError: `sign_in_busy` when the lock was not had in time; `unsafe_path` for an
            unsafe folder or a symlinked lock file.
    """
    owner = slot_owner(path)
    _make_folder(path.parent, owner)
    try:
        fd = _open_private(lock_path(path), os.O_RDWR | os.O_CREAT, owner)
    except OSError as exc:
        raise SlotError(
            Code.CONFIG_INVALID, f"{lock_path(path)}: cannot open the lock ({exc.strerror})"
        ) from exc
    try:
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SlotError(
                        Code.SIGN_IN_BUSY,
                        f"{path}: another process held the lock for {timeout_seconds:.0f} s",
                    ) from None
                await asyncio.sleep(_LOCK_POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def slot_summary(path: Path) -> dict[str, Any]:
    """What `doctor` may show about a slot: present, mode, owner, kind, server, team, expiry,
    whether it can refresh and whether it is dead. Never a token.

    ``ok`` is False with ``code``/``message`` when the slot cannot be read; ``code`` is
    ``permission_denied`` when this user may not even look (a server's slots belong to the
    services' users: run ``doctor`` as root to check them).
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return {"present": False, "ok": False, "code": str(Code.NO_SIGN_IN), "message": f"{path}: no sign-in"}
    except PermissionError:
        return {
            "present": None,
            "ok": False,
            "code": "permission_denied",
            "message": f"{path}: this user may not look into the slot's folder",
        }
    folder_mode = stat.S_IMODE(path.parent.lstat().st_mode)
    base = {"present": True, "mode": f"{stat.S_IMODE(info.st_mode):o}", "folder_mode": f"{folder_mode:o}"}
    base["owner_uid"] = info.st_uid
    try:
        sign_in = read_slot(path)
    except SlotError as exc:
        return {**base, "ok": False, "code": str(exc.code), "message": exc.message}
    return {
        **base,
        "ok": True,
        "kind": sign_in.kind,
        "server": sign_in.server,
        "team_id": sign_in.team_id,
        "expires_at": sign_in.expires_at,
        "refreshable": bool(sign_in.refresh_token and sign_in.token_endpoint and sign_in.client_id),
        "dead": sign_in.dead,
        "dead_reason": sign_in.dead_reason,
    }
