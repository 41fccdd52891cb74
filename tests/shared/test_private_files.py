"""Files a process keeps for itself and files root writes, never through a planted link: real
files, folders and symlinks in a temporary folder (and, as root, links and folders owned by
another user, as a compromised service's user would plant them)."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from shared.errors import Code
from shared.private_files import (
    UnsafePath,
    create_private,
    ensure_folder,
    fix_file,
    open_folder,
    private_tree,
    read_private,
    trusted_folder,
    write_private,
)

as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to own files as another user (CI runs as root)"
)


def nobody() -> int:
    return pwd.getpwnam("nobody").pw_uid


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A 0700 folder of this user's (pytest's own temporary folders may be group-writable)."""
    folder = tmp_path / "home"
    folder.mkdir(mode=0o700)
    return folder


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_private_file_is_written_0600_replaced_whole_and_read_back(home: Path) -> None:
    key = home / "keys" / "executor.key"
    ensure_folder(key.parent)
    write_private(key, b"first")
    write_private(key, b"second")
    assert read_private(key) == b"second" and mode_of(key) == 0o600 and mode_of(key.parent) == 0o700
    assert sorted(p.name for p in key.parent.iterdir()) == ["executor.key"]  # no temporary left


def test_a_symlink_where_a_private_file_goes_is_refused_and_its_target_untouched(home: Path) -> None:
    target = home / "elsewhere"
    target.write_bytes(b"someone else's")
    link = home / "executor.key"
    link.symlink_to(target)
    for attempt in (lambda: write_private(link, b"x"), lambda: read_private(link)):
        with pytest.raises(UnsafePath) as refused:
            attempt()
        assert refused.value.code is Code.UNSAFE_PATH and "symlink" in refused.value.message
    assert not create_private(link, b"x")  # there is something there: never written through
    assert target.read_bytes() == b"someone else's" and link.is_symlink()


def test_a_private_file_others_may_read_is_refused(home: Path) -> None:
    secret = home / "read.json"
    secret.write_bytes(b"{}")
    secret.chmod(0o640)
    with pytest.raises(UnsafePath, match="mode 640"):
        read_private(secret)


def test_create_private_makes_the_file_once(home: Path) -> None:
    key = home / "approval_web.key"
    assert create_private(key, b"one")
    assert not create_private(key, b"two")
    assert read_private(key) == b"one" and mode_of(key) == 0o600


def test_ensure_folder_refuses_a_symlink_and_a_file(home: Path) -> None:
    (home / "real").mkdir()
    (home / "keys").symlink_to(home / "real")
    (home / "plain").write_text("")
    for path in (home / "keys", home / "plain"):
        with pytest.raises(UnsafePath):
            ensure_folder(path)


def test_a_folder_path_through_this_users_own_link_is_followed(home: Path) -> None:
    (home / "real").mkdir()
    (home / "via").symlink_to(home / "real")
    write_private(home / "via" / "slot.json", b"{}")
    assert (home / "real" / "slot.json").read_bytes() == b"{}"
    os.close(open_folder(home / "via"))


@as_root
def test_a_folder_path_through_a_link_another_user_planted_is_refused(home: Path) -> None:
    (home / "real").mkdir()
    planted = home / "via"
    planted.symlink_to(home / "real")
    os.lchown(planted, nobody(), -1)
    with pytest.raises(UnsafePath, match="owned by uid"):
        write_private(planted / "slot.json", b"{}")
    with pytest.raises(UnsafePath):
        open_folder(planted)
    assert list((home / "real").iterdir()) == []


@as_root
def test_a_private_file_another_user_owns_is_refused(home: Path) -> None:
    key = home / "executor.key"
    key.write_bytes(b"k")
    key.chmod(0o600)
    os.chown(key, nobody(), -1)
    with pytest.raises(UnsafePath, match="owned by uid"):
        read_private(key)


@as_root
def test_fix_file_gives_a_regular_file_its_owner_and_mode_and_refuses_links(home: Path) -> None:
    store = home / "store"
    store.mkdir()
    (store / "fleetwatch.db").write_bytes(b"")
    assert fix_file(store, "fleetwatch.db", uid=nobody(), gid=0, mode=0o660)
    info = (store / "fleetwatch.db").stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (nobody(), 0o660)
    assert not fix_file(store, "fleetwatch.db-wal", uid=0, gid=0, mode=0o660)
    assert fix_file(store, "fleetwatch.db-shm", uid=0, gid=0, mode=0o660, create=True)
    shadow = home / "shadow"
    shadow.write_text("root's own\n")
    shadow.chmod(0o600)
    (store / "linked").symlink_to(shadow)
    os.link(shadow, store / "hard")
    for name in ("linked", "hard"):
        with pytest.raises(UnsafePath):
            fix_file(store, name, uid=nobody(), gid=0, mode=0o666)
    info = shadow.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o600)


def test_a_folder_group_or_others_may_write_is_not_trusted(home: Path) -> None:
    logs = home / "logs"
    logs.mkdir(mode=0o750)
    logs.chmod(0o750)
    trusted_folder(logs)
    logs.chmod(0o770)
    with pytest.raises(UnsafePath, match="group or others may write it"):
        trusted_folder(logs)
    logs.chmod(0o750)
    home.chmod(0o777)  # a folder above that anyone may write, not sticky: they could rename logs
    try:
        with pytest.raises(UnsafePath, match=str(home)):
            trusted_folder(logs)
        home.chmod(0o1777)  # sticky, as /tmp: others cannot rename what is not theirs
        trusted_folder(logs)
    finally:
        home.chmod(0o700)


@as_root
def test_a_folder_another_user_owns_is_not_trusted_for_roots_files(home: Path) -> None:
    logs = home / "logs"
    logs.mkdir(mode=0o755)
    os.chown(logs, nobody(), -1)
    with pytest.raises(UnsafePath, match="that user could replace what is in it"):
        trusted_folder(logs)


def test_private_tree_takes_others_out_never_through_a_link_and_keeps_a_setgid_group(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "logs").mkdir(parents=True)
    (state / "fleetwatch.db").write_bytes(b"")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the state's\n")
    (state / "link").symlink_to(outside)
    shared = state / "approve"
    shared.mkdir()
    (shared / "approve-secret").write_text("s\n")
    for path, mode in ((state, 0o755), (state / "logs", 0o775), (state / "fleetwatch.db", 0o644)):
        os.chmod(path, mode)
    os.chmod(outside, 0o644)
    os.chmod(shared, 0o2775)  # noqa: S103 (the drift under test)
    os.chmod(shared / "approve-secret", 0o664)

    found = private_tree(state, fix=True)

    assert {(p.name, m) for p, m, _ in found} >= {("state", 0o755), ("logs", 0o775), ("fleetwatch.db", 0o644)}
    assert private_tree(state, fix=False) == []
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # the link's target untouched
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (state, state / "logs", state / "fleetwatch.db")}
    assert set(modes.values()) == {0o700, 0o600}
    assert stat.S_IMODE(shared.stat().st_mode) == 0o2750
    assert stat.S_IMODE((shared / "approve-secret").stat().st_mode) == 0o640
    assert private_tree(tmp_path / "missing", fix=False) == []


def test_private_tree_only_named_files_keeps_the_folder_and_the_owner_s_bits(tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    os.chmod(folder, 0o755)  # noqa: S103 (not the state's: left as it is)
    (folder / "watch.db").write_bytes(b"")
    (folder / "tool").write_bytes(b"#!/bin/sh\n")
    for name, mode in (("watch.db", 0o644), ("tool", 0o755)):
        os.chmod(folder / name, mode)  # noqa: S103 (the drift under test)

    found = private_tree(folder, fix=True, only=("watch.db", "watch.db-wal", "tool"))

    assert sorted((p.name, m, a) for p, m, a in found) == [("tool", 0o755, 0o700), ("watch.db", 0o644, 0o600)]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "tool").stat().st_mode) == 0o700  # the owner's x stays
