"""The hard rules of AGENTS.md, held by tests. Without a write fence (neither
``FLEETWATCH_WRITE_DEVICE_IDS`` nor ``FLEETWATCH_WRITE_TEAM_ID``) the assistant proposes nothing,
the executor refuses Prepare, the approval page does not start and ``doctor`` fails; and no
setting, environment variable or flag changes that.

- **In this process**, for every setting of `shared.config.SETTINGS` and a list of "permissive"
  values (wildcards, booleans, zero, blank, the lab's own IDs, paths at the sandbox slot...):
  every decision a service takes from its settings when it starts. Either the settings or the
  policy refuse to load (nothing starts), or the fence is unset and every service refuses.
- **As real processes** (the lab and the scripted model in this process; the executor,
  approval_web, the assistant and ``fleetwatch doctor`` as processes), twice: with nothing set,
  and with a permissive value for every setting the processes can still start with.
- **Statically**: only the config (and two reviewed commands) read the environment, and no
  command or flag of ``fleetwatch`` or a service names approval, a skip or the fence.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import os
import re
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiosqlite
import pytest
import pytest_asyncio

from services.approval_web.__main__ import main as approval_web_main
from services.approval_web.__main__ import page_refusal
from services.approval_web.intake import IntakeRefused, check_submission
from services.assistant.__main__ import main as assistant_main
from services.assistant.server import build_assistant, model_client
from services.assistant.tools import PROPOSE_CHANGE, offered_names
from services.ctl.doctor import Level, check_fence, exit_code
from services.ctl.main import build_parser
from services.executor.__main__ import main as executor_main
from services.executor.checks import DeviceList, Fence, fence_refusal, team_refusal
from services.executor.runtime import Runtime
from services.lab.model_standin import Reply, StandinHandle, ToolUse, run_model_standin, say
from services.lab.scenario import load_scenario
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR, SETTINGS, ConfigError, Settings, load_settings
from shared.epiphan.slots import SignIn, write_slot
from shared.errors import Code, FleetwatchError
from shared.policy.loader import Policy, ToolPolicy, load_policies
from shared.store.db import open_store
from shared.wire.approval import GetStatus, ProposalAccepted, Status, SubmitProposal
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
from shared.wire.executor import Health, HealthReport, ListWritable, Prepare, Prepared, WritableDevices
from shared.wire.protocol import ErrorReply
from tests.assistant.helpers import error_codes, sequence
from tests.deploy.cli import doctor
from tests.procs import ServiceProcess, base_env, start_service, stop_all
from tests.test_fence_static import ROOT, modules

in_module_loop = pytest.mark.asyncio(loop_scope="module")
"""Async tests share the module's loop with the module-scoped fixtures."""

FENCE = ("FLEETWATCH_WRITE_DEVICE_IDS", "FLEETWATCH_WRITE_TEAM_ID")
SANDBOX = load_scenario("campus").teams.sandbox
SANDBOX_IDS = tuple(device.id for _, device in SANDBOX.devices())
TIMEOUT = 30.0

# --- in this process: every setting, every permissive value ------------------------------------

BLANKS = ("", " ", ",", " , ", "\t", "\n")
"""Values that must mean "unset" (or be refused) for the fence's own two settings."""
WORDS = ("*", "all", "any", "true", "yes", "on", "1", "0", "-1", "none", "null", "unsafe")
"""Values someone might hope switch a safety off or open everything up."""


def permissive_values(name: str, annotation: str, tmp_path: Path) -> tuple[str, ...]:
    """The values tried for setting `name` (`annotation`: its `Settings` field type)."""
    if name == "FLEETWATCH_WRITE_TEAM_ID":
        return tuple(b for b in BLANKS if not b.strip(" \t\n"))  # else a team ID: see the wildcard test
    if name == "FLEETWATCH_WRITE_DEVICE_IDS":
        return (*BLANKS, *WORDS)  # a master ID *is* the allowlist
    lab_ids = (",".join(SANDBOX_IDS), SANDBOX.team_id)
    typed = {
        "Path": ("/", "/dev/null", str(tmp_path / "home" / "tokens" / "sandbox.json")),
        "Path | None": ("/dev/null", str(REPO_POLICY_DIR / "policy.yaml")),
        "int": ("65535",),
        "str": ("http://127.0.0.1:8770/mcp", "http://0.0.0.0:1/"),
        "str | None": ("http://0.0.0.0:1/",),
        "float": ("3599", "0.001"),
        "Secret | None": ("sk-ant-anything",),
        "frozenset[int]": (f"0,{os.getuid()},65534", ",".join(str(g) for g in os.getgroups())),
    }.get(annotation, ())
    return (*BLANKS, *WORDS, *lab_ids, *typed)


@dataclass
class Probe:
    """What each service decides from its settings at start, judged in this process."""

    conn: aiosqlite.Connection
    policies: dict[tuple[Path, Path | None], tuple[Policy, ToolPolicy] | FleetwatchError]

    def load_policies(self, settings: Settings) -> tuple[Policy, ToolPolicy]:
        key = (settings.policy_dir, settings.policy_override)
        if key not in self.policies:
            try:
                self.policies[key] = load_policies(*key)
            except FleetwatchError as exc:
                self.policies[key] = exc
        loaded = self.policies[key]
        if isinstance(loaded, FleetwatchError):
            raise loaded
        return loaded

    async def judge(self, env: Mapping[str, str]) -> str:
        """How a change is stopped with `env`; AssertionError naming a service that would let one
        through (a fence is configured, the assistant offers propose_change, the intake, the page,
        the executor or doctor accepts)."""
        try:
            settings = load_settings(env)
            policy, tool_policy = self.load_policies(settings)
        except FleetwatchError as exc:  # ConfigError or PolicyError: no service starts
            return f"refused at start ({exc.code})"
        assert not settings.fence_configured, "the fence counts as configured"
        client = model_client(settings)
        try:
            assistant, reader = build_assistant(settings, policy, tool_policy, client=client)
            await reader.close()
        finally:
            if client is not None:
                await client.close()
        assert not assistant.may_propose, "the assistant may propose"
        assert PROPOSE_CHANGE not in offered_names(assistant.tools), "propose_change is offered"
        submit = SubmitProposal(
            tool="batch_reboot",
            arguments={"device_ids": [SANDBOX_IDS[0]]},
            reason="x",
            proposed_by="operator",
        )
        with pytest.raises(IntakeRefused) as refused:
            check_submission(
                submit, policy=policy, tool_policy=tool_policy, fence_configured=settings.fence_configured
            )
        assert refused.value.code is Code.FENCE_NOT_CONFIGURED or (
            refused.value.code is Code.OBSERVE_MODE and not policy.may_propose
        ), f"the intake answered {refused.value.code}"
        page = page_refusal(settings)
        assert page is not None and page.code is Code.FENCE_NOT_CONFIGURED, "the approval page starts"
        fence = Runtime(settings=settings, conn=self.conn, key=bytes(32)).fence
        executor = fence_refusal(fence)
        assert executor is not None and executor.code is Code.FENCE_NOT_CONFIGURED, "the executor prepares"
        checks = check_fence(settings)
        assert [c.level for c in checks] == [Level.FAIL] and exit_code(checks) == 1, "doctor passes"
        return "fence unset: every service refuses"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def probe(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Probe]:
    conn = await open_store(tmp_path_factory.mktemp("probe") / "fleetwatch.db")
    try:
        yield Probe(conn, {})
    finally:
        await conn.close()


def _env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"HOME": str(tmp_path), "FLEETWATCH_HOME": str(tmp_path / "home"), **values}


ANNOTATIONS = {f.name: str(f.type) for f in Settings.__dataclass_fields__.values()}


@in_module_loop
@pytest.mark.parametrize("setting", SETTINGS, ids=[s.name for s in SETTINGS])
async def test_no_value_of_any_setting_lets_a_change_through_without_a_fence(setting, probe, tmp_path):
    verdicts = {}
    for value in permissive_values(setting.name, ANNOTATIONS[setting.attr], tmp_path):
        env = _env(tmp_path, **{setting.name: value})
        try:
            verdicts[value] = await probe.judge(env)
        except AssertionError as exc:
            raise AssertionError(f"{setting.name}={value!r}: {exc}") from exc
    assert verdicts and all(v.startswith(("refused at start", "fence unset")) for v in verdicts.values())


@in_module_loop
async def test_the_probe_sees_a_configured_fence(probe, tmp_path):
    for name, value in zip(FENCE, (SANDBOX_IDS[0], SANDBOX.team_id), strict=True):
        with pytest.raises(AssertionError, match="the fence counts as configured"):
            await probe.judge(_env(tmp_path, **{name: value}))


@pytest.mark.parametrize("value", ["*", "all", "any", "true", "%", ","])
def test_a_wildcard_team_id_is_a_literal_that_no_sandbox_team_matches(value):
    fence = Fence(
        frozenset(), load_settings(_env(Path("/nonexistent"), FLEETWATCH_WRITE_TEAM_ID=value)).write_team_id
    )
    for reported in (SANDBOX.team_id, None, value.upper() if value.isalpha() else "other"):
        refusal = team_refusal(DeviceList(team_id=reported, devices={}), fence)
        assert refusal is not None and refusal.code is Code.TEAM_MISMATCH


@pytest.mark.parametrize(
    "name",
    [
        "FLEETWATCH_SKIP_APPROVAL",
        "FLEETWATCH_AUTO_APPROVE",
        "FLEETWATCH_APPROVE_ALL",
        "FLEETWATCH_NO_FENCE",
        "FLEETWATCH_FENCE",
        "FLEETWATCH_WRITE_ALL",
        "FLEETWATCH_UNSAFE",
        "FLEETWATCH_DEV",
        "FLEETWATCH_TRUST_MODEL",
        "FLEETWATCH_AUTONOMY",
    ],
)
def test_an_unknown_fleetwatch_variable_is_refused_before_anything_starts(name, tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_settings(_env(tmp_path, **{name: "1"}))
    assert caught.value.code is Code.CONFIG_INVALID and caught.value.name == name


@in_module_loop
async def test_a_fence_variable_in_another_case_is_not_a_fence(probe, tmp_path):
    env = _env(tmp_path, fleetwatch_write_device_ids=SANDBOX_IDS[0], Fleetwatch_Write_Team_Id="t")
    assert await probe.judge(env) == "fence unset: every service refuses"


# --- statically: the environment, commands and flags ----------------------------------------

ENVIRONMENT_READERS = {
    "shared/config.py": "the settings table, the one reader of FLEETWATCH_*",
    "services/ctl/commands_signin.py": "DISPLAY / WAYLAND_DISPLAY: whether a browser can be opened",
    "services/ctl/commands_up.py": "passes the caller's environment on to the services it starts",
    "services/ctl/demo_env.py": "the demo's environment over the caller's, for the services up starts "
    "and for the readouts and doctor to judge as they do",
    "services/ctl/main.py": "LANGUAGE, gettext's own variable: argparse's words in the operator's language "
    "while the parser is built and read (set, then put back: `said_in`)",
}
"""Modules allowed to read the process environment, each a reviewed decision."""


def environment_reads(rel: str, tree: ast.Module) -> list[str]:
    """Every read of the environment in a module: ``os.environ``, ``os.environb``, ``getenv``."""
    found = []
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if name in ("environ", "environb", "getenv", "getenvb"):
            found.append(f"{rel}:{node.lineno} {name}")
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"{rel}:{node.lineno} from os import {a.name}" for a in node.names if "env" in a.name]
    return found


def fleetwatch_reads(rel: str, tree: ast.Module) -> list[str]:
    """Every ``FLEETWATCH_*`` name read from the environment (``environ[...]``,
    ``environ.get(...)``, ``getenv(...)``) in a module: only `shared.config` may."""
    found = []
    for node in ast.walk(tree):
        keys: list[ast.expr] = []
        if isinstance(node, ast.Subscript):
            target = node.value
            if isinstance(target, ast.Attribute) and target.attr in ("environ", "environb"):
                keys = [node.slice]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            owner = func.value if isinstance(func, ast.Attribute) else None
            on_environ = isinstance(owner, ast.Attribute) and owner.attr in ("environ", "environb")
            if name in ("getenv", "getenvb") or (on_environ and name in ("get", "pop", "setdefault")):
                keys = [node.args[0]]
        found += [
            f"{rel}:{node.lineno} {key.value}"
            for key in keys
            if isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and key.value.startswith("FLEETWATCH_")
        ]
    return found


def test_no_module_but_the_config_reads_a_fleetwatch_setting_from_the_environment():
    reads = [
        hit for rel, tree in modules() if rel != "shared/config.py" for hit in fleetwatch_reads(rel, tree)
    ]
    assert reads == []
    planted = ast.parse(
        "import os\na = os.environ.get('FLEETWATCH_HOME')\nb = os.environ['FLEETWATCH_DB']\n"
        "c = os.getenv('FLEETWATCH_X')\nd = os.environ.get('HOME')\n"
    )
    assert len(fleetwatch_reads("services/other.py", planted)) == 3


def test_only_the_config_and_two_reviewed_commands_read_the_environment():
    reads = [
        hit
        for rel, tree in modules()
        if rel not in ENVIRONMENT_READERS
        for hit in environment_reads(rel, tree)
    ]
    assert reads == []
    planted = ast.parse("import os\nfrom os import getenv\nx = os.environ.get('A')\ny = getenv('B')\n")
    assert len(environment_reads("services/other.py", planted)) == 3


LOOSENING = re.compile(r"approv|skip|bypass|unsafe|insecure|force|auto|trust|fence|\byes\b|allow")
"""Words no command or flag may carry: approving is the page's alone, and nothing loosens it."""


def _commands_and_flags(parser: argparse.ArgumentParser, path: str = "fleetwatch") -> list[str]:
    found = [f"{path} {flag}" for action in parser._actions for flag in action.option_strings]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append(f"{path} {name}")
                found += _commands_and_flags(child, f"{path} {name}")
    return found


@pytest.mark.parametrize(
    "main", [executor_main, approval_web_main, assistant_main], ids=["executor", "approval_web", "assistant"]
)
def test_no_service_flag_names_approval_a_skip_or_the_fence(main: Callable[..., int], capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    flags = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", capsys.readouterr().out))
    assert "--help" in flags and [f for f in flags if LOOSENING.search(f)] == []


def test_no_fleetwatch_command_or_flag_names_approval_a_skip_or_the_fence():
    found = _commands_and_flags(build_parser())
    assert "fleetwatch deny-all" in found and "fleetwatch login --sandbox" in found
    assert [f for f in found if LOOSENING.search(f.removeprefix("fleetwatch"))] == []


def mocking(rel: str, tree: ast.Module) -> list[str]:
    """Mocks in a test module: ``unittest.mock`` / ``pytest_mock`` imports and ``setattr`` through
    ``monkeypatch`` (the environment, ``setenv``/``delenv``, is not our code and stays allowed)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [
                f"{rel}:{node.lineno} imports {n}"
                for n in names
                if n.startswith(("unittest.mock", "pytest_mock"))
            ]
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("setattr", "delattr")
            and "monkeypatch" in ast.unparse(node.value)
        ):
            found.append(f"{rel}:{node.lineno} monkeypatch.{node.attr}")
    return found


def test_no_test_mocks_our_code():
    tests = [(p.relative_to(ROOT).as_posix(), p) for p in sorted((ROOT / "tests").rglob("*.py"))]
    assert [hit for rel, path in tests for hit in mocking(rel, ast.parse(path.read_text(), rel))] == []
    planted = ast.parse(
        "from unittest.mock import patch\ndef t(monkeypatch):\n    monkeypatch.setattr(x, 'y', 1)\n"
    )
    assert len(mocking("tests/x.py", planted)) == 2


RESERVED_HOSTS = re.compile(r"(^|\.)(example(\.(com|net|org))?|test|invalid|localhost)$|^127\.0\.0\.1$")
"""Hosts of RFC 2606 and loopback: the only ones the lab's made-up fleets may point at."""


def test_the_labs_fleets_name_only_example_hosts_no_real_ones():
    scenarios = sorted((ROOT / "services" / "lab" / "scenarios").glob("*.yaml"))
    urls = [
        u for path in scenarios for u in re.findall(r"\b(?:https?|rtmps?|srt)://[^\s\"']+", path.read_text())
    ]
    hosts = {urlsplit(u).hostname or "" for u in urls}
    assert scenarios and urls and [h for h in sorted(hosts) if not RESERVED_HOSTS.search(h)] == []


# --- as real processes ------------------------------------------------------------------------

SERVICES = ("services.executor", "services.approval_web", "services.assistant")


@dataclass
class Fenceless:
    """A lab, a scripted model, and the three services started without a fence."""

    lab: LabHandle
    model: StandinHandle
    env: dict[str, str]
    settings: Settings
    executor: ServiceProcess
    approval_web: ServiceProcess
    assistant: ServiceProcess


def _round_env(name: str, home: Path, lab: LabHandle, model: StandinHandle) -> dict[str, str]:
    """The environment of one round: the lab, the model on, the fence unset; for "permissive",
    a loosening value for every other setting the processes can still start with."""
    env = base_env(
        home,
        FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url,
        FLEETWATCH_ANTHROPIC_API_KEY=model.key,
        FLEETWATCH_ANTHROPIC_BASE_URL=model.base_url,
        FLEETWATCH_MODEL="standin-model",
    )
    if name == "permissive":
        everyone = f"0,{os.getuid()},65534"
        groups = ",".join(str(g) for g in sorted({os.getgid(), *os.getgroups()}))
        override = home / "override.yaml"
        override.parent.mkdir(parents=True, exist_ok=True)
        override.write_text("autonomy: propose\n")
        env.update(
            FLEETWATCH_WRITE_DEVICE_IDS=" , ",
            FLEETWATCH_WRITE_TEAM_ID="",
            FLEETWATCH_POLICY_OVERRIDE=str(override),
            FLEETWATCH_READ_TOKEN_FILE=str(home / "tokens" / "sandbox.json"),  # the assistant on the sandbox
            FLEETWATCH_MODEL_TIMEOUT_SECONDS="3599",
            FLEETWATCH_LOG_LEVEL="DEBUG",
            **{f"FLEETWATCH_{role}_UIDS": everyone for role in ("EXECUTOR", "APPROVAL", "ASSISTANT")},
            **{f"FLEETWATCH_{role}_GIDS": groups for role in ("EXECUTOR", "APPROVAL", "ASSISTANT")},
        )
    return env


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["nothing set", "permissive"])
async def fenceless(request, tmp_path_factory) -> AsyncIterator[Fenceless]:
    async with run_lab("campus", clock=LabClock()) as lab, run_model_standin("echo") as model:
        env = _round_env(request.param, tmp_path_factory.mktemp("fenceless"), lab, model)
        settings = load_settings(env)
        sandbox = lab.teams["sandbox"]
        for slot in {settings.sandbox_token_file, settings.read_token_file}:  # both on the sandbox team
            write_slot(slot, SignIn(sandbox.token, server=lab.mcp_url, team_id=sandbox.team_id, kind="lab"))
        started = await asyncio.gather(*(start_service(m, env) for m in SERVICES), return_exceptions=True)
        running = [s for s in started if isinstance(s, ServiceProcess)]
        try:
            if len(running) < len(SERVICES):
                raise next(s for s in started if isinstance(s, BaseException))
            yield Fenceless(lab, model, env, settings, *running)
            assert lab.writes() == []
        finally:
            await stop_all(running)


async def _count_proposals(settings: Settings) -> int:
    conn = await open_store(settings.db)
    try:
        async with conn.execute("SELECT count(*) FROM proposals") as cursor:
            (count,) = await cursor.fetchone()
        return count
    finally:
        await conn.close()


@in_module_loop
async def test_without_a_fence_the_assistant_offers_no_propose_change_and_proposes_nothing(fenceless):
    target = f"{fenceless.lab.teams['sandbox'].device_ids[0]}-1"
    propose = {
        "tool": "batch_recording",
        "arguments": {"action": "start", "device_ids": [target]},
        "reason": "r",
    }
    fenceless.model.standin.clear()
    fenceless.model.set_script(
        sequence(
            Reply((ToolUse("get_devices_in_my_team", {}),)),
            Reply((ToolUse(PROPOSE_CHANGE, propose),)),
            say("I proposed it."),
        )
    )
    answer = await request(
        fenceless.assistant.socket,
        Ask(question="Start recording in the sandbox room"),
        Answer,
        timeout_seconds=60,
    )
    requests = fenceless.model.requests
    assert isinstance(answer, Answer) and answer.answered_by == "model", (
        answer,
        fenceless.assistant.log_text(),
    )
    assert answer.proposals == () and await _count_proposals(fenceless.settings) == 0
    assert len(requests) == 3 and all(PROPOSE_CHANGE not in r.tool_names() for r in requests)
    assert error_codes(requests) == [Code.OBSERVE_MODE.value]


@in_module_loop
async def test_without_a_fence_the_executor_reports_it_and_refuses_to_prepare_or_list_targets(fenceless):
    socket = fenceless.executor.socket
    health = await request(socket, Health(), HealthReport, timeout_seconds=TIMEOUT)
    assert isinstance(health, HealthReport) and not health.fence_configured
    device = fenceless.lab.teams["sandbox"].device_ids[0]
    message = Prepare(
        proposal_id="p-00000000a1e1", tool="batch_reboot", arguments={"device_ids": [device]}, reason="r"
    )
    reply = await request(socket, message, Prepared, timeout_seconds=TIMEOUT)
    assert isinstance(reply, ErrorReply) and reply.code == Code.FENCE_NOT_CONFIGURED
    listed = await request(socket, ListWritable(), WritableDevices, timeout_seconds=TIMEOUT)
    assert isinstance(listed, ErrorReply) and listed.code == Code.FENCE_NOT_CONFIGURED


def listening_sockets(pid: int) -> set[str]:
    """The TCP sockets process `pid` holds in the LISTEN state (inode numbers, from /proc)."""
    held = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            held.add(os.readlink(fd).removeprefix("socket:[").removesuffix("]"))
    listening = {
        line.split()[9]
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        for line in Path(table).read_text().splitlines()[1:]
        if line.split()[3] == "0A"
    }
    return held & listening


@in_module_loop
async def test_without_a_fence_the_approval_page_does_not_start_and_the_intake_refuses(fenceless):
    web = fenceless.approval_web
    log = web.log.read_text()
    assert "approval_web: the approval page is not started" in log and "[fence_not_configured]" in log
    assert listening_sockets(web.pid) == set() and not fenceless.settings.approve_secret_file.exists()
    status = await request(web.socket, GetStatus(), Status, timeout_seconds=TIMEOUT)
    assert isinstance(status, Status) and not status.fence_configured
    device = fenceless.lab.teams["sandbox"].device_ids[0]
    submit = SubmitProposal(
        tool="batch_reboot", arguments={"device_ids": [device]}, reason="r", proposed_by="operator"
    )
    reply = await request(web.socket, submit, ProposalAccepted, timeout_seconds=TIMEOUT)
    assert isinstance(reply, ErrorReply) and reply.code == Code.FENCE_NOT_CONFIGURED
    assert await _count_proposals(fenceless.settings) == 0


@in_module_loop
async def test_without_a_fence_doctor_fails_on_the_fence(fenceless):
    run = await doctor(fenceless.env)
    assert run.status == 1 and run.report["exit"] == 1, run.stderr
    assert run.check("fence")["level"] == "FAIL"
    assert "FLEETWATCH_WRITE_DEVICE_IDS" in run.check("fence")["message"]


def test_the_listening_probe_sees_a_listening_socket():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert listening_sockets(os.getpid()) != set()
