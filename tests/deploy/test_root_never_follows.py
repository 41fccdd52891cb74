"""Root never acts on a path a service's user controls (issue 24, items 3 and 4).

deploy/install.sh in a scratch root with real users under a unique name; then, for every folder
and file a service's user can replace (its ``tokens`` folder, its slots and their locks, the
store's files, the page secrets), a symlink that user plants there pointing into a canary tree
outside (root's, known modes, owners and contents), and each root-run step run over it:
install.sh's re-run (the documented upgrade), ``fleetwatch logout`` and ``doctor`` as real
processes, and in this process what ``login`` (`store`: the slot lock and write), ``up``
(`prepare_server`) and ``down`` (`clear_server`) do as root. Each either refuses, naming the
path, or does its job beside the link; the canary tree is the same byte for byte, mode for mode,
owner for owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.ctl.supervise import ServerLayout, clear_server, prepare_server
from shared.epiphan.capture import CaptureError, prepare_folder
from shared.epiphan.slots import SignIn, SlotError, locked_slot, write_slot
from shared.errors import Code
from shared.private_files import UnsafePath
from tests.deploy.systemd_units import (
    Scratch,
    can_make_users,
    environment_file,
    remove_users,
    render,
    unique_name,
)

pytestmark = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")

Snapshot = dict[str, tuple[int, int, int, bytes]]


def snapshot(top: Path) -> Snapshot:
    """Every entry under `top` (itself too): (mode with type, uid, gid, bytes or link target)."""
    seen: Snapshot = {}
    for folder, folders, files in os.walk(top, followlinks=False):
        for name in [".", *folders, *files]:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISREG(info.st_mode):
                body = path.read_bytes()
            elif stat.S_ISLNK(info.st_mode):
                body = os.readlink(path).encode()
            else:
                body = b""
            seen[str(path.relative_to(top))] = (info.st_mode, info.st_uid, info.st_gid, body)
    return seen


SLOT_NAMES = ("sandbox.json", "sandbox.json.lock", "read.json", "read.json.lock")
STORE_NAMES = ("fleetwatch.db", "fleetwatch.db-wal", "fleetwatch.db-shm")


def make_canary(top: Path) -> Path:
    """A root-owned tree with a file of every name a root step opens in a service's folder."""
    top.mkdir()
    os.chmod(top, 0o744)  # not 700: a chmod through the link shows
    for name in (*SLOT_NAMES, *STORE_NAMES, "approve-secret", "ask-secret"):
        (top / name).write_text(f"canary {name}\n")
        os.chmod(top / name, 0o644)
    (top / "inner").mkdir()
    os.chmod(top / "inner", 0o704)
    return top


class Deployment:
    """install.sh's layout in a scratch root, and the places a service's user can plant a link."""

    def __init__(self, root: Path, name: str) -> None:
        self.root, self.name = root, name
        self.lib = root / "var" / "lib" / name
        self.layout = ServerLayout(root=root, name=name)

    def plantable(self) -> dict[str, tuple[Path, str, bool]]:
        """Label -> (path, the user who can replace it, whether it is a folder)."""
        e, w, a = (f"{self.name}-{s}" for s in ("executor", "web", "assistant"))
        places = {
            "executor tokens folder": (self.lib / "executor" / "tokens", e, True),
            "assistant tokens folder": (self.lib / "assistant" / "tokens", a, True),
            "sandbox slot": (self.lib / "executor" / "tokens" / "sandbox.json", e, False),
            "sandbox slot lock": (self.lib / "executor" / "tokens" / "sandbox.json.lock", e, False),
            "read slot": (self.lib / "assistant" / "tokens" / "read.json", a, False),
            "read slot lock": (self.lib / "assistant" / "tokens" / "read.json.lock", a, False),
            "approval page secret": (self.lib / "approve" / "approve-secret", w, False),
            "ask page secret": (self.lib / "ask" / "ask-secret", a, False),
        }
        for name in STORE_NAMES:
            places[f"store {name}"] = (self.lib / "store" / name, e, False)
        return places

    def env(self) -> dict[str, str]:
        scratch = Scratch(self.root)
        settings = environment_file(self.root / "etc" / self.name / f"{self.name}.env")
        env = {k: scratch.path(v) for k, v in settings.items()}
        env.update(
            PATH="/usr/bin:/bin",
            HOME=str(self.root),
            FLEETWATCH_RUNTIME_DIR=str(self.root / "run" / self.name),
            FLEETWATCH_WRITE_DEVICE_IDS="abcd1234",
            FLEETWATCH_LOG_LEVEL="WARNING",
        )
        return env


@contextlib.contextmanager
def planted(path: Path, user: str, target: Path) -> Iterator[None]:
    """`path` replaced by a symlink to `target`, owned by `user` (as that user would plant it);
    what was there put back after."""
    aside = path.with_name(path.name + ".aside")
    had = path.exists() or path.is_symlink()
    if had:
        path.rename(aside)
    path.symlink_to(target)
    entry = pwd.getpwnam(user)
    os.lchown(path, entry.pw_uid, entry.pw_gid)
    try:
        yield
    finally:
        if path.is_symlink():
            path.unlink()
        if had:
            aside.rename(path)


@contextlib.contextmanager
def hard_linked(path: Path, target: Path) -> Iterator[None]:
    """`path` replaced by a hard link to `target` (a service's user can make one to a file it
    may not change where ``fs.protected_hardlinks`` is off); put back after."""
    aside = path.with_name(path.name + ".aside")
    had = path.exists() or path.is_symlink()
    if had:
        path.rename(aside)
    os.link(target, path)
    try:
        yield
    finally:
        path.unlink()
        if had:
            aside.rename(path)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root, name = tmp_path_factory.mktemp("root"), unique_name()
    try:
        installed = render(root, name, "/usr/bin/python3", users=True)
        assert installed.returncode == 0, installed.stderr
        yield Deployment(root, name)
    finally:
        remove_users(name)


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    return make_canary(tmp_path / "canary")


def target_for(canary: Path, path: Path, folder: bool) -> Path:
    return canary if folder else canary / path.name


def refused_or_done(result: subprocess.CompletedProcess[str], path: Path) -> None:
    """Either the step did its job, or it refused naming the path (a stable code, no trace)."""
    if result.returncode != 0:
        said = result.stdout + result.stderr
        assert "Traceback" not in said, said
        assert str(path.name) in said and ("link" in said or "unsafe_path" in said), said


def test_install_sh_run_again_never_follows_a_link_a_service_user_planted(
    deployment: Deployment, canary: Path
):
    """Item 3: the documented upgrade step, over every place a service's user can replace."""
    before = snapshot(canary)
    for label, (path, user, folder) in deployment.plantable().items():
        with planted(path, user, target_for(canary, path, folder)):
            again = render(deployment.root, deployment.name, "/usr/bin/python3", users=True)
            refused_or_done(again, path)
            assert path.is_symlink(), label
        assert snapshot(canary) == before, label


def test_logout_and_doctor_as_root_never_follow_a_planted_link(deployment: Deployment, canary: Path):
    """Item 4 (the command side): ``fleetwatch logout`` and ``doctor`` as root, each place."""
    before = snapshot(canary)
    env = deployment.env()
    for label, (path, user, folder) in deployment.plantable().items():
        with planted(path, user, target_for(canary, path, folder)):
            for argv in (["logout", "--sandbox"], ["logout"], ["doctor", "--json"]):
                result = subprocess.run(
                    [sys.executable, "-m", "services.ctl.main", *argv],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                assert "Traceback" not in result.stderr, (label, argv, result.stderr)
                if argv[0] == "logout":  # done (nothing there) or refused naming the link
                    assert result.returncode == 0 or "unsafe_path" in result.stderr, (label, result.stderr)
                else:
                    assert json.loads(result.stdout)["checks"], (label, result.stderr)
                assert path.is_symlink(), (label, argv)
        assert snapshot(canary) == before, label


def test_a_refused_link_is_named_with_a_stable_code_in_english_and_spanish(
    deployment: Deployment, canary: Path
):
    path, user, _ = deployment.plantable()["executor tokens folder"]
    with planted(path, user, canary):
        said = {
            language: subprocess.run(
                [sys.executable, "-m", "services.ctl.main", "logout", "--sandbox", "--language", language],
                env=deployment.env(),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            for language in ("en", "es")
        }
        again = render(deployment.root, deployment.name, "/usr/bin/python3", users=True)
    for result in (*said.values(), again):
        assert result.returncode == 2 and "unsafe_path" in result.stderr and str(path) in result.stderr
    assert "symlink" in said["en"].stderr and "enlace simbólico" in said["es"].stderr, said["es"].stderr
    assert "install.sh: unsafe_path:" in again.stderr and "symlink" in again.stderr


SIGN_IN = SignIn("canary-token", server="http://127.0.0.1:1/mcp", kind="static")


async def store_as_login_does(slot: Path) -> None:
    """What ``fleetwatch login`` does with a sign-in once the server vouched for it."""
    async with locked_slot(slot):
        write_slot(slot, SIGN_IN)


def test_login_up_and_down_as_root_never_follow_a_planted_link(deployment: Deployment, canary: Path):
    """``login``'s slot writes, ``up``'s preparation (`prepare_server`) and ``down``'s
    (`clear_server`), as root, over every place; each refuses the link or works beside it."""
    before = snapshot(canary)
    operators_run = deployment.root / "run" / deployment.name
    for label, (path, user, folder) in deployment.plantable().items():
        with planted(path, user, target_for(canary, path, folder)):
            for slot in deployment.layout.slots.values():
                try:
                    asyncio.run(store_as_login_does(slot))
                except SlotError as refused:
                    assert refused.code is Code.UNSAFE_PATH, (label, refused.message)
            try:
                prepare_server(deployment.layout, operators_run)
            except UnsafePath as refused:
                assert refused.code is Code.UNSAFE_PATH and path.name in refused.message, label
            clear_server(deployment.layout)
            assert path.is_symlink(), label
        assert snapshot(canary) == before, label


def test_capture_as_root_never_makes_its_folder_through_a_planted_link(deployment: Deployment, canary: Path):
    """``fleetwatch capture DIR`` as root, DIR in a folder a service's user can write: the
    folders and files are made by descriptor, so a link planted on the way is refused."""
    before = snapshot(canary)
    home = deployment.lib / "assistant"
    with planted(home / "captures", f"{deployment.name}-assistant", canary):
        with pytest.raises(CaptureError) as refused:
            prepare_folder(home / "captures" / "today")
    assert refused.value.code is Code.UNSAFE_PATH and "captures" in refused.value.message
    assert snapshot(canary) == before


def test_a_hard_link_in_place_of_a_file_is_never_changed_by_root(deployment: Deployment, canary: Path):
    """A file root opens in a service's folder (a slot, its lock, a store file) replaced by a
    hard link to a root-owned file: root's login, up and install.sh's re-run refuse it or
    replace the name, and never chown or chmod the file behind it."""
    before = snapshot(canary)
    operators_run = deployment.root / "run" / deployment.name
    for label, (path, _user, folder) in deployment.plantable().items():
        if folder or "secret" in label:
            continue
        with hard_linked(path, canary / path.name):
            for slot in deployment.layout.slots.values():
                try:
                    asyncio.run(store_as_login_does(slot))
                except SlotError as refused:
                    assert refused.code is Code.UNSAFE_PATH, (label, refused.message)
            with contextlib.suppress(UnsafePath):
                prepare_server(deployment.layout, operators_run)
            refused_or_done(render(deployment.root, deployment.name, "/usr/bin/python3", users=True), path)
        assert snapshot(canary) == before, label
