"""Files a process keeps for itself, and files root writes, without following a planted link.

Two dangers, one module:

- **A less trusted user plants a symlink** where a more trusted process writes (root writing a
  slot into a service's folder, root fixing the store's modes, a service writing its key): the
  write lands on a file of the attacker's choosing. Every operation here opens the folder by a
  file descriptor, walking the path from ``/`` one component at a time with ``O_NOFOLLOW``
  (`open_folder`); a symlink on the way is followed only when root (or this user) owns it (a
  less trusted user cannot plant one of those), and the file is then opened *relative to that descriptor*, itself
  with ``O_NOFOLLOW``. A folder renamed away afterwards takes the write with it, never elsewhere.
- **A folder a less trusted user can write** is no place for root's own files (supervisord's
  logs, pid file and socket): `trusted_folder` refuses a folder unless it and every folder
  above it belongs to root (or to this user) and nobody else may write it (a sticky ``/tmp``
  above is fine: others cannot rename what root made there).

Private files (`read_private`, `write_private`, `create_private`) are ``0600`` in a ``0700``
folder, owned by this user; reading refuses one that group or others may read, or that another
user owns.

Errors: `UnsafePath` (code ``config_invalid``) naming the path and what is wrong with it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from shared.errors import Code, FleetwatchError

MAX_LINKS = 40
"""Most symlinks one path may pass through (as the kernel's own limit)."""


class UnsafePath(FleetwatchError):
    """A path crosses a symlink or a folder a less trusted user controls (``config_invalid``)."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(Code.CONFIG_INVALID, f"{path}: {problem}")
        self.path = Path(path)


def _trusted_owner(uid: int) -> bool:
    return uid in (0, os.geteuid())


def _parts(path: Path) -> list[str]:
    if not path.is_absolute():
        path = Path.cwd() / path
    return [p for p in path.parts[1:] if p not in ("", ".")]


def open_folder(path: Path | str) -> int:
    """An ``O_PATH`` descriptor of folder `path`, reached from ``/`` without following a
    symlink that neither root nor this user owns. Close it with `os.close`.

    Raises:
        UnsafePath: a component is a symlink another user owns, or is not a folder.
        FileNotFoundError: a component does not exist.
    """
    path = Path(path)
    pending = _parts(path)
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    links = 0
    try:
        while pending:
            name = pending.pop(0)
            if name == "..":
                parent = os.open("..", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = parent
                continue
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if not _trusted_owner(info.st_uid) or links > MAX_LINKS:
                    raise UnsafePath(path, f"{name!r} is a symlink owned by uid {info.st_uid}; refusing it")
                target = os.readlink(name, dir_fd=fd)
                if target.startswith("/"):
                    pending = _parts(Path(target)) + pending
                    os.close(fd)
                    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                else:
                    pending = [p for p in Path(target).parts if p != "."] + pending
                continue
            if not stat.S_ISDIR(info.st_mode):
                raise UnsafePath(path, f"{name!r} is not a folder")
            child = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def folder_fd(path: Path | str) -> Iterator[int]:
    """`open_folder` for a ``with`` block."""
    fd = open_folder(path)
    try:
        yield fd
    finally:
        os.close(fd)


def ensure_folder(
    path: Path | str, mode: int = 0o700, *, owner: int | None = None, group: int | None = None
) -> None:
    """Make folder `path` (missing parents too, ``0700``) or take the one there: a real folder
    (never a symlink), with `mode` set. Run as root, it is given to `owner` (default: root) and
    `group`; otherwise it must already be this user's (`owner` default), and `group` is set
    when given.

    Raises:
        UnsafePath: it is a symlink or not a folder, or (not root) another user owns it.
    """
    path = Path(path)
    owner = os.geteuid() if owner is None else owner
    missing = [p for p in reversed(path.parents) if not p.exists()]
    for ancestor in missing:  # made like `mkdir -p`, 0700, each through its parent's descriptor
        with folder_fd(ancestor.parent) as above, contextlib.suppress(FileExistsError):
            os.mkdir(ancestor.name, 0o700, dir_fd=above)
    with folder_fd(path.parent) as parent:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path.name, 0o700, dir_fd=parent)
        try:
            fd = os.open(
                path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent
            )
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafePath(path, "not a folder (a symlink?)") from exc
            raise
    try:
        info = os.fstat(fd)
        if os.geteuid() == 0:
            if (info.st_uid, info.st_gid) != (owner, info.st_gid if group is None else group):
                os.fchown(fd, owner, -1 if group is None else group)
        elif info.st_uid != owner:
            raise UnsafePath(path, f"owned by uid {info.st_uid}, not uid {owner}")
        elif group is not None and info.st_gid != group:
            os.fchown(fd, -1, group)
        if stat.S_IMODE(os.fstat(fd).st_mode) != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def open_in_folder(path: Path | str, flags: int, mode: int = 0o600) -> int:
    """``os.open(path, flags | O_NOFOLLOW, mode)`` relative to a descriptor of its folder
    (`open_folder`); a descriptor to close.

    Raises:
        UnsafePath: `path` is a symlink, or its folder's path crosses one another user owns.
        OSError: as `os.open` (FileNotFoundError, FileExistsError...).
    """
    path = Path(path)
    with folder_fd(path.parent) as parent:
        try:
            return os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(path, "is a symlink; refusing it") from exc
            raise


def read_private(path: Path | str, *, max_bytes: int = 1 << 20) -> bytes:
    """The bytes of a private file: a regular file owned by this user that group and others
    may not read.

    Raises:
        FileNotFoundError: there is none.
        UnsafePath: a symlink, another owner, a mode open to others, or not a regular file.
    """
    path = Path(path)
    fd = open_in_folder(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(path, "not a regular file")
        if info.st_uid != os.geteuid():
            raise UnsafePath(path, f"owned by uid {info.st_uid}, not this user")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise UnsafePath(path, f"mode {stat.S_IMODE(info.st_mode):o}; it must be 600")
        return handle.read(max_bytes)


def write_private(path: Path | str, data: bytes, *, mode: int = 0o600, owner: int | None = None) -> None:
    """Replace `path` atomically with `data` (a new file of `mode` written beside it, then
    renamed over it), through the folder's descriptor. Run as root, the file goes to `owner`.

    Raises:
        UnsafePath: the folder's path crosses a symlink another user owns, or `path` is a
            symlink (refused, never replaced).
    """
    path = Path(path)
    with folder_fd(path.parent) as parent:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.stat(path.name, dir_fd=parent, follow_symlinks=False).st_mode):
                raise UnsafePath(path, "is a symlink; refusing it")
        tmp = f".{path.name}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=parent)
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent
        )
        try:
            if owner is not None and os.geteuid() == 0 and owner != 0:
                os.fchown(fd, owner, -1)
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb", closefd=False) as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            os.close(fd)
        os.replace(tmp, path.name, src_dir_fd=parent, dst_dir_fd=parent)


def create_private(path: Path | str, data: bytes) -> bool:
    """Create `path` (``0600``) holding `data` unless a file is there already; True when this
    call made it. Never through a symlink.

    Raises:
        UnsafePath: the path or its folder's path crosses a symlink another user owns.
    """
    path = Path(path)
    try:
        fd = open_in_folder(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def fix_file(folder: Path | str, name: str, *, uid: int, gid: int, mode: int, create: bool = False) -> bool:
    """As root, give the regular file `name` in `folder` its owner and mode, through
    descriptors: a symlink, a hard-linked file or anything not a regular file is refused, so a
    user who can write `folder` cannot turn this into a change of another file. With `create`,
    a missing file is made (empty). False when the file is missing and not created.

    Raises:
        UnsafePath: the entry is a symlink, not a regular file, or has other hard links.
    """
    path = Path(folder) / name
    flags = os.O_RDONLY | os.O_NONBLOCK | (os.O_CREAT if create else 0)
    try:
        fd = open_in_folder(path, flags, mode)
    except FileNotFoundError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(path, "not a regular file")
        if info.st_nlink != 1:
            raise UnsafePath(path, f"has {info.st_nlink} hard links; refusing to change it")
        os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    return True


def trusted_folder(path: Path | str) -> None:
    """Check that only root (or this user) can change what is in folder `path`: it and every
    folder above it belong to root or this user, and none of them may be written by group or
    others, except a sticky folder above it (``/tmp``: others cannot rename what is not theirs).

    Raises:
        UnsafePath: naming the first folder another user could write, or a symlink on the way.
        FileNotFoundError: the folder does not exist.
    """
    path = Path(path)
    folder = Path("/")
    chain = [folder]
    for name in _parts(path):
        folder = folder / name
        chain.append(folder)
    for index, current in enumerate(chain):
        info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode):
            if info.st_uid != 0:
                raise UnsafePath(current, f"a symlink owned by uid {info.st_uid}")
            info = os.stat(current)
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePath(current, "not a folder")
        if not _trusted_owner(info.st_uid):
            raise UnsafePath(current, f"owned by uid {info.st_uid}: that user could replace what is in it")
        writable_by_others = stat.S_IMODE(info.st_mode) & 0o022
        last = index == len(chain) - 1
        if writable_by_others and (last or not info.st_mode & stat.S_ISVTX):
            raise UnsafePath(current, f"mode {stat.S_IMODE(info.st_mode):o}: group or others may write it")
