"""Running Fleetwatch under supervisord on one account: render, start, wait, stop.

`fleetwatch up` renders ``services/ctl/supervisord.conf`` (package data) into ``$FLEETWATCH_RUNTIME_DIR`` and starts
supervisord; in demo mode (the MCP URL is the embedded lab's) supervisord starts the lab and the
scripted model and, with itself, the executor and approval_web beside it (run with
``--after-executor``: it serves nothing until the executor answers on its socket); `fleetwatch
up` waits for both and starts the assistant once approval_web answers (the readiness order of DESIGN
§2; none needs the lab to start: each reads its sign-in at its first operation), and places the
lab's demo sign-ins in their slots once the lab is ready (the fence is already the sandbox
team's devices). Programs are started and asked about over supervisord's XML-RPC socket (`rpc`), from
this process, without waiting for supervisord's ``startsecs``: readiness is each socket.

Run as root on a machine where ``deploy/install.sh`` made the service users, with its settings
(the ``fleetwatch`` wrapper it installs loads ``/etc/NAME/NAME.env``), each service runs as its
own user (`ServerLayout`: the layout of install.sh and ``deploy/systemd/``), so the fence is
OS-level as under systemd. Otherwise everything runs as the caller (`choose_fence`).

supervisord's ``shutdown`` returns before the daemon exits, so `stop` waits for the pid file to
go before it returns (a restart right after would otherwise find the old daemon).

**Root never writes where a service's user can.** supervisord (root, on a server) keeps its
configuration, pid file and socket in the runtime folder (``/run/NAME``) and every program's log
in ``/var/lib/NAME/logs``: both root's own, refused (`shared.private_files.trusted_folder`)
when any other user could write them or a folder above them. What root must touch in folders
the services write (the store's modes, a token slot placed for a service, a socket folder's
links) it touches through file descriptors, never following a symlink a service could plant
(`shared.private_files`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import grp
import json
import os
import pwd
import re
import shlex
import shutil
import stat
import string
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.ctl import CtlError
from shared.config import SERVICE_LANG, SERVICE_PATH, Settings, service_environment
from shared.errors import Code
from shared.private_files import (
    UnsafePath,
    create_private,
    ensure_folder,
    fix_file,
    private_tree,
    trusted_folder,
    write_private,
)
from shared.text.catalogue import N_, Words, say_text
from shared.text.display import visible

REPO = Path(__file__).resolve().parent.parent.parent
"""The folder the ``services`` package is imported from (a checkout, or site-packages): each
program's working folder."""
TEMPLATE = Path(__file__).resolve().parent / "supervisord.conf"
"""The configuration template, shipped with the package."""
SERVICES = ("executor", "approval_web", "assistant")
"""Ready in this order: each answers on its socket before the next serves (approval_web's
process starts beside the executor's and waits for it: ``--after-executor``)."""

DEMO_MODEL_KEY = "lab-demo-model-key"
"""The key the lab's scripted model accepts in demo mode. Not a secret: it opens nothing real."""

START_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 30.0


class SuperviseError(CtlError):
    """supervisord could not be started, driven or stopped (code `service_unavailable`)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Where supervisord's files live: its configuration, pid file and socket in the runtime
    folder; the programs' logs in ``<state>/logs`` on one account, or in install.sh's root-only
    ``/var/lib/NAME/logs`` on a server (never in the store folder the services write)."""

    run: Path
    logs: Path

    @classmethod
    def of(cls, settings: Settings) -> Layout:
        server = ServerLayout.of(settings)
        logs = server.logs if server is not None else settings.state_dir / "logs"
        return cls(run=settings.runtime_dir, logs=logs)

    @property
    def config(self) -> Path:
        return self.run / "supervisord.conf"

    @property
    def pidfile(self) -> Path:
        return self.run / "supervisord.pid"

    @property
    def socket(self) -> Path:
        """supervisord's own XML-RPC socket (0700, the caller's)."""
        return self.run / "supervisor.sock"

    @property
    def lab_ready(self) -> Path:
        return self.run / "lab.ready"

    @property
    def ports(self) -> Path:
        """While supervisord runs: the port settings ``up --free-ports`` chose (JSON), so a later
        ``up`` in the same home says the pages' real addresses; removed by `stop`."""
        return self.run / "ports.json"


PROGRAMS = ("lab", "model", *SERVICES)
"""Every program of the configuration."""

PROGRAM_WORDS = {
    "lab": N_("the lab"),
    "model": N_("the lab's demo model"),
    "executor": N_("the executor"),
    "approval_web": N_("the approval page"),
    "assistant": N_("the ask page and the wall"),
}
"""Each program of `PROGRAMS`, in words (approval_web and the assistant named by what a
person opens of them)."""

SHORT = {"executor": "executor", "approval_web": "web", "assistant": "assistant"}
"""Service -> the suffix of its user, state folder and runtime folder (``NAME-web``...)."""
SOCKET_NAMES = {"executor": "executor.sock", "approval_web": "approval.sock", "assistant": "assistant.sock"}
LINKS = {"approval_web": ("executor",), "assistant": ("approval_web",)}
"""Service -> the services whose socket it reaches through a link in its runtime folder."""


@dataclass(frozen=True, slots=True)
class ServerLayout:
    """deploy/install.sh's layout for base name `name` under `root` (``/`` on a server, a scratch
    root in tests), as its systemd units use it (deploy/systemd/*.service): users
    ``NAME-executor``, ``NAME-web``, ``NAME-assistant``; state in ``/var/lib/NAME/<short>``
    (0700, the service's own); the store in ``/var/lib/NAME/store`` (group ``NAME``, whose
    members are the executor's and approval_web's users: the assistant's cannot open it);
    sockets in ``/run/NAME-<short>`` (0750, in the group of the one side allowed in: ``NAME-executor`` for
    executor.sock, ``NAME-operators`` for the other two).

    supervisord's ``user=`` gives a program its user's own primary group, not the unit's
    ``Group=``; the runtime folders are therefore setgid (2750), so a socket takes the folder's
    group as it would take the unit's group under systemd.
    """

    root: Path
    name: str

    @classmethod
    def of(cls, settings: Settings) -> ServerLayout | None:
        """The layout whose store is ``FLEETWATCH_STATE_DIR`` (``<root>/var/lib/<name>/store``),
        or None when the settings are not install.sh's."""
        store = settings.state_dir
        lib = store.parent.parent
        if store.name != "store" or lib.name != "lib" or lib.parent.name != "var":
            return None
        return cls(root=lib.parent.parent, name=store.parent.name)

    def user(self, service: str) -> str:
        return f"{self.name}-{SHORT[service]}"

    @property
    def lib(self) -> Path:
        """``/var/lib/NAME`` (root's; each service's own folders and the store are in it)."""
        return self.root / "var" / "lib" / self.name

    @property
    def logs(self) -> Path:
        """supervisord's log folder: ``/var/lib/NAME/logs``, root's only (``0750``)."""
        return self.lib / "logs"

    @property
    def approvers(self) -> str:
        """The group whose members may read the approval page's secret (``NAME-approvers``)."""
        return f"{self.name}-approvers"

    @property
    def operators(self) -> str:
        """The group of the people who use the CLI and ask (``NAME-operators``)."""
        return f"{self.name}-operators"

    @property
    def secret_folders(self) -> dict[str, tuple[Path, str]]:
        """Service -> (the folder its page secret is written to, the group that may read it):
        ``/var/lib/NAME/approve`` (approval_web's, group ``NAME-approvers``) and
        ``/var/lib/NAME/ask`` (the assistant's, group ``NAME-operators``), each ``2750``: the
        service writes the secret ``0640``, the group reads it, nobody else does."""
        return {
            "approval_web": (self.lib / "approve", self.approvers),
            "assistant": (self.lib / "ask", self.operators),
        }

    def socket_group(self, service: str) -> str:
        return f"{self.name}-executor" if service == "executor" else self.operators

    def home(self, service: str) -> Path:
        return self.lib / SHORT[service]

    def runtime(self, service: str) -> Path:
        return self.root / "run" / f"{self.name}-{SHORT[service]}"

    def socket(self, service: str) -> Path:
        return self.runtime(service) / SOCKET_NAMES[service]

    @property
    def store(self) -> Path:
        """The store's folder (``FLEETWATCH_STATE_DIR``)."""
        return self.lib / "store"

    @property
    def approve_secret_file(self) -> Path:
        return self.secret_folders["approval_web"][0] / "approve-secret"

    @property
    def ask_secret_file(self) -> Path:
        return self.secret_folders["assistant"][0] / "ask-secret"

    @property
    def watch_db(self) -> Path:
        """The watch store: the assistant's own file in its own state folder."""
        return self.home("assistant") / "watch.db"

    @property
    def slots(self) -> dict[str, Path]:
        """The token slots install.sh configures: ``{"sandbox": ..., "read": ...}``."""
        return {
            "sandbox": self.home("executor") / "tokens" / "sandbox.json",
            "read": self.home("assistant") / "tokens" / "read.json",
        }

    def environment(self, service: str) -> dict[str, str]:
        """What the service's unit sets over the shared settings (its own folders and files),
        and its ``HOME`` (none: ``/nonexistent``). Which shared settings reach it at all is
        `shared.config.service_settings`' (`program_environment`)."""
        env = {
            "FLEETWATCH_HOME": str(self.home(service)),
            "FLEETWATCH_RUNTIME_DIR": str(self.runtime(service)),
            "HOME": "/nonexistent",
        }
        if service == "approval_web":
            env["FLEETWATCH_APPROVE_SECRET_FILE"] = str(self.approve_secret_file)
        if service == "assistant":
            env["FLEETWATCH_ASK_SECRET_FILE"] = str(self.ask_secret_file)
            env["FLEETWATCH_WATCH_DB"] = str(self.watch_db)
        return env

    def missing(self) -> list[str]:
        """The users, groups and state folders install.sh makes that are not there."""
        users = [self.user(s) for s in SERVICES]
        groups = [self.name, f"{self.name}-executor", self.operators, self.approvers]
        gone = [u for u in users if not _known(pwd.getpwnam, u)]
        gone += [f"group {g}" for g in groups if not _known(grp.getgrnam, g)]
        return gone + [str(self.home(s)) for s in SERVICES if not self.home(s).is_dir()]


def _known(lookup, name: str) -> bool:
    try:
        lookup(name)
    except KeyError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class FenceChoice:
    """How `up` runs the services: `layout` set = one user each (OS-level), else as the caller."""

    layout: ServerLayout | None
    reason: str
    missing: tuple[str, ...] = ()
    """What deploy/install.sh makes that is not there (the reason, when that is it)."""

    def words(self) -> Words:
        """One line, in `fleetwatch doctor`'s words, as catalogue `Words`."""
        if self.layout is None:
            if self.missing:
                return Words.of(
                    N_("process-level, same user (run deploy/install.sh first; missing: %(missing)s)"),
                    missing=", ".join(self.missing),
                )
            return Words.of(N_("process-level, same user (%(reason)s)"), reason=Words.of(self.reason))
        users = ", ".join(self.layout.user(s) for s in SERVICES)
        return Words.of(N_("OS-level, separate users (%(users)s)"), users=users)

    @property
    def description(self) -> str:
        """`words`, in English."""
        return say_text(self.words(), "en", zone=dt.UTC, now=dt.datetime.now(dt.UTC))

    def approve_secret_file(self, settings: Settings) -> Path:
        return self.layout.approve_secret_file if self.layout else settings.approve_secret_file

    def ask_secret_file(self, settings: Settings) -> Path:
        return self.layout.ask_secret_file if self.layout else settings.ask_secret_file


def choose_fence(settings: Settings, euid: int) -> FenceChoice:
    """Separate users when `euid` is root, the settings are install.sh's (`ServerLayout.of`) and
    its users, groups and state folders exist; else the caller's account, with the reason.

    Raises:
        FleetwatchError: `config_invalid` when the store is install.sh's but a token slot is
            not in its service's folder (the fence would not hold).
    """
    layout = ServerLayout.of(settings)
    if layout is None:
        return FenceChoice(None, N_("the settings are not deploy/install.sh's"))
    if euid != 0:
        return FenceChoice(None, N_("not root: supervisord cannot switch users"))
    missing = layout.missing()
    if missing:
        return FenceChoice(
            None, f"run deploy/install.sh first; missing: {', '.join(missing)}", tuple(missing)
        )
    configured = {"sandbox": settings.sandbox_token_file, "read": settings.read_token_file}
    for slot, path in layout.slots.items():
        if configured[slot] != path:
            raise CtlError(
                Code.CONFIG_INVALID,
                Words.of(
                    N_("the %(slot)s token slot %(configured)s is not %(path)s (deploy/install.sh's layout)"),
                    slot=slot,
                    configured=str(configured[slot]),
                    path=str(path),
                ),
            )
    return FenceChoice(layout, "")


def _relink(link: Path, target: Path) -> None:
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


STORE_FILES = ("fleetwatch.db", "fleetwatch.db-wal", "fleetwatch.db-shm")


def _ids(user: str | None, group: str) -> tuple[int, int]:
    return (pwd.getpwnam(user).pw_uid if user else 0), grp.getgrnam(group).gr_gid


def _folder(path: Path, mode: int, user: str | None, group: str) -> None:
    """`path` (in a root-owned parent) a real folder of `user` (None: root) and `group` with
    `mode`, made when missing; never through a symlink."""
    uid, gid = _ids(user, group)
    ensure_folder(path, mode, owner=uid, group=gid)


def prepare_store(layout: ServerLayout) -> None:
    """Put the store as deploy/install.sh and the tmpfiles entry make it: its folder ``2770``
    and the database (created empty if missing) with its -wal and -shm ``0660``, all
    ``root:NAME``, so only the executor's and approval_web's users (the members of ``NAME``)
    can open it. Run as root. The folder is one those users write: each file is changed
    through a descriptor opened without following a symlink, and only when it is a regular
    file with no other hard link (`shared.private_files.fix_file`).

    Raises:
        UnsafePath: a store file is a symlink, not a regular file, or hard-linked elsewhere.
    """
    gid = grp.getgrnam(layout.name).gr_gid
    _folder(layout.store, 0o2770, None, layout.name)
    for name in STORE_FILES:
        fix_file(layout.store, name, uid=0, gid=gid, mode=0o660, create=name == STORE_FILES[0])


def prepare_server(layout: ServerLayout, operators_run: Path) -> None:
    """What systemd and tmpfiles do before the units start: the store's modes and owners
    (`prepare_store`), the page secrets' folders (`ServerLayout.secret_folders`), root's log
    folder (``0750``), fresh runtime folders (2750, the service's user and socket group) with
    their links made before the folder is handed over, and `operators_run` (0755, root) with
    links to the three sockets (the CLI's ``FLEETWATCH_RUNTIME_DIR``). Run as root.

    Raises:
        UnsafePath: a folder root writes in could be changed by another user.
    """
    prepare_store(layout)
    for service, (folder, group) in layout.secret_folders.items():
        _folder(folder, 0o2750, layout.user(service), group)
    _folder(layout.logs, 0o750, None, "root")
    trusted_folder(layout.logs)
    for service in SERVICES:
        folder = layout.runtime(service)
        shutil.rmtree(folder, ignore_errors=True)  # fd-based: never follows a link inside
        folder.mkdir(parents=True)
        folder.chmod(0o2750)
        for other in LINKS.get(service, ()):
            (folder / SOCKET_NAMES[other]).symlink_to(layout.socket(other))
        uid, gid = _ids(layout.user(service), layout.socket_group(service))
        os.chown(folder, uid, gid, follow_symlinks=False)
    _folder(operators_run, 0o755, None, "root")
    trusted_folder(operators_run)
    for service in SERVICES:
        _relink(operators_run / SOCKET_NAMES[service], layout.socket(service))


def private_places(settings: Settings) -> tuple[tuple[Path, tuple[str, ...] | None], ...]:
    """One account's state, as (folder, None: all of it) for the state folder, and (folder,
    names: only those files) for a store or a page secret set outside it: nobody but the
    account may open them (`shared.private_files.private_tree`)."""
    places: dict[Path, tuple[str, ...] | None] = {settings.state_dir: None}
    files = [*(f"{db}{end}" for db in (settings.db, settings.watch_db) for end in ("", "-wal", "-shm"))]
    files += [str(settings.approve_secret_file), str(settings.ask_secret_file)]
    for file in map(Path, files):
        if not file.is_relative_to(settings.state_dir):
            places[file.parent] = (*(places.get(file.parent) or ()), file.name)
    return tuple(places.items())


def account_modes(settings: Settings, *, fix: bool) -> list[tuple[Path, int, int]]:
    """On one account, what of its state another local user could open (`private_places`),
    as ``(path, mode, most allowed)``; with `fix`, put right by descriptor: folders ``0700``,
    files ``0600`` (``2750``/``0640`` in a setgid folder its group reads).

    Raises:
        UnsafePath: a state folder's path crosses a symlink another user owns.
    """
    return [
        entry
        for folder, only in private_places(settings)
        for entry in private_tree(folder, fix=fix, only=only)
    ]


def clear_server(layout: ServerLayout) -> None:
    """Remove the runtime folders (as systemd does when a unit stops)."""
    for service in SERVICES:
        shutil.rmtree(layout.runtime(service), ignore_errors=True)


INTERPRETER = ("PYTHONPATH",)
"""The caller's variables a program keeps, when set: where its interpreter finds Fleetwatch and
its libraries (the programs run the code `up` runs). Nothing else of the caller's passes."""


def daemon_environment(env: Mapping[str, str]) -> dict[str, str]:
    """supervisord's own environment: `SERVICE_PATH`, `SERVICE_LANG` and `INTERPRETER`. Every
    program inherits it (a program's ``environment=`` only adds), so it holds no setting and
    nothing else of the caller's `env`."""
    kept = {name: env[name] for name in INTERPRETER if env.get(name)}
    return {"PATH": SERVICE_PATH, "LANG": SERVICE_LANG, **kept}


def program_environment(
    settings: Settings, env: Mapping[str, str], program: str, server: ServerLayout | None
) -> dict[str, str]:
    """Exactly what `program` runs with besides supervisord's ``SUPERVISOR_*`` names: a service
    gets its own settings from the caller's `env` (`shared.config.service_environment`, the
    allowlist the systemd units hold too), its `FLEETWATCH_HOME` pinned to `settings`' and, with
    `server`, its unit's own folders and ``HOME=/nonexistent``; the lab and the scripted model
    get no setting but their `FLEETWATCH_HOME` (read by nothing in them: it names whose they
    are to a later ``up`` that finds their port taken, `shared.web.port_holder`). All get
    `daemon_environment`."""
    home = "/nonexistent" if server is not None else env.get("HOME") or str(settings.home)
    base = {**daemon_environment(env), "HOME": home, "FLEETWATCH_HOME": str(settings.home)}
    if program not in SERVICES:
        return base
    own = service_environment(program, env, home=home)
    own["FLEETWATCH_HOME"] = str(settings.home)
    if server is not None:
        own.update(server.environment(program))
    return {**base, **own}


def environment_line(env: Mapping[str, str]) -> str:
    """`env` as supervisord's ``environment=`` line: each value in double quotes, ``%`` doubled.

    Raises:
        SuperviseError: ``config_invalid`` naming the variable (never its value) when a value
            cannot stand in that line as itself (a double quote, a line break, a ``;`` or ``#``
            after a space, a single quote at either end).
    """
    for name, value in env.items():
        if (
            any(c in value for c in '"\r\n')
            or re.search(r"\s[;#]", value)
            or value.startswith("'")
            or value.endswith("'")
        ):
            raise SuperviseError(
                Code.CONFIG_INVALID,
                Words.of(
                    N_(
                        "%(name)s cannot be passed to a program by supervisord (quotes, a line break, or ; or # after a space)"
                    ),
                    name=name,
                ),
            )
    pairs = ",".join(f'{name}="{value.replace("%", "%%")}"' for name, value in env.items())
    return f"environment={pairs}"


def program_lines(
    settings: Settings, env: Mapping[str, str], program: str, server: ServerLayout | None
) -> str:
    """The supervisord lines of `program`'s account and environment: with `server`, a service
    runs as its own user with umask 077; every program gets `program_environment`."""
    line = environment_line(program_environment(settings, env, program, server))
    if server is None or program not in SERVICES:
        return line
    return f"user={server.user(program)}\numask=077\n{line}"


def is_demo(settings: Settings) -> bool:
    """True when the MCP URL is the embedded lab's (so `up` also runs the lab)."""
    return settings.epiphan_mcp_url.rstrip("/") == f"http://127.0.0.1:{settings.lab_port}/mcp"


def lab_options(capture: Path | None) -> str:
    """The lab's options beyond its scenario and port: ``--capture DIR`` (absolute, quoted as
    supervisord splits a command) to serve a capture as the normal team; empty without one."""
    return f" --capture {shlex.quote(str(capture.resolve()))}" if capture is not None else ""


def lab_command(config: str) -> str | None:
    """The lab's ``command=`` line in a rendered configuration `config` (None without one): what
    tells a running lab's scenario and capture from the ones asked for."""
    section = config.partition("[program:lab]")[2]
    return next((line for line in section.splitlines() if line.startswith("command=")), None)


def render_config(
    settings: Settings,
    env: Mapping[str, str],
    *,
    scenario: str = "campus",
    python: str = sys.executable,
    server: ServerLayout | None = None,
    capture: Path | None = None,
) -> str:
    """The supervisord configuration for these settings: each program's environment, from the
    caller's `env`, is `program_environment` (a service's secrets in its own lines only: the
    file is written 0600 in a folder only the caller opens); with `server`, each service runs
    as its own user in that layout; with `capture`, the lab serves that capture folder as its
    normal team (`lab_options`).

    Raises:
        SuperviseError: ``config_invalid`` when a value cannot be passed (`environment_line`).
    """
    layout = Layout.of(settings)
    fields = {
        "run": str(layout.run),
        "logs": str(layout.logs),
        "repo": str(REPO),
        "python": python,
        "scenario": scenario,
        "lab_options": lab_options(capture),
        "lab_port": str(settings.lab_port),
        "model_port": str(settings.model_standin_port),
        "demo": "true" if is_demo(settings) else "false",
        "umask": "022" if server is not None else "077",
        "model_key": DEMO_MODEL_KEY,
        **{f"{program}_lines": program_lines(settings, env, program, server) for program in PROGRAMS},
    }
    return string.Template(TEMPLATE.read_text()).substitute(fields)


async def _run(
    what: str, *argv: str, env: Mapping[str, str] | None = None, timeout_seconds: float = 30.0
) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(env) if env is not None else None,
    )
    try:
        async with asyncio.timeout(timeout_seconds):
            out, _ = await process.communicate()
    except TimeoutError as exc:
        process.kill()
        await process.wait()
        raise SuperviseError(
            Code.SERVICE_UNAVAILABLE,
            Words.of(N_("%(what)s did not finish in %(s)s s"), what=what, s=f"{timeout_seconds:g}"),
        ) from exc
    return process.returncode or 0, out.decode(errors="replace")


RPC_TIMEOUT_SECONDS = 30.0
"""Bound on one XML-RPC call to supervisord (connecting, sending, its answer)."""


async def rpc(settings: Settings, method: str, *params: object) -> Any:
    """One call of supervisord's XML-RPC interface (``supervisor.getAllProcessInfo``...) over its
    unix socket, in this process (no ``supervisorctl`` to start), with the standard library's
    `xmlrpc.client` over an HTTP connection to that socket (supervisor's own client transport
    imports its HTTP server with it: 40-80 ms a command paid for nothing, issue 14). The
    library is blocking, so the call runs in a thread.

    Raises:
        SuperviseError: supervisord did not answer, or answered with a fault.
    """
    import http.client  # with xmlrpc and email: only the commands that drive supervisord
    import socket
    import xmlrpc.client

    path = str(Layout.of(settings).socket)

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(RPC_TIMEOUT_SECONDS)
            self.sock.connect(path)

    class UnixTransport(xmlrpc.client.Transport):
        def make_connection(self, host: Any) -> http.client.HTTPConnection:
            self._connection = host, UnixConnection("localhost")
            return self._connection[1]

        def request(self, host: Any, handler: str, request_body: bytes, verbose: bool = False) -> Any:
            # Sent once, as supervisor's own transport does: the standard one sends a request
            # again on a connection that closed (a second startProcess, a second shutdown).
            return self.single_request(host, handler, request_body, verbose)

    def call() -> Any:
        transport = UnixTransport()
        try:
            proxy = xmlrpc.client.ServerProxy("http://localhost/RPC2", transport=transport)
            return functools.reduce(getattr, method.split("."), proxy)(*params)
        finally:
            transport.close()  # one connection per call

    try:
        return await asyncio.to_thread(call)
    except xmlrpc.client.Fault as exc:
        raise SuperviseError(Code.SERVICE_UNAVAILABLE, f"supervisord: {method}: {exc.faultString}") from exc
    except (OSError, xmlrpc.client.ProtocolError, http.client.HTTPException) as exc:
        raise SuperviseError(
            Code.SERVICE_UNAVAILABLE, Words.of(N_("supervisord does not answer: %(why)s"), why=str(exc))
        ) from exc


async def process_infos(settings: Settings) -> list[dict[str, Any]]:
    """supervisord's ``getAllProcessInfo``: one mapping per program (``name``, ``statename``,
    ``pid``, ``start``/``stop`` in Unix seconds, ``exitstatus``, ``description``...).

    Raises:
        SuperviseError: ``service_unavailable`` when supervisord does not answer.
    """
    return list(await rpc(settings, "supervisor.getAllProcessInfo"))


def running_pid(settings: Settings) -> int | None:
    """The pid of this home's supervisord when it is alive, else None."""
    try:
        pid = int(Layout.of(settings).pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def chosen_ports(settings: Settings) -> dict[str, str]:
    """The port settings ``up --free-ports`` chose for this home's running services
    (`Layout.ports`: ``{"FLEETWATCH_ASK_PORT": "39121"}``); empty when no supervisord runs here or
    it chose none (or its file cannot be read)."""
    if running_pid(settings) is None:
        return {}
    try:
        chosen = json.loads(Layout.of(settings).ports.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in chosen.items()} if isinstance(chosen, dict) else {}


POLL_SECONDS = 0.02
"""How often `wait_until` looks again at a process getting ready."""


async def wait_until(predicate, what: str | Words, timeout_seconds: float) -> None:
    """Poll ``predicate()`` (a real external process is on the other side) until true.

    Raises:
        SuperviseError: still false after ``timeout_seconds``.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_seconds
    while not await predicate():
        if loop.time() > deadline:
            raise SuperviseError(
                Code.SERVICE_UNAVAILABLE,
                Words.of(N_("%(what)s not ready after %(s)s s"), what=what, s=f"{timeout_seconds:g}"),
            )
        await asyncio.sleep(POLL_SECONDS)


async def socket_answers(path: Path) -> bool:
    """True when a Unix socket accepts a connection."""
    try:
        _, writer = await asyncio.open_unix_connection(str(path))
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


def _refusing(exc: UnsafePath) -> SuperviseError:
    """`exc` as `start_daemon`'s refusal (``unsafe_path``), in the operator's words."""
    why = Words.of(exc.template or exc.message, path=str(exc.path), problem=Words.of(exc.params["problem"]))
    return SuperviseError(Code.UNSAFE_PATH, Words.of(N_("refusing to start supervisord: %(why)s"), why=why))


async def start_daemon(
    settings: Settings,
    env: Mapping[str, str],
    *,
    scenario: str,
    server: ServerLayout | None = None,
    capture: Path | None = None,
) -> Layout:
    """Render the config and start supervisord (idempotent: an alive daemon is kept); with
    `server`, prepare its runtime folders first (`prepare_server`); `capture`: `render_config`'s.

    Raises:
        SuperviseError: supervisord did not start, or (with `server`) the services already run.
    """
    layout = Layout.of(settings)
    folders = (layout.run,) if server is not None else (layout.run, layout.logs, settings.state_dir)
    for folder in folders:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if server is None:
        try:
            account_modes(settings, fix=True)
            # supervisord opens its own log before it takes its umask: made 0600 first.
            create_private(layout.logs / "supervisord.log", b"")
        except UnsafePath as exc:
            raise _refusing(exc) from exc
    if running_pid(settings) is not None:
        return layout
    try:
        if server is not None:
            if await socket_answers(server.socket("approval_web")):  # root is an operator there
                raise SuperviseError(
                    Code.SERVICE_UNAVAILABLE,
                    Words.of(
                        N_("%(socket)s answers: the services already run (systemd?)"),
                        socket=str(server.socket("approval_web")),
                    ),
                )
            prepare_server(server, layout.run)
        for folder in (layout.run, layout.logs):  # supervisord writes here as the caller (root)
            trusted_folder(folder)
    except UnsafePath as exc:
        raise _refusing(exc) from exc
    layout.lab_ready.unlink(missing_ok=True)
    write_private(
        layout.config,
        render_config(settings, env, scenario=scenario, server=server, capture=capture).encode(),
    )
    status, out = await _run(
        "supervisord",
        sys.executable,
        "-m",
        "supervisor.supervisord",
        "-c",
        str(layout.config),
        env=daemon_environment(env),
        timeout_seconds=START_TIMEOUT_SECONDS,
    )
    if status != 0:
        raise SuperviseError(
            Code.SERVICE_UNAVAILABLE,
            Words.of(N_("supervisord did not start: %(output)s"), output=out.strip()[-300:]),
        )

    async def alive() -> bool:
        return running_pid(settings) is not None

    await wait_until(alive, "supervisord", START_TIMEOUT_SECONDS)
    return layout


async def socket_ready(path: Path) -> bool:
    """True when `path` is a socket with its final mode (serve_unix sets 0660 once it listens).
    Used for sockets whose peer check would refuse, and audit, a connection from root."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o660


GONE = frozenset({"EXITED", "FATAL", "BACKOFF", "STOPPED"})
"""supervisord's states of a program that is not (or no longer) running."""


async def launch(settings: Settings, name: str) -> bool:
    """Have supervisord start one program and return at once (readiness is the caller's to
    wait for, by socket: `wait_ready`); a program already running is left as it is. True when
    this call started it."""
    info = await rpc(settings, "supervisor.getProcessInfo", name)
    if info["statename"] in ("RUNNING", "STARTING"):
        return False
    await rpc(settings, "supervisor.startProcess", name, False)
    return True


async def wait_ready(settings: Settings, name: str, socket: Path, *, probe=socket_answers) -> None:
    """Wait until `probe(socket)` is true (by default: the socket answers).

    Raises:
        SuperviseError: the program stopped first (its log says why), or it was not ready in
            `START_TIMEOUT_SECONDS`.
    """

    async def answers() -> bool:
        if await probe(socket):
            return True
        if (await rpc(settings, "supervisor.getProcessInfo", name))["statename"] in GONE:
            log = Layout.of(settings).logs / f"{name}.log"
            raise SuperviseError(
                Code.SERVICE_UNAVAILABLE,
                Words.of(
                    N_("%(program)s did not start: %(why)s (its log: %(log)s)"),
                    program=Words.of(PROGRAM_WORDS[name]),
                    why=last_line(log) or "?",
                    log=str(log),
                ),
            )
        return False

    await wait_until(answers, Words.of(PROGRAM_WORDS[name]), START_TIMEOUT_SECONDS)


def last_line(log: Path, limit: int = 4096) -> str | None:
    """The last line a program wrote to its log (its own words, made visible and cut to 300
    characters), or None when there is none to read."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - limit))
            tail = handle.read().decode(errors="replace")
    except OSError:
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return visible(lines[-1], 300) if lines else None


async def running_programs(settings: Settings) -> frozenset[str]:
    """The programs this home's supervisord runs (``RUNNING`` or ``STARTING``).

    Raises:
        SuperviseError: ``service_unavailable`` when supervisord does not answer.
    """
    return frozenset(
        info["name"] for info in await process_infos(settings) if info["statename"] in ("RUNNING", "STARTING")
    )


async def start_service(settings: Settings, name: str, socket: Path, *, probe=socket_answers) -> None:
    """Start one service and wait until `probe(socket)` is true (by default: it answers)."""
    if await probe(socket):
        return
    await launch(settings, name)
    await wait_ready(settings, name, socket, probe=probe)


async def stop(settings: Settings) -> bool:
    """Shut supervisord down, wait for its pid file to go, then remove its configuration (it
    held the services' settings, secrets included: `render_config`). False when it was not
    running."""
    pid = running_pid(settings)
    if pid is None:
        return False
    await rpc(settings, "supervisor.shutdown")

    async def gone() -> bool:
        return running_pid(settings) is None

    await wait_until(gone, Words.of(N_("supervisord's shutdown")), STOP_TIMEOUT_SECONDS)
    Layout.of(settings).config.unlink(missing_ok=True)
    Layout.of(settings).ports.unlink(missing_ok=True)
    return True
