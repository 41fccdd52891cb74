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

Root's commands (``fleetwatch up``, ``down``, ``login``, ``logout``, ``capture``, ``doctor``) and
``deploy/install.sh`` (through this module's command line, ``python -m shared.private_files``)
touch a folder or file a service's user can replace only through these functions: make or fix a
folder (`ensure_folder`), open a file to change it (`open_plain`: never a symlink, nor a file
with another hard link), fix one (`fix_file`), write one (`write_private`), remove one
(`remove_file`), each by descriptor, never following a link that user planted.

One account's state (`private_tree`): every folder ``0700`` and file ``0600`` (``2750`` and
``0640`` in a setgid folder its group reads), checked and put back by descriptor.

Errors: `UnsafePath` (code ``unsafe_path``) naming the path and what is wrong with it, said in
the operator's language (`N_`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from shared.errors import N_, Code, FleetwatchError

MAX_LINKS = 40
"""Most symlinks one path may pass through (as the kernel's own limit)."""


IS_A_SYMLINK = N_("is a symlink; refusing it")
NOT_A_FOLDER = N_("is not a folder (a symlink?); refusing it")
NOT_A_FILE = N_("is not a regular file; refusing it")


class UnsafePath(FleetwatchError):
    """A path crosses a symlink or a folder a less trusted user controls (``unsafe_path``);
    nothing was changed. `message` is ``<path>: <problem>``; a fixed problem (`IS_A_SYMLINK`...)
    is said in the operator's language too."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(Code.UNSAFE_PATH, f"{path}: {problem}")
        self.path = Path(path)
        self.template = N_("%(path)s: %(problem)s")
        self.params = {"path": str(path), "problem": problem}


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
                raise UnsafePath(path, f"{name!r} {NOT_A_FOLDER}")
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
    path: Path | str,
    mode: int = 0o700,
    *,
    owner: int | None = None,
    group: int | None = None,
    parents_mode: int = 0o700,
) -> None:
    """Make folder `path` (missing parents too, `parents_mode`, this user's) or take the one
    there: a real folder (never a symlink), with `mode` set. Run as root, it is given to
    `owner` (default: root) and `group`; otherwise it must already be this user's (`owner`
    default), and `group` is set when given.

    Raises:
        UnsafePath: it is a symlink or not a folder, or (not root) another user owns it.
    """
    path = Path(path)
    owner = os.geteuid() if owner is None else owner
    missing = [p for p in reversed(path.parents) if not p.exists()]
    for ancestor in missing:  # made like `mkdir -p`, each through its parent's descriptor
        with folder_fd(ancestor.parent) as above:
            try:
                os.mkdir(ancestor.name, parents_mode, dir_fd=above)
            except FileExistsError:
                continue
            made = os.open(
                ancestor.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=above
            )
            try:
                os.fchmod(made, parents_mode)  # the mode asked for, not the umask's
            finally:
                os.close(made)
    with folder_fd(path.parent) as parent:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path.name, 0o700, dir_fd=parent)
        try:
            fd = os.open(
                path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent
            )
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafePath(path, NOT_A_FOLDER) from exc
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
                raise UnsafePath(path, IS_A_SYMLINK) from exc
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
            raise UnsafePath(path, NOT_A_FILE)
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
                raise UnsafePath(path, IS_A_SYMLINK)
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


def open_plain(path: Path | str, flags: int, mode: int = 0o600) -> int:
    """`open_in_folder`, then refused unless it is a regular file with no other hard link: what
    root may change (`os.fchown`, `os.fchmod`) in a folder another user can write, since that
    user could have linked a file of root's there. A descriptor to close.

    Raises:
        UnsafePath: the entry is a symlink, not a regular file, or has other hard links.
        OSError: as `os.open` (FileNotFoundError...).
    """
    path = Path(path)
    fd = open_in_folder(path, flags | os.O_NONBLOCK, mode)
    info = os.fstat(fd)
    problem = (
        NOT_A_FILE
        if not stat.S_ISREG(info.st_mode)
        else (f"has {info.st_nlink} hard links; refusing to change it" if info.st_nlink != 1 else None)
    )
    if problem is not None:
        os.close(fd)
        raise UnsafePath(path, problem)
    return fd


def fix_file(folder: Path | str, name: str, *, uid: int, gid: int, mode: int, create: bool = False) -> bool:
    """As root, give the regular file `name` in `folder` its owner and mode, through
    descriptors: a symlink, a hard-linked file or anything not a regular file is refused
    (`open_plain`), so a user who can write `folder` cannot turn this into a change of another
    file. With `create`, a missing file is made (empty). False when the file is missing and not
    created.

    Raises:
        UnsafePath: the entry is a symlink, not a regular file, or has other hard links.
    """
    try:
        fd = open_plain(Path(folder) / name, os.O_RDONLY | (os.O_CREAT if create else 0), mode)
    except FileNotFoundError:
        return False
    try:
        os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    return True


def remove_file(path: Path | str) -> bool:
    """Remove the entry `path` (a link is removed itself, never followed) through a descriptor
    of its folder reached by `open_folder`: a folder on the way swapped for another user's
    symlink is refused, so the removal never lands in a folder that user picked. True when
    there was one to remove.

    Raises:
        UnsafePath: the folder's path crosses a symlink another user owns, or is not a folder.
    """
    path = Path(path)
    try:
        with folder_fd(path.parent) as parent:
            os.unlink(path.name, dir_fd=parent)
    except FileNotFoundError:
        return False
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
            raise UnsafePath(current, NOT_A_FOLDER)
        if not _trusted_owner(info.st_uid):
            raise UnsafePath(current, f"owned by uid {info.st_uid}: that user could replace what is in it")
        writable_by_others = stat.S_IMODE(info.st_mode) & 0o022
        last = index == len(chain) - 1
        if writable_by_others and (last or not info.st_mode & stat.S_ISVTX):
            raise UnsafePath(current, f"mode {stat.S_IMODE(info.st_mode):o}: group or others may write it")


def private_mode(mode: int, *, folder: bool, in_setgid_folder: bool) -> int:
    """The most an entry of a private tree may let in (`private_tree`): nothing for group and
    others (a folder ``0700``, a file ``0600``), except reading (and a folder's search) for the
    group of a setgid folder (``2750``) and of a file in one (``0640``). Only bits are taken
    away: the owner's (an executable's ``x``) stay."""
    in_group = bool(mode & stat.S_ISGID) if folder else in_setgid_folder
    return stat.S_IMODE(mode) & ~(0o027 if in_group else 0o077)


def _look(
    fd: int, where: Path, in_setgid_folder: bool, fix: bool, loose: list[tuple[Path, int, int]]
) -> None:
    """`private_tree`'s step for one open entry: noted in `loose` (and fixed) when this user's
    folder or regular file lets in more than `private_mode`."""
    info = os.fstat(fd)
    is_folder = stat.S_ISDIR(info.st_mode)
    if info.st_uid != os.geteuid() or not (is_folder or stat.S_ISREG(info.st_mode)):
        return
    allowed = private_mode(info.st_mode, folder=is_folder, in_setgid_folder=in_setgid_folder)
    if stat.S_IMODE(info.st_mode) != allowed:
        loose.append((where, stat.S_IMODE(info.st_mode), allowed))
        if fix:
            os.fchmod(fd, allowed)


def _look_in(
    folder: int, here: Path, names: Iterable[str], fix: bool, loose: list[tuple[Path, int, int]]
) -> None:
    setgid = bool(os.fstat(folder).st_mode & stat.S_ISGID)
    for name in names:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
        except OSError:  # a symlink, a socket, gone: nothing to make private
            continue
        try:
            _look(fd, here / name, setgid, fix, loose)
        finally:
            os.close(fd)


def private_tree(
    path: Path | str, *, fix: bool, only: Iterable[str] | None = None
) -> list[tuple[Path, int, int]]:
    """Every folder and regular file under folder `path` (itself too) this user owns whose mode
    lets in more than `private_mode` allows, as ``(path, mode found, mode allowed)``, octal
    ints; with `fix`, each is set to the allowed mode. With `only`, just those names directly
    in `path` (not `path` itself, nothing below). All by descriptor, from a descriptor of
    `path` reached by `open_folder`: a symlink is never followed (nor changed), and what other
    users own is left as it is. A missing `path` has nothing loose.

    Raises:
        UnsafePath: the path to `path` crosses a symlink another user owns.
    """
    path = Path(path)
    loose: list[tuple[Path, int, int]] = []
    try:
        parent = open_folder(path.parent)
    except FileNotFoundError:
        return loose
    try:
        if only is not None:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                folder = os.open(
                    path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent
                )
                try:
                    _look_in(folder, path, only, fix, loose)
                finally:
                    os.close(folder)
            return loose
        with contextlib.suppress(FileNotFoundError):
            for here, _folders, files, folder in os.fwalk(path.name, dir_fd=parent, follow_symlinks=False):
                _look(folder, path.parent / here, False, fix, loose)
                _look_in(folder, path.parent / here, files, fix, loose)
    finally:
        os.close(parent)
    return loose


def _ids(owner: str, group: str) -> tuple[int | None, int | None]:
    import grp
    import pwd

    uid = None if owner == "-" else pwd.getpwnam(owner).pw_uid
    gid = None if group == "-" else grp.getgrnam(group).gr_gid
    return uid, gid


def main(argv: list[str] | None = None) -> int:
    """``python -m shared.private_files folder PATH MODE OWNER GROUP`` (`ensure_folder`) or
    ``... file FOLDER NAME MODE OWNER GROUP [--create]`` (`fix_file`): deploy/install.sh's
    way to make and fix what a service's user can write, by descriptor (``-``: owner or group
    left as it is). Exits 2 with ``<--said-by>: unsafe_path: <path>: <problem>`` on a refusal,
    nothing changed."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m shared.private_files")
    parser.add_argument("--said-by", default="shared.private_files")
    steps = parser.add_subparsers(dest="step", required=True)
    folder = steps.add_parser("folder")
    folder.add_argument("path", type=Path)
    file = steps.add_parser("file")
    file.add_argument("folder", type=Path)
    file.add_argument("name")
    file.add_argument("--create", action="store_true")
    for step in (folder, file):
        step.add_argument("mode", type=lambda text: int(text, 8))
        step.add_argument("owner")
        step.add_argument("group")
    args = parser.parse_args(argv)
    uid, gid = _ids(args.owner, args.group)
    try:
        if args.step == "folder":
            ensure_folder(args.path, args.mode, owner=uid, group=gid, parents_mode=0o755)
        else:
            euid, egid = os.geteuid(), os.getegid()
            fix_file(
                args.folder,
                args.name,
                uid=euid if uid is None else uid,
                gid=egid if gid is None else gid,
                mode=args.mode,
                create=args.create,
            )
    except UnsafePath as exc:
        print(f"{args.said_by}: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
