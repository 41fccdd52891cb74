"""deploy/install.sh in a scratch root, with real users under a unique name (removed after):
idempotent, never overwrites a config, gives each service its own user and the fence's groups,
starts nothing."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.systemd_units import (
    INSTALL,
    UNITS,
    can_make_users,
    environment_file,
    one,
    parse_unit,
    remove_users,
    render,
    unique_name,
    unit_path,
    values,
)

pytestmark = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")


@pytest.fixture
def name() -> Iterator[str]:
    base = unique_name()
    try:
        yield base
    finally:
        remove_users(base)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One installation (scratch root, base name) the read-only tests look at."""
    root, base = tmp_path_factory.mktemp("root"), unique_name()
    try:
        result = render(root, base, "/usr/bin/python3", users=True)
        assert result.returncode == 0, result.stderr
        yield root, base
    finally:
        remove_users(base)


def owner(path: Path) -> tuple[str, str, int]:
    info = path.stat()
    return pwd.getpwuid(info.st_uid).pw_name, grp.getgrgid(info.st_gid).gr_name, stat.S_IMODE(info.st_mode)


def groups_of(user: str) -> set[str]:
    return set(subprocess.run(["id", "-nG", user], capture_output=True, text=True, check=True).stdout.split())


def test_running_install_twice_changes_nothing_and_keeps_an_edited_config(tmp_path: Path, name: str):
    first = render(tmp_path, name, "/usr/bin/python3", users=True)
    assert first.returncode == 0, first.stderr
    env_file = tmp_path / "etc" / name / f"{name}.env"
    edited = env_file.read_text().replace("FLEETWATCH_WRITE_TEAM_ID=\n", "FLEETWATCH_WRITE_TEAM_ID=team-42\n")
    env_file.write_text(edited)
    (tmp_path / "etc" / name / "assistant.env").write_text("FLEETWATCH_ANTHROPIC_API_KEY=sk-test-kept\n")
    uids = {u: pwd.getpwnam(f"{name}-{u}").pw_uid for u in ("executor", "web", "assistant")}

    second = render(tmp_path, name, "/usr/bin/python3", users=True)

    assert second.returncode == 0, second.stderr
    assert "created" not in second.stdout and "kept" in second.stdout
    assert env_file.read_text() == edited
    assert (
        tmp_path / "etc" / name / "assistant.env"
    ).read_text() == "FLEETWATCH_ANTHROPIC_API_KEY=sk-test-kept\n"
    assert {u: pwd.getpwnam(f"{name}-{u}").pw_uid for u in uids} == uids
    assert "nothing was started" in second.stdout


def test_running_install_again_takes_the_assistant_out_of_the_store_group_and_resets_the_store_modes(
    tmp_path: Path, name: str
):
    assert render(tmp_path, name, "/usr/bin/python3", users=True).returncode == 0
    subprocess.run(["usermod", "-a", "-G", name, f"{name}-assistant"], check=True)  # an older install
    store = tmp_path / "var" / "lib" / name / "store"
    for file in ("fleetwatch.db", "fleetwatch.db-wal", "fleetwatch.db-shm"):
        (store / file).touch()
        os.chmod(store / file, 0o644)
    os.chmod(store, 0o700)

    again = render(tmp_path, name, "/usr/bin/python3", users=True)

    assert again.returncode == 0, again.stderr
    assert f"user {name}-assistant removed from group {name}" in again.stdout
    assert name not in groups_of(f"{name}-assistant")
    assert owner(store) == ("root", name, 0o2770)
    for file in ("fleetwatch.db", "fleetwatch.db-wal", "fleetwatch.db-shm"):
        assert owner(store / file) == ("root", name, 0o660), file


def test_each_service_gets_its_own_user_and_only_the_groups_the_fence_needs(installed: tuple[Path, str]):
    tmp_path, name = installed
    assert groups_of(f"{name}-executor") == {f"{name}-executor", name}
    assert groups_of(f"{name}-web") == {f"{name}-web", name, f"{name}-executor"}
    assert groups_of(f"{name}-assistant") == {f"{name}-assistant", f"{name}-operators"}  # not the store's
    for user in ("executor", "web", "assistant"):
        entry = pwd.getpwnam(f"{name}-{user}")
        assert entry.pw_shell == "/usr/sbin/nologin" and entry.pw_uid < 1000


def test_tokens_and_state_folders_belong_to_their_service_and_the_store_to_the_group(
    installed: tuple[Path, str],
):
    tmp_path, name = installed
    lib = tmp_path / "var" / "lib" / name
    assert owner(lib / "executor" / "tokens") == (f"{name}-executor", f"{name}-executor", 0o700)
    assert owner(lib / "assistant" / "tokens") == (f"{name}-assistant", f"{name}-operators", 0o700)
    assert owner(lib / "web") == (f"{name}-web", f"{name}-operators", 0o700)
    assert owner(lib / "store") == ("root", name, 0o2770)
    assert owner(lib / "store" / "fleetwatch.db") == ("root", name, 0o660)
    assert owner(tmp_path / "etc" / name / f"{name}.env") == ("root", f"{name}-operators", 0o640)
    for service in ("executor", "web", "assistant"):
        assert owner(tmp_path / "etc" / name / f"{service}.env")[2] == 0o600


def test_the_config_names_each_socket_s_peers_by_the_real_ids(installed: tuple[Path, str]):
    tmp_path, name = installed
    env = environment_file(tmp_path / "etc" / name / f"{name}.env")
    assert env["FLEETWATCH_EXECUTOR_UIDS"] == str(pwd.getpwnam(f"{name}-web").pw_uid)
    assert env["FLEETWATCH_ASSISTANT_UIDS"] == str(pwd.getpwnam(f"{name}-assistant").pw_uid)
    assert env["FLEETWATCH_APPROVAL_UIDS"] == "0"
    assert env["FLEETWATCH_APPROVAL_GIDS"] == str(grp.getgrnam(f"{name}-operators").gr_gid)
    assert env["FLEETWATCH_SANDBOX_TOKEN_FILE"] == f"/var/lib/{name}/executor/tokens/sandbox.json"
    assert env["FLEETWATCH_READ_TOKEN_FILE"] == f"/var/lib/{name}/assistant/tokens/read.json"


def test_install_starts_no_process_of_the_service_users(installed: tuple[Path, str]):
    tmp_path, name = installed
    for user in ("executor", "web", "assistant"):
        found = subprocess.run(["pgrep", "-u", f"{name}-{user}"], capture_output=True, check=False)
        assert found.returncode == 1, found.stdout


@pytest.fixture
def nobodys_folder() -> Iterator[Path]:
    """A folder in /tmp owned by ``nobody`` (pytest's tmp_path is not reachable by others)."""
    tree = Path(tempfile.mkdtemp(prefix="fw-install-"))
    os.chown(tree, pwd.getpwnam("nobody").pw_uid, -1)
    try:
        yield tree
    finally:
        shutil.rmtree(tree)


def test_install_refuses_a_normal_user_unless_it_only_builds_a_tree(nobodys_folder: Path):
    tree = nobodys_folder
    as_nobody = {"user": "nobody", "capture_output": True, "text": True, "check": False, "cwd": "/"}
    refused = subprocess.run(["sh", str(INSTALL), "--root", str(tree)], **as_nobody)
    built = subprocess.run(["sh", str(INSTALL), "--root", str(tree), "--no-users"], **as_nobody)
    assert refused.returncode == 2 and "run as root" in refused.stderr
    assert built.returncode == 0, built.stderr
    assert (tree / "etc" / "systemd" / "system" / "fleetwatch-executor.service").exists()


def test_every_file_and_folder_the_rendered_units_name_is_installed(installed: tuple[Path, str]):
    root, name = installed
    for unit in UNITS:
        service = parse_unit(unit_path(root, name, unit).read_text())
        for env_file in values(service, "Service", "EnvironmentFile"):
            assert (root / env_file.lstrip("-/")).is_file(), env_file
        for folder in values(service, "Service", "ReadWritePaths"):
            assert (root / folder.lstrip("/")).is_dir(), folder
        state = one(service, "Service", "StateDirectory")
        assert (root / "var" / "lib" / state).is_dir(), state
        env = dict(a.partition("=")[::2] for a in values(service, "Service", "Environment"))
        assert env["FLEETWATCH_HOME"] == f"/var/lib/{state}"


def test_install_refuses_an_interpreter_a_service_user_cannot_run(tmp_path: Path, name: str):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)  # root's only: as a venv under /root would be
    (closed / "python").symlink_to("/usr/bin/python3")
    refused = render(tmp_path / "root", name, str(closed / "python"), users=True)
    missing = render(tmp_path / "root", name, str(tmp_path / "no-such-python"), users=True)
    assert refused.returncode == 2 and f"{name}-executor cannot run {closed / 'python'}" in refused.stderr
    assert missing.returncode == 2 and "no such interpreter" in missing.stderr
    assert not (tmp_path / "root" / "etc" / "systemd").exists()  # nothing installed


def uninstall(root: Path, name: str, *more: str) -> subprocess.CompletedProcess[str]:
    args = ["sh", str(INSTALL), "--root", str(root), "--name", name, "--uninstall", *more]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def test_uninstall_removes_what_install_and_up_made_and_keeps_the_store_unless_purged(
    tmp_path: Path, name: str
):
    assert render(tmp_path, name, "/usr/bin/python3", users=True).returncode == 0
    lib = tmp_path / "var" / "lib" / name
    for made_by_up in (f"run/{name}", f"run/{name}-executor", f"run/{name}-web", f"run/{name}-assistant"):
        (tmp_path / made_by_up).mkdir(parents=True)
    (lib / "store" / "fleetwatch.db").write_bytes(b"the records")
    (lib / "executor" / "keys").mkdir()
    (lib / "executor" / "tokens" / "sandbox.json").write_text("{}")
    busy = subprocess.Popen(
        ["/usr/bin/python3", "-c", "import sys; sys.stdin.read()"],
        user=f"{name}-executor",
        stdin=subprocess.PIPE,
    )
    try:
        refused = uninstall(tmp_path, name)
    finally:
        busy.communicate(b"", timeout=30)
    assert refused.returncode == 2 and f"{name}-executor still runs" in refused.stderr
    assert (tmp_path / "usr" / "local" / "bin" / name).exists()  # refused: nothing removed

    kept = uninstall(tmp_path, name)

    assert kept.returncode == 0, kept.stderr
    gone = [
        f"etc/systemd/system/{name}-executor.service",
        f"etc/systemd/system/{name}.target",
        f"etc/tmpfiles.d/{name}.conf",
        f"usr/local/bin/{name}",
        f"etc/{name}",
        f"run/{name}",
        f"run/{name}-executor",
        f"var/lib/{name}/logs",
        f"var/lib/{name}/approve",
        f"var/lib/{name}/ask",
        f"var/lib/{name}/executor/tokens",
        f"var/lib/{name}/assistant/tokens",
    ]
    assert [p for p in gone if (tmp_path / p).exists()] == []
    assert (lib / "store" / "fleetwatch.db").read_bytes() == b"the records"
    assert (lib / "executor" / "keys").is_dir()
    assert pwd.getpwnam(f"{name}-executor") and grp.getgrnam(name)

    purged = uninstall(tmp_path, name, "--purge")

    assert purged.returncode == 0, purged.stderr
    assert not lib.exists()
    with pytest.raises(KeyError):
        pwd.getpwnam(f"{name}-executor")
