"""docs/deploy.md's table of what each user and group may and may not do, and how a test tries
each ability as that user (`tests.deploy.probes.CAN`).

Every phrase in the table's "may" and "may not" cells must be one of `ABILITIES`, and each row
names every ability once: the table claims nothing a test does not try. The services are tried
with their running processes' credentials, the groups by a person in that group alone, and
"anyone else on the host" by a person in no Fleetwatch group.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import subprocess
from collections.abc import Callable, Iterator, Mapping

from tests.deploy.probes import CAN
from tests.deploy.systemd_units import REPO
from tests.test_docs_drift import section, table

DEPLOY = (REPO / "docs" / "deploy.md").read_text()
HEADING = "### Who can reach what"

ABILITIES = {
    "read the sandbox token": ("read", "/var/lib/{name}/executor/tokens/sandbox.json"),
    "read the read token": ("read", "/var/lib/{name}/assistant/tokens/read.json"),
    "write the store": ("write_store", "/var/lib/{name}/store/fleetwatch.db"),
    "use `executor.sock`": ("use", "/run/{name}-executor/executor.sock"),
    "use `approval.sock`": ("use", "/run/{name}-web/approval.sock"),
    "use `assistant.sock`": ("use", "/run/{name}-assistant/assistant.sock"),
    "read the approval page's secret": ("read", "/var/lib/{name}/approve/approve-secret"),
    "read the ask page's secret": ("read", "/var/lib/{name}/ask/ask-secret"),
    "read the executor's audit key": ("read", "/var/lib/{name}/executor/keys/executor.key"),
    "read approval_web's audit key": ("read", "/var/lib/{name}/web/keys/approval_web.key"),
}
"""Every phrase the cells may use, and how it is tried, on the paths install.sh makes for
``{name}``."""

SERVICES = ("fleetwatch-executor", "fleetwatch-web", "fleetwatch-assistant")
PEOPLE = {"fleetwatch": "", "fleetwatch-operators": "operators", "fleetwatch-approvers": "approvers"}
"""Each group's row, and the suffix of install.sh's group a person is put in to try it (``""``:
the store's group itself, for the two store writers only; a person in it shows what it gives)."""
ANYONE = "anyone else on the host"


def ability_rows() -> dict[str, tuple[list[str], list[str]]]:
    """The table's rows: who (the first code name in the row, or `ANYONE`) -> (may, may not),
    each a list of phrases (``nothing`` is none)."""

    def phrases(cell: str) -> list[str]:
        return [p.strip() for p in cell.split(";") if p.strip() not in ("", "nothing")]

    rows = {}
    for row in table(section(DEPLOY, HEADING)):
        names = re.findall(r"`([^`]+)`", row[0])
        rows[names[0] if names else row[0]] = (phrases(row[2]), phrases(row[3]))
    return rows


def checks(path_of: Callable[[str], str], name: str) -> str:
    """`CAN`'s argument: each ability with its path for `name` (mapped by `path_of`)."""
    return json.dumps(
        {what: [kind, path_of(path.format(name=name))] for what, (kind, path) in ABILITIES.items()}
    )


def tried(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """`CAN`'s answer: ability -> ``ok`` or why not."""
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def disagreements(found: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """Per row, each ability whose outcome differs from the table's cell: what was found
    (``ok`` where the table says "may not", the reason where it says "may")."""
    rows = ability_rows()
    return {
        who: wrong
        for who, seen in found.items()
        if (wrong := {what: why for what, why in seen.items() if (why == "ok") != (what in rows[who][0])})
    }


@contextlib.contextmanager
def people(name: str) -> Iterator[dict[str, str]]:
    """A person (no home, no shell) for each row of `PEOPLE`, in that group of install.sh's
    under `name` alone, and one in no Fleetwatch group for `ANYONE`: row -> user name. Removed
    at the end."""
    made: dict[str, str] = {}
    try:
        for who, group in (*PEOPLE.items(), (ANYONE, None)):
            user = f"{name}-as-{group or ('store' if group == '' else 'none')}"
            extra = [] if group is None else ["-G", f"{name}-{group}" if group else name]
            subprocess.run(
                ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", *extra, user],
                check=True,
                capture_output=True,
            )
            made[who] = user
        yield made
    finally:
        for user in made.values():
            subprocess.run(["userdel", user], capture_output=True, check=False)


def try_as(user: str, python: str, argument: str, env: Mapping[str, str]) -> dict[str, str]:
    """`CAN` run as `user` (its own groups) with `python` and `env`; its answer."""
    entry = pwd.getpwnam(user)
    done = subprocess.run(
        [python, "-c", CAN, argument],
        user=entry.pw_uid,
        group=entry.pw_gid,
        extra_groups=os.getgrouplist(user, entry.pw_gid),
        env=dict(env),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return tried(done)


__all__ = [
    "ABILITIES",
    "ANYONE",
    "CAN",
    "PEOPLE",
    "SERVICES",
    "ability_rows",
    "checks",
    "disagreements",
    "tried",
]
