"""Another local user, for the pages' fence tests (root only): ``fw-other``, made on first use,
in no Fleetwatch group (not ``nobody``: its uid is the overflow id 65534, which Fleetwatch never
admits, so a test of another user's session or request would pass for the wrong reason), running the standard library's Python (`python_for`) to squat a loopback port
(`squatting`) or send one HTTP request (`request_as`)."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to run a process as another user (CI runs as root)"
)

SQUAT = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family)
if family == socket.AF_INET6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen()
print("listening", s.getsockname()[1], flush=True)
sys.stdin.readline()
"""
"""Listen on argv[1]:argv[2] (0: any port), say so with the port, hold it until stdin has a line."""

REQUEST = """
import http.client, json, sys
asked = json.loads(sys.argv[1])
for _ in range(asked["times"]):
    conn = http.client.HTTPConnection(asked["host"], asked["port"], timeout=60)
    conn.request(asked["method"], asked["path"], body=asked.get("body"), headers=asked["headers"])
    answer = conn.getresponse()
    body = answer.read().decode()
    conn.close()
print(json.dumps({"status": answer.status, "headers": dict(answer.getheaders()), "body": body}))
"""
"""Send the request described by the JSON in argv[1] ``times`` times, one after another; print
the last answer as JSON."""


OTHER_USER = "fw-other"


def other_user() -> pwd.struct_passwd:
    """``fw-other``: a real user in no Fleetwatch group, made with ``useradd`` when missing (root
    only; several test workers may race to make it: whoever loses finds it made)."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(OTHER_USER)
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER],
        capture_output=True,
        check=False,
    )
    return pwd.getpwnam(OTHER_USER)


def python_for(user: pwd.struct_passwd) -> str:
    """A Python interpreter `user` may run (only the standard library is needed), else skip."""
    for python in (sys.executable, "/usr/bin/python3"):
        try:
            done = subprocess.run(
                [python, "-c", "pass"],
                **as_user(user),
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (PermissionError, FileNotFoundError):
            continue
        if done.returncode == 0:
            return python
    pytest.skip(f"no Python that {user.pw_name} may run")


def as_user(user: pwd.struct_passwd) -> dict[str, Any]:
    """``subprocess`` keyword arguments that run a child as `user`, in no supplementary group,
    from ``/``."""
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [], "cwd": "/"}


def python_as(user: pwd.struct_passwd, code: str, *args: str) -> subprocess.Popen[str]:
    """Python `code` with `args`, run by `user` (`as_user`), its stdin and stdout piped as text."""
    return subprocess.Popen(
        [python_for(user), "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        **as_user(user),
    )


@contextlib.contextmanager
def squatting(address: str, port: int = 0) -> Iterator[int]:
    """`other_user` listening on `address`:`port` for the block; yields the port it holds."""
    with python_as(other_user(), SQUAT, address, str(port)) as squatter:
        assert squatter.stdout is not None and squatter.stdin is not None
        line = squatter.stdout.readline().split()  # it listens: an event, not a wait
        assert line and line[0] == "listening", line
        try:
            yield int(line[1])
        finally:
            squatter.stdin.write("done\n")
            squatter.stdin.flush()
            squatter.wait(timeout=30)


def request_as(
    host: str,
    port: int,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: str | None = None,
    *,
    times: int = 1,
) -> dict[str, Any]:
    """An HTTP request sent by `other_user` (`times` times in a row): the last answer's status,
    headers and body."""
    user = other_user()
    asked = {
        "host": host,
        "port": port,
        "method": method,
        "path": path,
        "headers": dict(headers),
        "body": body,
        "times": times,
    }
    done = subprocess.run(
        [python_for(user), "-c", REQUEST, json.dumps(asked)],
        **as_user(user),
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    return json.loads(done.stdout)
