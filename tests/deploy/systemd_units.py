"""Reading systemd unit files and tmpfiles lines the way systemd does (the parts our units use),
rendering them with ``deploy/install.sh``, and a small emulation of what systemd does before it
starts a unit (folders, owners, environment) so tests can run the real services as the units'
users without systemd."""

from __future__ import annotations

import grp
import os
import pwd
import secrets
import shlex
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "deploy" / "install.sh"
UNITS = ("executor", "approval-web", "assistant")


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """``{section: [(key, value), ...]}`` in file order; repeated keys kept (systemd appends)."""
    sections: dict[str, list[tuple[str, str]]] = defaultdict(list)
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, sep, value = line.partition("=")
        assert sep, f"not a key=value line: {raw!r}"
        sections[section].append((key.strip(), value.strip()))
    return dict(sections)


def values(unit: dict[str, list[tuple[str, str]]], section: str, key: str) -> list[str]:
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit: dict[str, list[tuple[str, str]]], section: str, key: str) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"{section}.{key}: {found}"
    return found[0]


def command(value: str) -> list[str]:
    """An Exec*= line as argv: systemd's prefixes dropped, ``$$`` unescaped, quotes honoured."""
    return [arg.replace("$$", "$") for arg in shlex.split(value.lstrip("-+@!:"))]


def environment_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of an EnvironmentFile (comments and blank lines skipped)."""
    env = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip().strip('"')
    return env


def render(root: Path, name: str, python: str, *, users: bool) -> subprocess.CompletedProcess[str]:
    """Run ``deploy/install.sh --root root --name name --python python [--no-users]``."""
    args = ["sh", str(INSTALL), "--root", str(root), "--name", name, "--python", python]
    if not users:
        args.append("--no-users")
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def unit_path(root: Path, name: str, unit: str) -> Path:
    return root / "etc" / "systemd" / "system" / f"{name}-{unit}.service"


# --- emulating systemd's start of a unit --------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    """What systemd would run for a unit: as whom, with what, after which preparations."""

    user: str
    group: str
    extra_groups: tuple[str, ...]
    umask: int
    env: dict[str, str]
    pre: tuple[tuple[str, ...], ...]
    argv: tuple[str, ...]
    runtime_dirs: tuple[Path, ...]
    runtime_mode: int
    state_dirs: tuple[Path, ...]
    state_mode: int
    ready_socket: Path


class Scratch:
    """A scratch root: maps the units' absolute paths (/etc, /var/lib, /run) into it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, value: str) -> str:
        for prefix in ("/etc/", "/var/lib/", "/run/"):
            if value.startswith(prefix):
                return str(self.root) + value
        return value

    def launch(self, unit_file: Path, extra_env: dict[str, str]) -> Launch:
        unit = parse_unit(unit_file.read_text())
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent", **extra_env}
        for assignment in values(unit, "Service", "Environment"):
            key, _, value = assignment.partition("=")
            env[key] = value
        for name in values(unit, "Service", "EnvironmentFile"):  # these override Environment=
            path = Path(self.path(name.lstrip("-")))
            if path.exists():
                env.update(environment_file(path))
        for name in " ".join(values(unit, "Service", "UnsetEnvironment")).split():  # applied last
            env.pop(name, None)
        env = {k: self.path(v) for k, v in env.items()}
        post = command(one(unit, "Service", "ExecStartPost"))
        return Launch(
            user=one(unit, "Service", "User"),
            group=one(unit, "Service", "Group"),
            extra_groups=tuple(" ".join(values(unit, "Service", "SupplementaryGroups")).split()),
            umask=int(one(unit, "Service", "UMask"), 8),
            env=env,
            pre=tuple(
                tuple(self.path(a) for a in command(v)) for v in values(unit, "Service", "ExecStartPre")
            ),
            argv=tuple(self.path(a) for a in command(one(unit, "Service", "ExecStart"))),
            runtime_dirs=tuple(
                self.root / "run" / d for d in one(unit, "Service", "RuntimeDirectory").split()
            ),
            runtime_mode=int(one(unit, "Service", "RuntimeDirectoryMode"), 8),
            state_dirs=tuple(
                self.root / "var" / "lib" / d for d in one(unit, "Service", "StateDirectory").split()
            ),
            state_mode=int(one(unit, "Service", "StateDirectoryMode"), 8),
            ready_socket=Path(self.path(post[-1])),
        )

    def prepare(self, launch: Launch) -> None:
        """What systemd does before ExecStart: runtime and state folders for the unit's user
        and group, with the unit's modes (as root)."""
        uid, gid = pwd.getpwnam(launch.user).pw_uid, grp.getgrnam(launch.group).gr_gid
        for folder, mode in (
            *((d, launch.runtime_mode) for d in launch.runtime_dirs),
            *((d, launch.state_mode) for d in launch.state_dirs),
        ):
            folder.mkdir(parents=True, exist_ok=True)
            os.chown(folder, uid, gid)
            os.chmod(folder, mode)

    def tmpfiles(self, conf: Path) -> None:
        """``d`` and ``L`` lines of a tmpfiles.d file, created under the scratch root."""
        for raw in conf.read_text().splitlines():
            fields = raw.split()
            if not fields or fields[0].startswith("#"):
                continue
            path = Path(self.path(fields[1]))
            if fields[0] == "d":
                path.mkdir(parents=True, exist_ok=True)
                os.chmod(path, int(fields[2], 8))
            elif fields[0] == "L":
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.is_symlink():
                    path.symlink_to(self.path(fields[6]))


def run_as(launch: Launch, argv: list[str] | tuple[str, ...], **kwargs) -> subprocess.CompletedProcess[str]:
    """Run a command as the unit's user, group and supplementary groups, with its umask."""
    return subprocess.run(
        list(argv),
        user=launch.user,
        group=launch.group,
        extra_groups=list(launch.extra_groups),
        umask=launch.umask,
        env=launch.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **kwargs,
    )


def service_python(probe_user: str = "nobody") -> tuple[str, dict[str, str]] | None:
    """An interpreter with Fleetwatch importable that `probe_user` can run, and the extra
    environment it needs: this one if others can run it, else the system's Python of the same
    version with this checkout and its site-packages on PYTHONPATH. None when neither works."""
    site = next(p for p in sys.path if p.endswith("site-packages"))
    candidates = [
        (sys.executable, {}),
        (
            f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}",
            {"PYTHONPATH": f"{REPO}:{site}"},
        ),
    ]
    for python, extra in candidates:
        if not Path(python).exists():
            continue
        try:
            probe = subprocess.run(
                [python, "-c", "import shared.config, services.executor, aiosqlite, msgspec, mcp"],
                user=probe_user,
                env={"PATH": "/usr/bin:/bin", **extra},
                cwd="/",
                capture_output=True,
                timeout=60,
                check=False,
            )
        except PermissionError:  # this user may not even run it
            continue
        if probe.returncode == 0:
            return python, extra
    return None


# --- real users for a test --------------------------------------------------------------------

SERVICE_USERS = ("executor", "web", "assistant")


def unique_name() -> str:
    """A base name no other run uses (users ``<name>-executor``... stay under 32 characters)."""
    return "fwt" + secrets.token_hex(3)


def can_make_users() -> bool:
    return os.geteuid() == 0 and shutil.which("useradd") is not None and shutil.which("groupadd") is not None


def remove_users(name: str) -> None:
    """Delete the users and groups install.sh made for `name` (missing ones are fine)."""
    for user in SERVICE_USERS:
        subprocess.run(["userdel", f"{name}-{user}"], capture_output=True, check=False)
    for group in (name, f"{name}-operators", f"{name}-approvers", *(f"{name}-{u}" for u in SERVICE_USERS)):
        subprocess.run(["groupdel", group], capture_output=True, check=False)
