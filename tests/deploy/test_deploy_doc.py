"""docs/deploy.md's tables against what deploy/install.sh makes (real users under a unique
name, a scratch root; CI runs as root): each service user's groups, who is in the store's and
the approvers' groups, and every path's owner, group and mode; and, on the running deployment
(`tests.deploy.conftest.deployed`), what each user and group may and may not do, tried as
that user: each service with its running process's credentials, each group by a person in it
alone, and a stranger for "anyone else"."""

from __future__ import annotations

import grp
import pwd
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.abilities import (
    ABILITIES,
    ANYONE,
    CAN,
    PEOPLE,
    SERVICES,
    ability_rows,
    checks,
    disagreements,
    tried,
)
from tests.deploy.supervised import Running, as_process
from tests.deploy.systemd_units import REPO, can_make_users, remove_users, render, unique_name
from tests.test_docs_drift import section, table

pytestmark = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")
DEPLOY = (REPO / "docs" / "deploy.md").read_text()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    root, name = tmp_path_factory.mktemp("root"), unique_name()
    try:
        done = render(root, name, "/usr/bin/python3", users=True)
        assert done.returncode == 0, done.stderr
        yield root, name
    finally:
        remove_users(name)


def named(text: str, name: str) -> str:
    """A document's ``fleetwatch`` names as install.sh made them under `name`."""
    return re.sub(r"\bfleetwatch(?=[-/:.`\s]|$)", name, text)


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def who_rows() -> dict[str, list[str]]:
    rows = table(section(DEPLOY, "### Who can reach what"))
    return {ticked(row[0])[0]: ticked(row[1]) for row in rows if ticked(row[0])}


def test_each_service_user_is_in_exactly_the_groups_the_table_names(installed):
    _, name = installed
    rows = who_rows()
    for short in ("executor", "web", "assistant"):
        user = f"{name}-{short}"
        groups = subprocess.run(
            ["id", "-nG", user], capture_output=True, text=True, check=True
        ).stdout.split()
        documented = {named(g, name) for g in rows[f"fleetwatch-{short}"]}
        assert set(groups) - {user} == documented, user


def test_the_store_group_holds_only_the_executor_and_approval_web_and_no_service_approves(installed):
    _, name = installed
    rows = who_rows()
    assert {"fleetwatch", "fleetwatch-operators", "fleetwatch-approvers"} <= set(rows)
    assert set(grp.getgrnam(name).gr_mem) == {f"{name}-executor", f"{name}-web"}
    assert grp.getgrnam(f"{name}-approvers").gr_mem == []
    assert grp.getgrnam(f"{name}-operators").gr_mem == [f"{name}-assistant"]


def test_every_path_has_the_owner_group_and_mode_the_table_says(installed):
    root, name = installed
    body = section(DEPLOY, "### Who can reach what")
    rows = table(body[body.index("| path | owner:group | mode | holds |") :])
    assert len(rows) >= 10, "the path table"
    for row in rows:
        path = root / named(ticked(row[0])[0], name).lstrip("/")
        owner, group = named(ticked(row[1])[0], name).split(":")
        mode = int(ticked(row[2])[0], 8)
        info = path.stat()
        found = (
            pwd.getpwuid(info.st_uid).pw_name,
            grp.getgrgid(info.st_gid).gr_name,
            stat.S_IMODE(info.st_mode),
        )
        assert found == (owner, group, mode), path


# --- what each user and group may do, tried ---------------------------------------------------

PROGRAMS = {
    "fleetwatch-executor": "executor",
    "fleetwatch-web": "approval_web",
    "fleetwatch-assistant": "assistant",
}
SUPERVISORD_ONLY = {
    "fleetwatch-web": {
        "use `approval.sock`": "no",
        "use `assistant.sock`": "no",
        "read the ask page's secret": "no",
    }
}
"""Under ``fleetwatch up`` supervisord's ``user=`` runs approval_web with its own user's group,
not the unit's ``fleetwatch-operators`` (the section on supervisord says so): what that group
gives it in the table it then does not have."""


def test_every_phrase_of_the_table_is_one_the_tests_try_and_each_row_names_every_one():
    rows = ability_rows()
    assert set(rows) == {*SERVICES, *PEOPLE, ANYONE}
    for who, (may, may_not) in rows.items():
        assert not set(may) & set(may_not), who
        assert sorted(may + may_not) == sorted(ABILITIES), f"{who}: every ability, once"


def test_under_fleetwatch_up_each_user_and_group_may_do_what_the_table_says(deployed: Running):
    """The supervisord deployment (the systemd one: `tests.deploy.test_fence_users`)."""
    argument = checks(lambda path: str(deployed.path(path)), deployed.name)
    people = {who: deployed.person(f"as-{group or 'store'}", group) for who, group in PEOPLE.items()}
    people[ANYONE] = f"{deployed.name}-stranger"
    found = {}
    for who in ability_rows():
        if who in PROGRAMS:
            pid = deployed.pid(PROGRAMS[who])
            found[who] = tried(as_process(pid, deployed.python, CAN, argument, env=deployed.env))
        else:
            found[who] = tried(deployed.as_person(people[who], CAN, argument))
    wrong = disagreements(found)
    assert {who: {what: "no" for what in w} for who, w in wrong.items()} == SUPERVISORD_ONLY, wrong
