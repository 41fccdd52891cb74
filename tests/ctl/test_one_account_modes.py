"""On one account (``fleetwatch up`` as a normal user), no other local user can read the state
(issue 24, item 10): state folders 0700, the stores, their -wal/-shm and the secrets 0600, at
creation and put back by ``up``; ``doctor`` names a wrong mode. Real users under unique names:
the owner runs ``up``, a second user tries to read every file."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.lab.scenario import load_scenario
from tests.deploy.systemd_units import can_make_users, service_python, unique_name
from tests.support import demo_ports

pytestmark = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")


def make_user(name: str, home: Path | None = None) -> pwd.struct_passwd:
    extra = ["--home-dir", str(home)] if home else ["--no-create-home"]
    subprocess.run(["useradd", *extra, "--shell", "/usr/sbin/nologin", name], check=True, capture_output=True)
    return pwd.getpwnam(name)


@dataclass
class OneAccount:
    owner: pwd.struct_passwd
    other: pwd.struct_passwd
    python: str
    env: dict[str, str]
    state: Path

    def run(self, user: pwd.struct_passwd, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv),
            user=user.pw_uid,
            group=user.pw_gid,
            extra_groups=[],
            env=self.env,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def fleetwatch(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.owner, self.python, "-m", "services.ctl.main", *args)


@pytest.fixture(scope="module")
def account() -> Iterator[OneAccount]:
    name = unique_name()
    home = Path(tempfile.mkdtemp(prefix="fw-one-account-"))
    os.chmod(home, 0o755)  # noqa: S103 (a home others may look into, as many distributions make)
    try:
        owner = make_user(f"{name}o", home)
        other = make_user(f"{name}x")
        os.chown(home, owner.pw_uid, owner.pw_gid)
        found = service_python(owner.pw_name)
        if found is None:
            pytest.skip("no Python with Fleetwatch installed that another user may run")
        python, extra = found
        sandbox = load_scenario("campus").teams.sandbox
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "FLEETWATCH_HOME": str(home / ".fleetwatch"),
            "FLEETWATCH_LOG_LEVEL": "WARNING",
            "FLEETWATCH_WRITE_DEVICE_IDS": ",".join(device.id for _, device in sandbox.devices()),
            **extra,
            **demo_ports(),
        }
        setup = OneAccount(owner, other, python, env, home / ".fleetwatch" / "state")
        # An older Fleetwatch left the state open to everyone: `up` must put it right.
        setup.state.mkdir(parents=True)
        (setup.state / "fleetwatch.db").touch()
        for path in (home / ".fleetwatch", setup.state, setup.state / "fleetwatch.db"):
            os.chown(path, owner.pw_uid, owner.pw_gid)
            os.chmod(path, 0o755 if path.is_dir() else 0o644)  # noqa: S103 (the drift under test)
        try:
            up = setup.fleetwatch("up")
            assert up.returncode == 0, up.stdout + up.stderr
            yield setup
        finally:
            setup.fleetwatch("down")
    finally:
        for user in (f"{name}o", f"{name}x"):
            subprocess.run(["userdel", user], capture_output=True, check=False)
        shutil.rmtree(home, ignore_errors=True)


def entries(top: Path) -> list[Path]:
    found = [top]
    for folder, folders, files in os.walk(top):
        found += [Path(folder) / n for n in (*folders, *files)]
    return found


READ_EACH = """
import os, sys
readable = []
for path in sys.argv[1:]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        continue
    os.close(fd)
    readable.append(path)
print("\\n".join(readable))
"""


def test_another_local_user_reads_nothing_of_the_state(account: OneAccount):
    every = entries(account.state)
    names = {p.name for p in every}
    assert {"fleetwatch.db", "fleetwatch.db-wal", "watch.db", "approve-secret"} <= names, names
    tried = account.run(account.other, account.python, "-c", READ_EACH, *map(str, every))
    assert tried.returncode == 0, tried.stderr
    assert tried.stdout.strip() == ""
    for path in every:
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            assert stat.S_IMODE(info.st_mode) == 0o700, path
        elif stat.S_ISREG(info.st_mode):
            assert stat.S_IMODE(info.st_mode) == 0o600, path


def test_doctor_names_a_wrong_mode_and_up_puts_it_back(account: OneAccount):
    db = account.state / "fleetwatch.db"
    os.chmod(account.state, 0o755)  # noqa: S103 (the drift under test)
    os.chmod(db, 0o644)
    try:
        report = json.loads(account.fleetwatch("doctor", "--json").stdout)
        said = [c for c in report["checks"] if c["name"] == "state modes"]
        assert len(said) == 1 and said[0]["level"] == "FAIL", report["checks"]
        assert str(db) in said[0]["message"] and "644" in said[0]["message"], said
        assert str(account.state) in said[0]["message"] and "755" in said[0]["message"], said
        again = account.fleetwatch("up")
        assert again.returncode == 0, again.stdout + again.stderr
        assert (stat.S_IMODE(account.state.stat().st_mode), stat.S_IMODE(db.stat().st_mode)) == (0o700, 0o600)
        report = json.loads(account.fleetwatch("doctor", "--json").stdout)
        assert [c["level"] for c in report["checks"] if c["name"] == "state modes"] == ["OK"], report
    finally:
        os.chmod(account.state, 0o700)
        os.chmod(db, 0o600)
