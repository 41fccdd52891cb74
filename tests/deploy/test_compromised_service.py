"""The OS-user deployment against a compromised service, and for its operators: ``fleetwatch up``
as root with install.sh's users (CI runs as root), the lab in demo mode, and real Linux users
for the people: an operator (in ``NAME-operators`` and ``NAME-approvers``) and a stranger (in no
Fleetwatch group).

What must hold (issue 18's findings):

1. a symlink a service's user plants where root used to write never makes root write through it;
2. the stranger is refused by assistant.sock and by the ask page, each refusal an audit row
   naming its uid; the operator asks on the page with its secret, and the row names them;
3. a row changed, inserted or removed (the newest ones too) by a store writer's user, with the
   triggers dropped and the hashes recomputed, is named by ``fleetwatch audit verify``; the
   kill switch turned off in the store without the executor's seal stays on;
5. the operator's ``fleet``, ``writable`` and ``status`` work and read as words, and an approver
   reads the page secret and approves a card that then runs once.

Tests run in file order on the installation this folder shares (`tests.deploy.conftest`); the
audit tests undo each change afterwards.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.deploy.supervised import Running, as_process
from tests.deploy.systemd_units import can_make_users
from tests.shared.store.tampering import tamper

pytestmark = pytest.mark.skipif(not can_make_users(), reason="needs root and useradd (CI runs as root)")
IDLE = "29088800001"  # a sandbox device of the campus lab, not recording
LOGS = ("supervisord", "executor", "approval_web", "assistant", "lab", "model")


@pytest.fixture(scope="module")
def running(deployed: Running) -> Running:
    """The folder's deployment (`tests.deploy.conftest.deployed`)."""
    return deployed


def user(running: Running, suffix: str) -> str:
    return f"{running.name}-{suffix}"


def uid(running: Running, suffix: str) -> int:
    return pwd.getpwnam(user(running, suffix)).pw_uid


def store(running: Running) -> Path:
    return running.path(f"/var/lib/{running.name}/store")


def audit_rows(running: Running, *, kind: str | None = None) -> list[dict]:
    """The newest audit rows, read by the operator (``audit tail`` on approval.sock)."""
    tail = running.fleetwatch_as(user(running, "op"), "audit", "tail", "-n", "200", "--json")
    assert tail.returncode == 0, tail.stderr
    rows = json.loads(tail.stdout)["rows"]
    return [r for r in rows if kind is None or r["kind"] == kind]


def verify(running: Running) -> tuple[int, dict]:
    done = running.fleetwatch_as(user(running, "op"), "audit", "verify", "--json")
    return done.returncode, json.loads(done.stdout)


# --- 1. root never writes where a service's user can --------------------------------------------

PLANT_LOG_LINKS = """
import os, sys
logs = os.path.join(sys.argv[1], "logs")
os.makedirs(logs, exist_ok=True)
for name in sys.argv[3:]:
    os.symlink(os.path.join(sys.argv[2], name + ".log"), os.path.join(logs, name + ".log"))
"""


def test_log_symlinks_a_store_writer_plants_never_make_root_write_through_them(running: Running):
    trap = running.root / "root-only"
    trap.mkdir(mode=0o700)
    planted = as_process(
        running.pid("executor"),
        running.python,
        PLANT_LOG_LINKS,
        str(store(running)),
        str(trap),
        *LOGS,
        env=running.env,
    )
    assert planted.returncode == 0, planted.stderr
    assert running.fleetwatch("down").returncode == 0
    up = running.fleetwatch("up")
    assert up.returncode == 0, up.stdout + up.stderr
    assert list(trap.iterdir()) == []  # root created nothing through the links
    logs = running.path(f"/var/lib/{running.name}/logs")
    info = logs.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o750)
    assert {p.name for p in logs.iterdir()} >= {"supervisord.log", "executor.log", "approval_web.log"}
    assert all(p.stat().st_uid == 0 and not p.is_symlink() for p in logs.iterdir())
    assert f"Logs: {logs}" in up.stdout


PLANT_STORE_LINK = """
import os, sys
path = os.path.join(sys.argv[1], "fleetwatch.db-shm")  # no data in it: rebuilt at the next open
if os.path.lexists(path):
    os.unlink(path)
os.symlink(sys.argv[2], path)
"""


def test_a_store_file_replaced_by_a_symlink_is_refused_never_followed(running: Running):
    target = running.root / "root-only" / "shadow"
    target.write_text("root's own\n")
    target.chmod(0o600)
    assert running.fleetwatch("down").returncode == 0
    planted = running.as_person(user(running, "web"), PLANT_STORE_LINK, str(store(running)), str(target))
    assert planted.returncode == 0, planted.stderr
    refused = running.fleetwatch("up")
    link = store(running) / "fleetwatch.db-shm"
    try:
        assert refused.returncode == 2 and "fleetwatch.db-shm: is a symlink" in refused.stderr, (
            refused.stdout + refused.stderr
        )
        info = target.stat()
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o600)
        assert target.read_text() == "root's own\n"
    finally:
        link.unlink()
        again = running.fleetwatch("up")
        assert again.returncode == 0, again.stdout + again.stderr


def test_supervisords_own_files_are_in_folders_only_root_can_write(running: Running):
    for folder in (running.path(f"/run/{running.name}"), running.path(f"/var/lib/{running.name}/logs")):
        for above in (folder, *folder.parents):
            info = above.stat()
            sticky = bool(info.st_mode & stat.S_ISVTX) and above != folder
            assert info.st_uid == 0 and (sticky or not stat.S_IMODE(info.st_mode) & 0o022), above
    run = running.path(f"/run/{running.name}")
    assert {"supervisord.conf", "supervisord.pid", "supervisor.sock"} <= {p.name for p in run.iterdir()}


# --- 2. who may ask ---------------------------------------------------------------------------

ASK_SOCKET = """
import asyncio, sys
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
reply = asyncio.run(request(sys.argv[1], Ask(question="What's offline?"), Answer, timeout_seconds=60))
print(getattr(reply, "code", None) or reply.answered_by)
"""

PAGE = """
import json, sys, httpx2
base, secret_file = sys.argv[1], sys.argv[2]
same = {"Origin": base, "Sec-Fetch-Site": "same-origin"}
out = {}
try:
    secret = open(secret_file).read().strip()
    out["secret"] = "read"
except OSError as exc:
    secret, out["secret"] = "", type(exc).__name__
with httpx2.Client(base_url=base, follow_redirects=False, timeout=60) as web:
    out["get"] = "login" if 'action="/login"' in web.get("/").text else "form"
    if secret:
        out["login"] = web.post("/login", data={"secret": secret}, headers=same).status_code
    page = web.get("/").text
    token = page.split('name="token" value="')[1].split('"')[0] if 'name="token"' in page else ""
    answer = web.post("/ask", data={"token": token, "question": "What's offline?"}, headers=same)
    out["ask"] = answer.status_code
    out["offline"] = "offline" in answer.text.lower() and "could not read" not in answer.text
print(json.dumps(out))
"""


def ask_page(running: Running, person: str) -> dict:
    base = f"http://localhost:{running.env['FLEETWATCH_ASK_PORT']}"
    secret = running.path(f"/var/lib/{running.name}/ask/ask-secret")
    done = running.as_person(user(running, person), PAGE, base, str(secret))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_user_in_no_fleetwatch_group_cannot_reach_assistant_sock_and_a_peer_past_the_files_is_audited(
    running: Running,
):
    own = str(running.path(f"/run/{running.name}-assistant/assistant.sock"))
    link = str(running.path(f"/run/{running.name}/assistant.sock"))  # the operators' link
    for path in (own, link):  # the first wall: the socket's folder is its group's alone
        denied = running.as_person(user(running, "stranger"), ASK_SOCKET, path)
        assert denied.returncode != 0 and "PermissionError" in denied.stderr, denied.stdout
    # The second wall, for a peer the files let through (root passes any file mode): the peer
    # check refuses it and approval_web records the refusal naming the uid.
    refused = subprocess.run(
        [running.python, "-c", ASK_SOCKET, own],
        env=running.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 0 and refused.stdout.strip() == "peer_not_allowed", refused.stderr
    rows = [r for r in audit_rows(running, kind="refusal") if r["detail"].get("socket") == "assistant.sock"]
    assert rows and (rows[-1]["detail"]["uid"], rows[-1]["detail"]["code"]) == (0, "peer_not_allowed")
    # The operator is admitted, and its question's row names its uid.
    asked = running.as_person(user(running, "op"), ASK_SOCKET, link)
    assert asked.returncode == 0 and asked.stdout.strip() in ("model", "demo_model", "keyword"), asked.stderr
    asks = [r for r in audit_rows(running, kind="ask") if r["detail"].get("asker_uid") == uid(running, "op")]
    assert asks and asks[-1]["detail"]["page_session"] is None


def test_a_stranger_past_loosened_file_modes_is_refused_by_assistant_socks_peer_check_naming_its_uid(
    running: Running,
):
    """An admin's mistake opens the first wall (the socket's folder and file to everyone): the
    second, the peer check, still refuses the stranger, and the audit row names its uid."""
    folder = running.path(f"/run/{running.name}-assistant")
    sock = folder / "assistant.sock"
    modes = (stat.S_IMODE(folder.stat().st_mode), stat.S_IMODE(sock.stat().st_mode))
    folder.chmod(modes[0] | 0o001)
    sock.chmod(modes[1] | 0o006)
    try:
        refused = running.as_person(user(running, "stranger"), ASK_SOCKET, str(sock))
    finally:
        folder.chmod(modes[0])
        sock.chmod(modes[1])
    assert refused.returncode == 0 and refused.stdout.strip() == "peer_not_allowed", refused.stderr
    rows = [r for r in audit_rows(running, kind="refusal") if r["detail"].get("socket") == "assistant.sock"]
    assert rows and rows[-1]["detail"]["uid"] == uid(running, "stranger"), rows[-3:]
    assert rows[-1]["detail"]["code"] == "peer_not_allowed" and rows[-1]["actor"] == "assistant"


def test_a_user_in_no_fleetwatch_group_is_refused_by_the_ask_page_and_the_audit_names_the_uid(
    running: Running,
):
    seen = ask_page(running, "stranger")
    assert seen == {"secret": "PermissionError", "get": "login", "ask": 401, "offline": False}
    stranger = uid(running, "stranger")
    refusals = [r for r in audit_rows(running, kind="refusal") if r["detail"].get("socket") == "ask_page"]
    assert refusals and refusals[-1]["detail"]["uid"] == stranger
    assert refusals[-1]["detail"]["code"] == "secret_required" and refusals[-1]["actor"] == "assistant"


def test_an_operator_asks_on_the_page_with_its_secret_and_the_audit_names_the_session_and_uid(
    running: Running,
):
    seen = ask_page(running, "op")
    assert seen == {"secret": "read", "get": "login", "login": 303, "ask": 200, "offline": True}, seen
    op = uid(running, "op")
    (session,) = [r for r in audit_rows(running, kind="ask_session_start") if r["detail"]["uid"] == op][-1:]
    asks = [
        r
        for r in audit_rows(running, kind="ask")
        if r["detail"].get("page_session") == session["detail"]["page_session"]
    ]
    assert asks and asks[-1]["detail"]["asker_uid"] == op
    assert "What's offline" not in json.dumps(asks[-1]["detail"])  # never the question itself


def test_the_assistant_cannot_read_the_approval_pages_secret_and_an_approver_can(running: Running):
    secret = running.path(f"/var/lib/{running.name}/approve/approve-secret")
    info = secret.stat()
    assert (pwd.getpwuid(info.st_uid).pw_name, grp.getgrgid(info.st_gid).gr_name) == (
        user(running, "web"),
        f"{running.name}-approvers",
    )
    assert stat.S_IMODE(info.st_mode) == 0o640 and stat.S_IMODE(secret.parent.stat().st_mode) == 0o2750
    read = "import sys; print(open(sys.argv[1]).read().strip())"
    denied = as_process(running.pid("assistant"), running.python, read, str(secret), env=running.env)
    assert denied.returncode != 0 and "PermissionError" in denied.stderr
    assert running.as_person(user(running, "stranger"), read, str(secret)).returncode != 0
    assert running.as_person(user(running, "op"), read, str(secret)).returncode == 0


# --- 5. operators served ----------------------------------------------------------------------


def test_an_operator_sees_the_fleet_what_may_be_changed_and_the_status_in_words(running: Running):
    op = user(running, "op")
    fleet = running.fleetwatch_as(op, "fleet")
    assert fleet.returncode == 0 and "devices," in fleet.stdout and "online" in fleet.stdout, fleet.stderr
    writable = running.fleetwatch_as(op, "writable")
    assert writable.returncode == 0 and IDLE in writable.stdout, writable.stderr
    status = running.fleetwatch_as(op, "status")
    assert status.returncode == 0, status.stderr
    assert "only root can list them" in status.stdout and "Kill switch:" in status.stdout
    assert "Error" not in status.stdout and "error" not in status.stdout.lower().replace("errors", "")
    ask = running.fleetwatch_as(op, "ask", "What's offline?")
    assert ask.returncode == 0 and "offline" in ask.stdout.lower(), ask.stderr
    rows = [r for r in audit_rows(running, kind="ask") if r["detail"].get("asker_uid") == uid(running, "op")]
    assert any(r["detail"].get("page_session") is None for r in rows)  # the socket's own row


APPROVE = """
import json, sys, httpx2
from tests.approval_web.page.helpers import forms_of
base, secret_file = sys.argv[1], sys.argv[2]
same = {"Origin": base, "Sec-Fetch-Site": "same-origin"}
secret = open(secret_file).read().strip()
with httpx2.Client(base_url=base, follow_redirects=True, timeout=60) as web:
    assert web.post("/login", data={"secret": secret}, headers=same).status_code == 200
    form = forms_of(web.get("/").text).forms["/approve"]
    answer = web.post("/approve", data=form, headers=same)
print(json.dumps({"status": answer.status_code, "done": "Done" in answer.text}))
"""


def test_an_approver_reads_the_page_secret_and_approves_a_card_that_runs_once(running: Running):
    op = user(running, "op")
    drafted = running.fleetwatch_as(
        op,
        "propose",
        "batch_recording",
        "--arg",
        "action=start",
        "--arg",
        f'device_ids=["{IDLE}-1"]',
        "--reason",
        "r",
    )
    assert drafted.returncode == 0, drafted.stderr
    lab = f"http://127.0.0.1:{running.env['FLEETWATCH_LAB_PORT']}"
    before = len(httpx2.get(f"{lab}/_lab/writes").json()["writes"])
    base = f"http://127.0.0.1:{running.env['FLEETWATCH_APPROVE_PORT']}"
    secret = running.path(f"/var/lib/{running.name}/approve/approve-secret")
    done = running.as_person(op, APPROVE, base, str(secret))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"status": 200, "done": True}
    writes = httpx2.get(f"{lab}/_lab/writes").json()["writes"][before:]
    assert [(w["tool"], w["arguments"]) for w in writes] == [
        ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
    ]


# --- 3. the audit and the kill switch against a store writer ---------------------------------

TAMPER = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.shared.store.tampering import tamper
tamper(Path(sys.argv[2]), *sys.argv[3:], rehash=True)
"""

TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit"
    " BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit"
    " BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END",
)


class AuditSnapshot:
    """The audit table as it was, put back after a test changed it (as root)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        raw = sqlite3.connect(db)
        raw.row_factory = sqlite3.Row
        self.rows = [dict(r) for r in raw.execute("SELECT * FROM audit ORDER BY seq")]
        raw.close()

    def restore(self) -> None:
        raw = sqlite3.connect(self.db, timeout=30)
        raw.execute("DROP TRIGGER IF EXISTS audit_no_update")
        raw.execute("DROP TRIGGER IF EXISTS audit_no_delete")
        raw.execute("DELETE FROM audit")
        columns = list(self.rows[0])
        raw.executemany(
            f"INSERT INTO audit ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [tuple(r[c] for c in columns) for r in self.rows],
        )
        for trigger in TRIGGERS:
            raw.execute(trigger)
        raw.commit()
        raw.close()


def tamper_as(running: Running, program: str, *statements: str) -> None:
    """`statements` on the store with the triggers dropped and every hash recomputed, as the
    running `program`'s process credentials (a compromised store writer)."""
    root = Path(__file__).resolve().parents[2]
    db = str(store(running) / "fleetwatch.db")
    done = as_process(
        running.pid(program), running.python, TAMPER, str(root), db, *statements, env=running.env
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def snapshot(running: Running) -> Iterator[AuditSnapshot]:
    """The audit as it is (verified), restored after the test."""
    code, report = verify(running)
    assert code == 0, (report, [(r["seq"], r["actor"], r["kind"]) for r in audit_rows(running)])
    kept = AuditSnapshot(store(running) / "fleetwatch.db")
    try:
        yield kept
    finally:
        kept.restore()
        code, report = verify(running)
        assert code == 0, report


def test_a_kill_switch_row_changed_and_rehashed_by_the_executors_user_is_named(running: Running):
    op = user(running, "op")
    assert running.fleetwatch_as(op, "pause").returncode == 0
    assert verify(running)[0] == 0
    (row,) = [r for r in audit_rows(running, kind="kill_switch") if r["detail"] == {"on": True}][-1:]
    seq = row["seq"]
    try:
        tamper_as(running, "executor", f"UPDATE audit SET detail_json = '{{\"on\":false}}' WHERE seq = {seq}")
        code, report = verify(running)
        assert code == 1 and report["first_bad_seq"] == seq, report
        assert "approval_web's key" in report["reason"]
        status = json.loads(running.fleetwatch_as(op, "status", "--json").stdout)
        assert status["kill_switch"] is True  # the executor's own sealed row no longer verifies: still paused
    finally:  # put the row back as it was: the recomputed hashes are the original ones again
        tamper(
            store(running) / "fleetwatch.db",
            f"UPDATE audit SET detail_json = '{{\"on\":true}}' WHERE seq = {seq}",
            rehash=True,
        )
        assert verify(running)[0] == 0
        assert running.fleetwatch_as(op, "resume").returncode == 0


def test_an_executor_row_changed_and_rehashed_by_approval_webs_user_is_named(running: Running, snapshot):
    (row,) = [r for r in audit_rows(running) if r["actor"] == "executor"][-1:]
    tamper_as(running, "approval_web", f"UPDATE audit SET detail_json = '{{}}' WHERE seq = {row['seq']}")
    code, report = verify(running)
    assert code == 1 and report["first_bad_seq"] == row["seq"], report
    checks = {c["writer"]: c for c in report["checks"]}
    assert (
        checks["executor"]["first_bad_seq"] == row["seq"] and "executor's key" in checks["executor"]["reason"]
    )


def test_a_row_inserted_and_rehashed_by_the_executors_user_is_named(running: Running, snapshot):
    (row,) = [r for r in audit_rows(running) if r["kind"] == "kill_switch"][-1:]
    seq = row["seq"]
    tamper_as(
        running,
        "executor",
        f"UPDATE audit SET seq = seq + 100000 WHERE seq >= {seq}",
        "UPDATE audit SET seq = seq - 99999 WHERE seq >= 100000",
        "INSERT INTO audit (seq, at, actor, kind, detail_json, prev_hash, hash, writer, mac)"
        f" VALUES ({seq}, '2030-01-01T00:00:00.000Z', 'operator:0', 'kill_switch', '{{\"on\":false}}', 'x', 'y',"
        " 'approval_web', 'z')",
    )
    code, report = verify(running)
    assert code == 1 and report["first_bad_seq"] == seq, report


def test_the_newest_rows_removed_by_approval_webs_user_are_named(running: Running, snapshot):
    rows = audit_rows(running)
    last = rows[-1]["seq"]
    tamper_as(running, "approval_web", f"DELETE FROM audit WHERE seq >= {last - 1}")
    code, report = verify(running)
    assert code == 1 and report["first_bad_seq"] == last - 1, report
    assert "missing" in report["reason"]


def shift(seq: int, by: int) -> tuple[str, str]:
    """Statements moving every row from `seq` on by `by` (through a range nothing uses)."""
    return (
        f"UPDATE audit SET seq = seq + 100000 WHERE seq >= {seq}",
        f"UPDATE audit SET seq = seq - 100000 + ({by}) WHERE seq >= 100000",
    )


INSERTED = (
    "INSERT INTO audit (seq, at, actor, kind, detail_json, prev_hash, hash, writer, mac)"
    " VALUES ({seq}, '2030-01-01T00:00:00.000Z', 'executor', 'kill_switch_sealed',"
    " '{{\"on\":false,\"request_seq\":1}}', 'x', 'y', 'executor', 'z')"
)


@pytest.mark.parametrize(
    ("program", "change"),
    [
        ("approval_web", "insert"),
        ("executor", "remove"),
        ("approval_web", "remove"),
        ("executor", "cut the tail"),
    ],
)
def test_every_other_change_by_either_store_writer_is_named(running: Running, snapshot, program, change):
    """With the tests above: a row changed, inserted, removed from the middle (the rows after it
    renumbered) or cut from the end, by either service's user, triggers dropped and every hash
    recomputed, is named by ``audit verify``."""
    rows = audit_rows(running)
    seq, last = rows[-6]["seq"], rows[-1]["seq"]
    statements = {
        "insert": (*shift(seq, 1), INSERTED.format(seq=seq)),
        "remove": (f"DELETE FROM audit WHERE seq = {seq}", *shift(seq + 1, -1)),
        "cut the tail": (f"DELETE FROM audit WHERE seq >= {last - 1}",),
    }[change]
    tamper_as(running, program, *statements)
    code, report = verify(running)
    expected = last - 1 if change == "cut the tail" else seq
    assert code == 1 and report["first_bad_seq"] == expected, report


def test_the_kill_switch_turned_off_in_the_store_without_the_executors_seal_stays_on(running: Running):
    op = user(running, "op")
    assert running.fleetwatch_as(op, "pause").returncode == 0
    try:
        db = store(running) / "fleetwatch.db"
        seal = (
            sqlite3.connect(db).execute("SELECT value FROM kv WHERE key = 'kill_switch_seal'").fetchone()[0]
        )
        forged = json.dumps({**json.loads(seal), "on": False})
        turn_off = (
            "import sqlite3, sys\n"
            "raw = sqlite3.connect(sys.argv[1])\n"
            "raw.execute(\"UPDATE kv SET value = ? WHERE key = 'kill_switch_seal'\", (sys.argv[2],))\n"
            "raw.commit()\n"
        )
        done = as_process(
            running.pid("approval_web"), running.python, turn_off, str(db), forged, env=running.env
        )
        assert done.returncode == 0, done.stderr
        status = json.loads(running.fleetwatch_as(op, "status", "--json").stdout)
        assert status["kill_switch"] is True
    finally:
        assert running.fleetwatch_as(op, "resume").returncode == 0
    assert json.loads(running.fleetwatch_as(op, "status", "--json").stdout)["kill_switch"] is False
    assert os.path.exists(db)
