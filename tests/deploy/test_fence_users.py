"""The fence as OS boundaries: the three services run as the three Linux users install.sh
makes (CI runs as root), each started the way its systemd unit says (user, group,
supplementary groups, umask, environment, runtime and state folders), in a scratch root.

What must hold: the assistant's user cannot read the sandbox token, cannot reach executor.sock,
and a connection it forces anyway (through a group it should not have) is refused by the peer
check with an audit row; it cannot read the page secret; it cannot open or modify the store
(only the executor's and approval_web's users can), so its ``ask`` rows and assistant.sock's
refusals reach the audit through approval.sock; approval_web's user cannot read either token;
and a full approve flow across the three users still makes exactly one write.
The page's own HTTP flow (secret, CSRF, cards) is tested with the page; here approval_web's
user consumes the approval with the store functions the page uses, and sends Execute.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.epiphan.slots import SignIn, write_slot
from shared.wire.approval import AuditRows, AuditTail
from shared.wire.client import request
from shared.wire.protocol import Capabilities, GetCapabilities
from tests.deploy.abilities import CAN, ability_rows, checks, disagreements, people, tried, try_as
from tests.deploy.cli import doctor
from tests.deploy.probes import WRITE_STORE
from tests.deploy.systemd_units import (
    UNITS,
    Launch,
    Scratch,
    can_make_users,
    environment_file,
    remove_users,
    render,
    run_as,
    service_python,
    unique_name,
    unit_path,
)
from tests.support import free_port, wait_for_socket_file

pytestmark = [
    pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)"),
    pytest.mark.asyncio(loop_scope="module"),
]
IDLE = "29088800001"  # a sandbox device of the campus lab, not recording


@dataclass
class Deployment:
    root: Path
    name: str
    lab: LabHandle
    python: str
    launches: dict[str, Launch]
    processes: dict[str, asyncio.subprocess.Process]
    cli_env: dict[str, str]

    def path(self, value: str) -> Path:
        return Path(Scratch(self.root).path(value))

    @property
    def sandbox_slot(self) -> Path:
        return self.path(f"/var/lib/{self.name}/executor/tokens/sandbox.json")

    @property
    def read_slot(self) -> Path:
        return self.path(f"/var/lib/{self.name}/assistant/tokens/read.json")

    def run(
        self, unit: str, code: str, *args: str, extra_groups: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess:
        """Python `code` run as `unit`'s user, groups, umask and environment."""
        launch = self.launches[unit]
        launch = replace(launch, extra_groups=launch.extra_groups + extra_groups)
        return run_as(launch, [self.python, "-c", code, *args], cwd="/")


def configure(env_file: Path, lab: LabHandle) -> None:
    """What an admin edits in fleetwatch.env: Epiphan (here the lab), the fence, ports."""
    settings = {
        "FLEETWATCH_EPIPHAN_MCP_URL": lab.mcp_url,
        "FLEETWATCH_WRITE_TEAM_ID": lab.teams["sandbox"].team_id,
        "FLEETWATCH_WRITE_DEVICE_IDS": ",".join(lab.teams["sandbox"].device_ids),
        "FLEETWATCH_APPROVE_PORT": str(free_port()),
        "FLEETWATCH_ASK_PORT": str(free_port()),
        "FLEETWATCH_LAB_PORT": lab.url.rsplit(":", 1)[1],
        "FLEETWATCH_LOG_LEVEL": "WARNING",
    }
    lines = [ln for ln in env_file.read_text().splitlines() if ln.partition("=")[0] not in settings]
    env_file.write_text("\n".join([*lines, *(f"{k}={v}" for k, v in settings.items())]) + "\n")


async def start(deployment: Deployment, extra: dict[str, str]) -> None:
    """Configure, sign in, and start the three units in order; each process is recorded in
    `deployment` as soon as it exists, so a failure part way still stops it."""
    root, name, lab = deployment.root, deployment.name, deployment.lab
    scratch = Scratch(root)
    configure(root / "etc" / name / f"{name}.env", lab)
    scratch.tmpfiles(root / "etc" / "tmpfiles.d" / f"{name}.conf")
    for path, team in ((deployment.sandbox_slot, "sandbox"), (deployment.read_slot, "normal")):
        t = lab.teams[team]  # written by root, owned by the folder's owner (the service's user)
        write_slot(path, SignIn(t.token, server=lab.mcp_url, team_id=t.team_id, kind="lab"))
    for unit in UNITS:
        launch = scratch.launch(unit_path(root, name, unit), extra)
        deployment.launches[unit] = launch
        scratch.prepare(launch)
        for pre in launch.pre:
            done = run_as(launch, pre, cwd="/")
            assert done.returncode == 0, done.stderr
        log = root / f"{unit}.log"
        with log.open("wb") as sink:
            deployment.processes[unit] = await asyncio.create_subprocess_exec(
                *launch.argv,
                user=launch.user,
                group=launch.group,
                extra_groups=list(launch.extra_groups),
                umask=launch.umask,
                env=launch.env,
                cwd="/",
                stdout=sink,
                stderr=sink,
            )
        await wait_for_socket_file(deployment.processes[unit], launch.ready_socket, log)
    deployment.cli_env = {
        **{k: scratch.path(v) for k, v in environment_file(root / "etc" / name / f"{name}.env").items()},
        "FLEETWATCH_RUNTIME_DIR": str(root / "run" / name),
        "PATH": "/usr/bin:/bin",
    }


async def stop(processes: dict[str, asyncio.subprocess.Process]) -> None:
    """SIGTERM, last started first, then SIGKILL after a bound."""
    for process in reversed(processes.values()):
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deployment() -> AsyncIterator[Deployment]:
    found = service_python()
    if found is None:
        pytest.skip("no Python with Fleetwatch installed that a service user may run")
    python, extra = found
    root = Path(tempfile.mkdtemp(prefix="fw-fence-"))
    os.chmod(root, 0o701)  # the service users traverse it, as they would /
    name = unique_name()
    processes: dict[str, asyncio.subprocess.Process] = {}
    try:
        installed = render(root, name, python, users=True)
        assert installed.returncode == 0, installed.stderr
        async with run_lab("campus") as lab:
            deployment = Deployment(root, name, lab, python, {}, processes, {})
            try:
                await start(deployment, extra)
                yield deployment
            finally:
                await stop(processes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        remove_users(name)


def uid_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("Uid:")).split()[1])


READ_FILE = "import sys; open(sys.argv[1], 'rb').read()"
CONNECT = "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])"


async def test_the_three_services_run_as_three_users_and_doctor_calls_the_fence_os_level(deployment):
    users = {unit: pwd.getpwuid(uid_of(p.pid)).pw_name for unit, p in deployment.processes.items()}
    name = deployment.name
    assert users == {
        "executor": f"{name}-executor",
        "approval-web": f"{name}-web",
        "assistant": f"{name}-assistant",
    }
    run = await doctor(deployment.cli_env)
    level = run.check("fence level")
    assert level["level"] == "OK" and level["message"].startswith("OS-level, separate users"), level
    assert run.check("service executor")["level"] == "OK"  # judged through approval_web's status
    assert run.check("sign-in sandbox")["level"] == "OK" and run.check("sign-in read")["level"] == "OK"
    assert run.status == 0, (run.stderr, run.failures())


async def test_the_assistants_user_cannot_read_the_sandbox_token(deployment):
    denied = deployment.run("assistant", READ_FILE, str(deployment.sandbox_slot))
    assert denied.returncode != 0 and "PermissionError" in denied.stderr
    assert deployment.run("executor", READ_FILE, str(deployment.sandbox_slot)).returncode == 0


async def test_approval_webs_user_cannot_read_either_token(deployment):
    for slot in (deployment.sandbox_slot, deployment.read_slot):
        denied = deployment.run("approval-web", READ_FILE, str(slot))
        assert denied.returncode != 0 and "PermissionError" in denied.stderr
    assert deployment.run("executor", READ_FILE, str(deployment.read_slot)).returncode != 0
    assert deployment.run("assistant", READ_FILE, str(deployment.read_slot)).returncode == 0


async def test_the_assistants_user_cannot_connect_to_executor_sock(deployment):
    name = deployment.name
    for path in (f"/run/{name}-executor/executor.sock", f"/run/{name}/executor.sock"):
        refused = deployment.run("assistant", CONNECT, str(deployment.path(path)))
        assert refused.returncode != 0 and "PermissionError" in refused.stderr
    assert (
        deployment.run(
            "approval-web", CONNECT, str(deployment.path(f"/run/{name}-web/executor.sock"))
        ).returncode
        == 0
    )


FORCED = """
import asyncio, sys
from shared.wire.protocol import GetCapabilities, Capabilities
from shared.wire.client import request
reply = asyncio.run(request(sys.argv[1], GetCapabilities(), Capabilities, timeout_seconds=10))
print(getattr(reply, "code", type(reply).__name__))
"""


async def test_a_connection_the_assistant_forces_is_refused_by_the_peer_check_and_audited(deployment):
    name = deployment.name
    socket_path = deployment.path(f"/run/{name}-executor/executor.sock")
    # As if the assistant's user had been put in the executor's group by mistake:
    forced = deployment.run("assistant", FORCED, str(socket_path), extra_groups=(f"{name}-executor",))
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.strip() == "peer_not_allowed"
    approval_sock = deployment.path(f"/run/{name}/approval.sock")
    tail = await request(
        approval_sock, AuditTail(limit=50), AuditRows, timeout_seconds=10
    )  # root: an operator
    assert isinstance(tail, AuditRows), tail
    assistant_uid = pwd.getpwnam(f"{name}-assistant").pw_uid
    refusals = [
        r
        for r in tail.rows
        if r.kind == "refusal"
        and r.detail.get("code") == "peer_not_allowed"
        and r.detail.get("uid") == assistant_uid
    ]
    assert len(refusals) == 1 and refusals[0].actor == "executor", tail.rows[-5:]


async def test_the_assistants_user_cannot_read_the_page_secret_and_approvers_can(deployment):
    name = deployment.name
    secret = deployment.path(f"/var/lib/{name}/approve/approve-secret")
    info = secret.stat()  # written by approval_web at start (its stdout is not a terminal)
    assert (pwd.getpwuid(info.st_uid).pw_name, grp.getgrgid(info.st_gid).gr_name) == (
        f"{name}-web",
        f"{name}-approvers",
    )
    assert stat.S_IMODE(info.st_mode) == 0o640
    folder = secret.parent.stat()
    assert (grp.getgrgid(folder.st_gid).gr_name, stat.S_IMODE(folder.st_mode)) == (
        f"{name}-approvers",
        0o2750,
    )
    denied = deployment.run("assistant", READ_FILE, str(secret))
    assert denied.returncode != 0 and "PermissionError" in denied.stderr
    approver = deployment.run("assistant", READ_FILE, str(secret), extra_groups=(f"{name}-approvers",))
    assert approver.returncode == 0, approver.stderr  # the group's members read it
    assert set(grp.getgrnam(f"{name}-approvers").gr_mem) == set()  # no service is one


SUBMIT = """
import asyncio, sys
from shared.wire.approval import SubmitProposal, ProposalAccepted
from shared.wire.client import request
proposal = SubmitProposal(
    tool="batch_recording", arguments={"action": "start", "device_ids": [sys.argv[2] + "-1"]},
    reason="fence test", proposed_by="assistant", turn_id="t_" + "f" * 32,
)
reply = asyncio.run(request(sys.argv[1], proposal, ProposalAccepted, timeout_seconds=30))
print(getattr(reply, "proposal_id", None) or reply.code)
"""
APPROVE_AND_EXECUTE = """
import asyncio, sys
from shared.store.approvals import approve
from shared.store.audit_seal import own_keyring
from shared.config import load_settings
from shared.wire.executor import Execute, ExecutionReport, Inspect, Inspection
from shared.wire.client import request
from shared.store.db import db_now, open_store

async def main():
    inspection = await request(sys.argv[2], Inspect(proposal_id=sys.argv[3]), Inspection, timeout_seconds=60)
    keyring = own_keyring(load_settings().keys_dir, "approval_web")  # approval_web's own key, as its user
    conn = await open_store(sys.argv[1], keyring=keyring)
    try:
        approval = await approve(
            conn, proposal_id=sys.argv[3], session_id="s-fence", card_hash="c" * 64,
            facts_hash=inspection.facts_hash, facts=inspection.facts, shown_at=await db_now(conn),
            ttl_seconds=300,
        )
        assert approval.ok
    finally:
        await conn.close()
    execute = Execute(
        approval_id=approval.approval_id, proposal_id=sys.argv[3], card_hash="c" * 64, facts_hash=inspection.facts_hash
    )
    report = await request(sys.argv[2], execute, ExecutionReport, timeout_seconds=60)
    print(report.outcome if isinstance(report, ExecutionReport) else report.code)

asyncio.run(main())
"""


async def test_a_full_approve_flow_across_the_three_users_makes_exactly_one_write(deployment):
    name, lab = deployment.name, deployment.lab
    before = len(lab.writes())
    submitted = await asyncio.to_thread(
        deployment.run,
        "assistant",
        SUBMIT,
        str(deployment.path(f"/run/{name}-assistant/approval.sock")),
        IDLE,
    )
    assert submitted.returncode == 0, submitted.stderr
    proposal_id = submitted.stdout.strip()
    assert proposal_id.startswith("p"), proposal_id
    executed = await asyncio.to_thread(
        deployment.run,
        "approval-web",
        APPROVE_AND_EXECUTE,
        str(deployment.path(f"/var/lib/{name}/store/fleetwatch.db")),
        str(deployment.path(f"/run/{name}-web/executor.sock")),
        proposal_id,
    )
    assert executed.returncode == 0, executed.stderr
    assert executed.stdout.strip() == "ok"
    writes = lab.writes()[before:]
    assert [(w["tool"], w["arguments"], w["team"]) for w in writes] == [
        ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]}, "sandbox")
    ]


def open_files(pid: int) -> set[str]:
    held = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            held.add(os.readlink(fd))
    return held


async def test_the_assistants_user_cannot_modify_the_store_while_the_executors_and_approval_webs_can(
    deployment,
):
    name = deployment.name
    store = deployment.path(f"/var/lib/{name}/store")
    db = store / "fleetwatch.db"
    denied = deployment.run("assistant", WRITE_STORE, str(db))
    assert denied.stdout.split() == ["PermissionError", "OperationalError"], denied.stderr
    for unit in ("executor", "approval-web"):
        allowed = deployment.run(unit, WRITE_STORE, str(db))
        assert allowed.stdout.split() == ["ok", "ok"], (unit, allowed.stderr)
    for path, mode in ((store, 0o2770), (db, 0o660), (Path(f"{db}-wal"), 0o660), (Path(f"{db}-shm"), 0o660)):
        info = path.stat()  # the -wal and -shm exist: the services hold the store open
        assert (grp.getgrgid(info.st_gid).gr_name, stat.S_IMODE(info.st_mode)) == (name, mode), path
    members = set(grp.getgrnam(name).gr_mem)
    assert members == {f"{name}-executor", f"{name}-web"}
    assert name not in deployment.launches["assistant"].extra_groups
    assert not {str(db), f"{db}-wal", f"{db}-shm"} & open_files(deployment.processes["assistant"].pid)


ASK = """
import asyncio, sys
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
reply = asyncio.run(request(sys.argv[1], Ask(question="What needs attention?"), Answer, timeout_seconds=60))
print(getattr(reply, "answered_by", None) or reply.code)
"""


async def test_the_assistants_ask_rows_and_its_sockets_refusals_reach_the_audit_through_approval_sock(
    deployment,
):
    name = deployment.name
    assistant_sock = str(deployment.path(f"/run/{name}-assistant/assistant.sock"))
    # approval_web's user runs with the operators' group: it may ask.
    asked = await asyncio.to_thread(deployment.run, "approval-web", ASK, assistant_sock)
    assert asked.returncode == 0 and asked.stdout.strip() == "keyword", asked.stderr
    refused = await request(assistant_sock, GetCapabilities(), Capabilities, timeout_seconds=10)  # root
    assert getattr(refused, "code", None) == "peer_not_allowed"
    approval_sock = deployment.path(f"/run/{name}/approval.sock")
    tail = await request(approval_sock, AuditTail(limit=50), AuditRows, timeout_seconds=10)
    assert isinstance(tail, AuditRows), tail
    asks = [r for r in tail.rows if r.kind == "ask"]
    assert asks and asks[-1].actor == "assistant" and asks[-1].detail["answered_by"] == "keyword"
    refusals = [
        r
        for r in tail.rows
        if r.kind == "refusal" and r.detail.get("socket") == "assistant.sock" and r.detail.get("uid") == 0
    ]
    assert len(refusals) == 1 and refusals[0].actor == "assistant", tail.rows[-5:]
    assert refusals[0].detail["operation"] == "connect" and refusals[0].detail["code"] == "peer_not_allowed"


UNIT_OF = {
    "fleetwatch-executor": "executor",
    "fleetwatch-web": "approval-web",
    "fleetwatch-assistant": "assistant",
}


async def test_each_user_and_group_may_do_exactly_what_the_deploy_table_says(deployment):
    """docs/deploy.md's "Who can reach what" table, tried as each unit's user and groups, and as
    a person in each group alone and in none (see `tests.deploy.abilities`)."""
    argument = checks(lambda path: str(deployment.path(path)), deployment.name)
    env = {
        "PATH": "/usr/bin:/bin",
        **{k: v for k, v in deployment.launches["executor"].env.items() if k == "PYTHONPATH"},
    }
    found = {}
    with people(deployment.name) as persons:
        for who in ability_rows():
            if who in UNIT_OF:
                found[who] = tried(deployment.run(UNIT_OF[who], CAN, argument))
            else:
                found[who] = try_as(persons[who], deployment.python, argument, env)
    assert disagreements(found) == {}, found


DIGEST = """
import asyncio, sys
from shared.wire.client import request
from shared.wire.assistant import DigestReport, RunDigest
reply = asyncio.run(request(sys.argv[1], RunDigest(), DigestReport, timeout_seconds=60))
print(getattr(reply, "read", None), getattr(reply, "code", None))
"""


async def test_the_watch_keeps_its_own_store_in_the_assistants_folder_and_never_opens_the_sandbox_slot(
    deployment,
):
    name = deployment.name
    assistant = deployment.processes["assistant"]
    assistant_sock = str(deployment.path(f"/run/{name}-assistant/assistant.sock"))
    beat = await asyncio.to_thread(deployment.run, "approval-web", DIGEST, assistant_sock)
    assert beat.returncode == 0 and beat.stdout.split() == ["True", "None"], beat.stderr
    watch_db = deployment.path(f"/var/lib/{name}/assistant/watch.db")
    info = watch_db.stat()
    assert pwd.getpwuid(info.st_uid).pw_name == f"{name}-assistant"
    assert stat.S_IMODE(watch_db.parent.stat().st_mode) == 0o700
    held = open_files(assistant.pid)
    assert str(watch_db) in held
    assert not any(path.endswith("sandbox.json") or "/store/" in path for path in held), held
    for unit in ("executor", "approval-web"):
        denied = deployment.run(unit, READ_FILE, str(watch_db))
        assert "PermissionError" in denied.stderr, (unit, denied.stderr)
