"""Who holds a local port: for `fleetwatch up` and ``demo``, which check every port they will
listen on before anything starts (issue 28).

`taken` binds each port and lets go at once (`shared.web.local_http.taken_at`: both loopbacks
for a page, 127.0.0.1 for the others); a port another socket holds comes back with its
`Holder`: the uid the kernel's TCP tables show (`shared.web.loopback_peer.listener`) and, where
``/proc`` lets this user look, the process holding the socket (its pid and name, never its
command line: that can carry a key), and for another Fleetwatch's
program (`MODULES`) its name and that Fleetwatch's home (its ``FLEETWATCH_HOME``, or the lab's
``--ready-file`` folder). Facts only: the caller says them (``services.ctl.ports``). Nothing
here starts or stops anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from shared.web.local_http import taken_at
from shared.web.loopback_peer import listener

MODULES: Final = {
    "services.lab": "lab",
    "services.lab.model_standin": "model",
    "services.executor": "executor",
    "services.approval_web": "approval_web",
    "services.assistant": "assistant",
}
"""A Fleetwatch program's module (``python -m MODULE``) -> its program name."""


@dataclass(frozen=True, slots=True)
class Port:
    """One port a program listens on: the program (``lab``, ``model``, ``approval_web``,
    ``assistant``), how the operator
    names it (a setting such as ``FLEETWATCH_LAB_PORT``, or an option such as ``--port``), its
    number, and whether it is a page's (127.0.0.1 and [::1]) or 127.0.0.1's only."""

    program: str
    setting: str
    number: int
    both: bool


@dataclass(frozen=True, slots=True)
class Holder:
    """Who listens on a port, as far as this user can see: the uid from the kernel's tables, and
    where ``/proc`` lets this user look, the process (pid and its name, ``/proc/PID/comm``:
    ``python3``; never its command line, which can carry a secret such as ``--key K``), and
    for a Fleetwatch program its name (`MODULES`) and its Fleetwatch's home."""

    uid: int | None = None
    pid: int | None = None
    name: str | None = None
    program: str | None = None
    home: str | None = None


def holder_of(address: str, port: int, proc: Path = Path("/proc")) -> Holder:
    """Who listens on `address`:`port` (`Holder`; all None when the tables do not show it)."""
    found = listener(address, port)
    if found is None:
        return Holder()
    uid, inode = found
    pid = socket_pid(inode, proc) if inode else None
    if pid is None:
        return Holder(uid=uid)
    argv = _read(proc / str(pid) / "cmdline").split("\0")
    program = next(
        (MODULES[argv[i + 1]] for i, a in enumerate(argv[:-1]) if a == "-m" and argv[i + 1] in MODULES),
        None,
    )
    home = _environ(proc / str(pid) / "environ").get("FLEETWATCH_HOME") if program else None
    if program and home is None and "--ready-file" in argv[:-1]:
        ready = Path(argv[argv.index("--ready-file") + 1])
        home = str(ready.parent.parent) if ready.parent.name == "run" else None
    name = _read(proc / str(pid) / "comm").strip() or None
    return Holder(uid=uid, pid=pid, name=name, program=program, home=home)


def socket_pid(inode: int, proc: Path = Path("/proc")) -> int | None:
    """The first process with the socket `inode` open (``/proc/PID/fd``), among those this user
    may look into; None when none is seen."""
    target = f"socket:[{inode}]"
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    return int(entry.name)
            except OSError:
                continue
    return None


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _environ(path: Path) -> dict[str, str]:
    pairs = (item.partition("=") for item in _read(path).split("\0") if "=" in item)
    return {name: value for name, _, value in pairs}


@dataclass(frozen=True, slots=True)
class Taken:
    """A port in use: the `Port`, the loopback it is in use on (as a URL names it), its holder."""

    port: Port
    named: str
    holder: Holder


def taken(ports: Iterable[Port]) -> list[Taken]:
    """The ports of `ports` another socket holds, with their holders (`holder_of`)."""
    out = []
    for port in ports:
        at = taken_at(port.number, both=port.both)
        if at is not None:
            address, named = at
            out.append(Taken(port, named, holder_of(address, port.number)))
    return out
