"""`fleetwatch up` as root with deploy/install.sh's users and settings: supervisord runs each
service as its own user in install.sh's layout (a scratch root, real users under a unique
name, removed after), so the fence is OS-level; without root or without the users it stays
one account. CI runs as root.

The whole thing runs as real processes: install.sh, `fleetwatch up` on the lab (demo mode, so
it also places the lab's sign-ins), `supervisorctl pid`, `fleetwatch doctor`, `fleetwatch down`.
"""

from __future__ import annotations

import grp
import pwd
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.ctl.supervise import choose_fence, render_config
from shared.config import load_settings
from tests.deploy.cli import doctor
from tests.deploy.probes import WRITE_STORE
from tests.deploy.supervised import PROGRAMS, Running, as_process, gone, status_of, supervised
from tests.deploy.systemd_units import can_make_users, unique_name

needs_root = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with supervised() as up:
        yield up


def test_without_root_up_keeps_one_account_and_renders_no_user_switch(tmp_path: Path):
    store = tmp_path / "var" / "lib" / "fleetwatch" / "store"
    settings = load_settings({"HOME": str(tmp_path), "FLEETWATCH_STATE_DIR": str(store)})
    fence = choose_fence(settings, euid=1000)
    assert fence.layout is None
    assert fence.description == "process-level, same user (not root: supervisord cannot switch users)"
    rendered = render_config(settings, {}, server=fence.layout).splitlines()
    assert not [line for line in rendered if line.startswith("user=")]
    assert [line for line in rendered if line.startswith("umask=")] == ["umask=077"]  # the daemon's own


def test_as_root_without_install_shs_users_up_keeps_one_account(tmp_path: Path):
    name = unique_name()  # nobody made these users
    store = tmp_path / "var" / "lib" / name / "store"
    settings = load_settings({"HOME": str(tmp_path), "FLEETWATCH_STATE_DIR": str(store)})
    fence = choose_fence(settings, euid=0)
    assert fence.layout is None and f"missing: {name}-executor" in fence.reason
    default = choose_fence(load_settings({"HOME": str(tmp_path)}), euid=0)
    assert default.layout is None and default.reason == "the settings are not deploy/install.sh's"


@needs_root
def test_up_says_it_started_the_os_level_fence(running: Running):
    name = running.name
    assert (
        f"Fence level: OS-level, separate users ({name}-executor, {name}-web, {name}-assistant)."
        in running.up.stdout
    )
    secret = running.path(f"/var/lib/{name}/approve/approve-secret")
    assert (
        f"Its secret is in {secret} (asked once per browser session; the group {name}-approvers"
        in running.up.stdout
    )
    ask_secret = running.path(f"/var/lib/{name}/ask/ask-secret")
    assert (
        f"Its secret is in {ask_secret} (asked once per browser session; the group {name}-operators"
        in running.up.stdout
    )


@needs_root
def test_each_service_runs_as_its_own_user_with_umask_0077(running: Running):
    for program, short in PROGRAMS.items():
        status = status_of(running.pid(program))
        user = pwd.getpwuid(int(status["Uid"][0])).pw_name
        assert (user, status["Umask"]) == (f"{running.name}-{short}", ["0077"]), program
    assert int(status_of(running.pid("lab"))["Uid"][0]) == 0  # the lab holds nothing real


@needs_root
def test_the_demo_sign_ins_land_in_each_services_own_slot(running: Running):
    for short, slot in (("executor", "sandbox"), ("assistant", "read")):
        path = running.path(f"/var/lib/{running.name}/{short}/tokens/{slot}.json")
        for item, mode in ((path, 0o600), (path.parent, 0o700)):
            info = item.stat()
            assert pwd.getpwuid(info.st_uid).pw_name == f"{running.name}-{short}", item
            assert stat.S_IMODE(info.st_mode) == mode, item


@needs_root
def test_each_socket_takes_the_group_of_the_side_allowed_in(running: Running):
    name = running.name
    expected = {
        f"/run/{name}-executor/executor.sock": (f"{name}-executor", f"{name}-executor"),
        f"/run/{name}-web/approval.sock": (f"{name}-web", f"{name}-operators"),
        f"/run/{name}-assistant/assistant.sock": (f"{name}-assistant", f"{name}-operators"),
    }
    for path, owner in expected.items():
        info = running.path(path).lstat()
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o660, path
        assert (pwd.getpwuid(info.st_uid).pw_name, grp.getgrgid(info.st_gid).gr_name) == owner, path


READ_FILE = "import sys; open(sys.argv[1], 'rb').read()"
CONNECT = "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])"


@needs_root
def test_the_assistants_process_credentials_cannot_read_the_sandbox_token_or_reach_executor_sock(
    running: Running,
):
    name, assistant = running.name, running.pid("assistant")
    sandbox = str(running.path(f"/var/lib/{name}/executor/tokens/sandbox.json"))
    denied = as_process(assistant, running.python, READ_FILE, sandbox, env=running.env)
    assert denied.returncode != 0 and "PermissionError" in denied.stderr
    assert (
        as_process(running.pid("executor"), running.python, READ_FILE, sandbox, env=running.env).returncode
        == 0
    )
    refused = as_process(
        assistant,
        running.python,
        CONNECT,
        str(running.path(f"/run/{name}-executor/executor.sock")),
        env=running.env,
    )
    assert refused.returncode != 0 and "PermissionError" in refused.stderr
    approval = str(running.path(f"/run/{name}-assistant/approval.sock"))  # its link, as in its unit
    reached = as_process(assistant, running.python, CONNECT, approval, env=running.env)
    assert reached.returncode == 0, reached.stderr


@needs_root
def test_the_assistants_process_cannot_modify_the_store_while_the_executors_and_approval_webs_can(
    running: Running,
):
    name = running.name
    store = running.path(f"/var/lib/{name}/store")
    db = store / "fleetwatch.db"
    denied = as_process(running.pid("assistant"), running.python, WRITE_STORE, str(db), env=running.env)
    assert denied.stdout.split() == ["PermissionError", "OperationalError"], denied.stderr
    for program in ("executor", "approval_web"):
        allowed = as_process(running.pid(program), running.python, WRITE_STORE, str(db), env=running.env)
        assert allowed.stdout.split() == ["ok", "ok"], (program, allowed.stderr)
    for path, mode in ((store, 0o2770), (db, 0o660), (Path(f"{db}-wal"), 0o660), (Path(f"{db}-shm"), 0o660)):
        info = path.stat()  # the -wal and -shm belong to the service that made them, in the store's group
        assert (grp.getgrgid(info.st_gid).gr_name, stat.S_IMODE(info.st_mode)) == (name, mode), path
    assert (store.stat().st_uid, db.stat().st_uid) == (0, 0)  # root's: no service may chmod them


@needs_root
async def test_doctor_calls_the_fence_os_level(running: Running):
    run = await doctor(running.env)
    level = run.check("fence level")
    assert level["level"] == "OK" and level["message"].startswith("OS-level, separate users"), level
    assert run.check("service executor")["level"] == "OK"
    assert run.status == 0, (run.stderr, run.failures())


@needs_root
def test_down_stops_every_program_and_removes_the_runtime_folders(running: Running):
    pids = [running.pid(program) for program in (*PROGRAMS, "lab", "model")]
    stopped = running.fleetwatch("down")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    assert all(gone(pid) for pid in pids)
    assert not running.path(f"/run/{running.name}/supervisord.pid").exists()
    assert not any(running.path(f"/run/{running.name}-{short}").exists() for short in PROGRAMS.values())
