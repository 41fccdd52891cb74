"""``fleetwatch up`` as root with deploy/install.sh's users and settings, for the tests that look
at the running OS-user deployment under supervisord: a scratch root, real users under a unique
name (removed after), the lab in demo mode on free ports, and helpers to act as a running
service's process credentials or as a person's user."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from services.lab.scenario import load_scenario
from tests.deploy.systemd_units import (
    Scratch,
    can_make_users,
    environment_file,
    remove_users,
    render,
    service_python,
    unique_name,
)
from tests.support import demo_ports

PROGRAMS = {"executor": "executor", "approval_web": "web", "assistant": "assistant"}


@dataclass
class Running:
    root: Path
    name: str
    python: str
    env: dict[str, str]
    up: subprocess.CompletedProcess[str]
    people: list[str] = field(default_factory=list)
    """Users made by `person` (removed with the rest)."""

    def person(self, suffix: str, *groups: str) -> str:
        """A person's account ``<name>-<suffix>`` (no home, no shell) in `groups` (suffixes of
        install.sh's groups: ``operators``, ``approvers``; ``""`` for the store's group
        ``<name>`` itself); its name."""
        user = f"{self.name}-{suffix}"
        extra = ["-G", ",".join(f"{self.name}-{g}" if g else self.name for g in groups)] if groups else []
        subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", *extra, user],
            check=True,
            capture_output=True,
        )
        self.people.append(user)
        return user

    def as_person(self, user: str, code: str, *args: str, env: dict[str, str] | None = None):
        """Python `code` run as `user` with its groups, the CLI's environment (the wrapper's)."""
        entry = pwd.getpwnam(user)
        return subprocess.run(
            [self.python, "-c", code, *args],
            user=entry.pw_uid,
            group=entry.pw_gid,
            extra_groups=os.getgrouplist(user, entry.pw_gid),
            env=env if env is not None else self.env,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def fleetwatch_as(self, user: str, *args: str) -> subprocess.CompletedProcess[str]:
        """``fleetwatch ARGS`` as `user` (an operator at a shell on the server)."""
        return self.as_person(
            user, "import sys; from services.ctl.main import main; sys.exit(main(sys.argv[1:]))", *args
        )

    def path(self, value: str) -> Path:
        return Path(Scratch(self.root).path(value))

    def fleetwatch(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.python, "-m", "services.ctl.main", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def pid(self, program: str) -> int:
        found = self.running_pid(program)
        assert found is not None, f"{program} is not running"
        return found

    def running_pid(self, program: str) -> int | None:
        """`program`'s pid as supervisord says it (``supervisorctl pid``), None when it is not
        running."""
        config = self.path(f"/run/{self.name}/supervisord.conf")
        out = subprocess.run(
            [self.python, "-m", "supervisor.supervisorctl", "-c", str(config), "pid", program],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else None


def status_of(pid: int) -> dict[str, list[str]]:
    """``/proc/<pid>/status`` as ``{field: values}``."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: rest.split() for key, _, rest in (line.partition(":") for line in lines)}


def gone(pid: int) -> bool:
    """No such process, or a zombie waiting for an init that does not reap."""
    try:
        return status_of(pid)["State"][0] == "Z"
    except FileNotFoundError:
        return True


def as_process(pid: int, python: str, code: str, *args: str, env: dict[str, str]):
    """Run Python `code` with the uid, gid and groups the running process `pid` has."""
    status = status_of(pid)
    return subprocess.run(
        [python, "-c", code, *args],
        user=int(status["Uid"][0]),
        group=int(status["Gid"][0]),
        extra_groups=[int(g) for g in status["Groups"]],
        env={"PATH": "/usr/bin:/bin", **{k: v for k, v in env.items() if k == "PYTHONPATH"}},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@contextlib.contextmanager
def supervised(more: Callable[[Mapping[str, str]], Mapping[str, str]] | None = None) -> Iterator[Running]:
    """install.sh in a scratch root, then ``fleetwatch up`` as root (demo mode, free ports), in
    an environment that `more` (given it) adds to; ``down``, the root and the users removed at
    the end."""
    if not can_make_users():
        pytest.skip("needs root and useradd (CI runs as root)")
    found = service_python()
    if found is None:
        pytest.skip("no Python with Fleetwatch installed that a service user may run")
    python, extra = found
    root = Path(tempfile.mkdtemp(prefix="fw-supervisord-"))
    os.chmod(root, 0o701)  # the service users traverse it, as they would /
    name = unique_name()
    scratch = Scratch(root)
    try:
        installed = render(root, name, python, users=True)
        assert installed.returncode == 0, installed.stderr
        # The store drifted (restored from a backup, say): `up` puts its modes back first.
        os.chmod(root / "var" / "lib" / name / "store" / "fleetwatch.db", 0o600)
        env = {k: scratch.path(v) for k, v in environment_file(root / "etc" / name / f"{name}.env").items()}
        sandbox = load_scenario("campus").teams.sandbox
        env.update(  # the wrapper's runtime folder; the fence; the lab on free ports (demo mode)
            extra,
            FLEETWATCH_WRITE_DEVICE_IDS=",".join(device.id for _, device in sandbox.devices()),
            PATH="/usr/bin:/bin",
            HOME=str(root),
            FLEETWATCH_RUNTIME_DIR=str(root / "run" / name),
            FLEETWATCH_LOG_LEVEL="WARNING",
        )
        env.update(demo_ports())
        if more is not None:
            env.update(more(env))
        running = Running(root, name, python, env, subprocess.CompletedProcess([], 0))
        try:
            running.up = running.fleetwatch("up")
            assert running.up.returncode == 0, running.up.stdout + running.up.stderr
            yield running
        finally:
            running.fleetwatch("down")
            for user in running.people:
                subprocess.run(["userdel", user], capture_output=True, check=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        remove_users(name)
