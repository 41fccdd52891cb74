"""``fleetwatch doctor``: a healthy lab setup (three real services on one account) passes with
"process-level, same user"; each broken case gets its FAIL or WARN line; checks are pure."""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest
import pytest_asyncio

from services.ctl.commands_doctor import gather, parse_listeners
from services.ctl.demo_env import DEMO_SLACK_CHANNEL, services_settings
from services.ctl.doctor import (
    Check,
    Level,
    SocketFacts,
    check_fence,
    check_fence_level,
    check_guard,
    check_model,
    check_queue,
    check_redaction,
    check_two_people,
    check_watch,
    exit_code,
    model_data_line,
    render,
    run_checks,
)
from services.ctl.doctor_slack import SlackPreflight, check_slack_asks
from services.lab.server import LabHandle, run_lab
from shared.config import REPO_POLICY_DIR, Settings, load_settings
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN, WRITE_TOOLS_OF_EPIPHAN
from shared.epiphan.slots import SignIn, read_slot, write_slot
from shared.wire.approval import ChangeToSettle, DenialPause, Status
from shared.wire.assistant import AssistantClient, GetWatchStatus, ModelInfo, PostCounts, WatchStatus
from tests.ctl.cli import fleetwatch_async
from tests.deploy.cli import doctor
from tests.procs import base_env, start_service, stop_all
from tests.support import free_port, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Setup:
    """One account running the lab and the three services, signed in with the lab's tokens."""

    def __init__(self, lab: LabHandle, home: Path) -> None:
        self.lab = lab
        self.env = base_env(
            home,
            FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url,
            FLEETWATCH_WRITE_TEAM_ID=lab.teams["sandbox"].team_id,
            FLEETWATCH_WRITE_DEVICE_IDS=",".join(lab.teams["sandbox"].device_ids),
            FLEETWATCH_APPROVE_PORT=str(free_port()),
            FLEETWATCH_ASK_PORT=str(free_port()),
            FLEETWATCH_LAB_PORT=lab.url.rsplit(":", 1)[1],
        )
        self.settings = load_settings(self.env)
        self.sign_in()

    def sign_in(self) -> None:
        for slot, team in (
            (self.settings.read_token_file, "normal"),
            (self.settings.sandbox_token_file, "sandbox"),
        ):
            t = self.lab.teams[team]
            write_slot(slot, SignIn(t.token, server=self.lab.mcp_url, team_id=t.team_id, kind="lab"))

    def variant(self, **changes: str) -> Settings:
        return load_settings({**self.env, **changes})


async def watch_alive(settings: Settings) -> WatchStatus:
    """Until the assistant's first heartbeat has read the fleet (it starts in the background:
    the Epiphan client loads with that first read)."""
    client = AssistantClient(settings.assistant_socket, timeout_seconds=5)

    async def alive() -> WatchStatus | None:
        status = await client.call(GetWatchStatus())
        return status if status.alive and status.last_read_at else None

    return await wait_until(alive, what="the watch's first heartbeat")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    async with run_lab("campus") as lab:
        setup = Setup(lab, tmp_path_factory.mktemp("doctor"))
        services = []
        try:
            for module in ("services.executor", "services.approval_web", "services.assistant"):
                services.append(await start_service(module, setup.env))
            await watch_alive(setup.settings)
            yield setup
        finally:
            await stop_all(services)


@pytest_asyncio.fixture(loop_scope="module")
async def healthy(setup: Setup) -> Setup:
    setup.sign_in()
    return setup


def line(checks: list[Check], name: str) -> Check:
    found = [c for c in checks if c.name == name]
    assert len(found) == 1, [c.name for c in checks]
    return found[0]


async def test_a_healthy_lab_setup_passes_with_process_level_fence(healthy: Setup):
    run = await doctor(healthy.env)
    assert run.status == 0 and run.report["exit"] == 0, (run.stderr, run.failures())
    assert run.report["counts"]["FAIL"] == 0
    assert run.check("fence level")["message"].startswith("process-level, same user")
    for name in ("policy", "guard", "redaction", "sign-in read", "sign-in sandbox", "fence", "queue"):
        assert run.check(name)["level"] == "OK", run.check(name)
    for service in ("executor", "approval_web", "assistant"):
        assert (
            run.check(f"service {service}")["level"] == "OK"
            and run.check(f"socket {service}")["level"] == "OK"
        )
    assert run.check("queue")["message"].startswith("0/3 pending")
    approval_page = run.check("port approval page")
    assert approval_page["level"] == "OK" and "127.0.0.1" in approval_page["message"]
    assert run.check("model")["level"] == "INFO"
    assert run.check("model data")["message"] == "nothing is sent to a model"
    watch = run.check("watch")
    assert watch["level"] == "OK" and watch["message"].startswith("alive: fleet last read at "), watch
    assert (
        run.check("watch posts to")["message"]
        == "console (the assistant's log), as the running assistant says"
    )


async def test_doctor_says_where_the_running_assistant_posts_and_that_this_terminal_differs(
    healthy: Setup,
):
    """Issue 28, item 8: doctor and status agree on where the watch posts (the running
    assistant's destinations, as ``status`` shows them), whatever this terminal's settings say."""
    terminal = {**healthy.env, "FLEETWATCH_TEAMS_WEBHOOK_URL": "https://hooks.example.com/w/terminal-only1"}
    run = await doctor(terminal)
    where = run.check("watch posts to")
    assert where["message"] == "console (the assistant's log), as the running assistant says", where
    other = run.check("watch settings")
    assert other["level"] == "WARN" and "Teams (webhook …nly1)" in other["message"], other
    assert "Teams" not in where["message"]
    _, spanish, _ = await fleetwatch_async({**terminal, "FLEETWATCH_LANGUAGE": "es"}, "doctor")
    assert "consola (el registro del asistente), según el asistente en marcha" in spanish
    # on the lab, this terminal's settings under up's demo environment (the lab's Slack too)
    assert (
        "con la configuración de esta terminal se publicaría en consola (el registro del asistente), "
        in spanish
    )
    assert "Teams (webhook …nly1)" in spanish


async def test_a_dead_sign_in_is_a_fail_naming_the_fix(healthy: Setup):
    slot = healthy.settings.read_token_file
    write_slot(
        slot, msgspec.structs.replace(read_slot(slot), dead=True, dead_reason="HTTP 400 invalid_grant")
    )
    checks = run_checks(await gather(healthy.settings))
    dead = line(checks, "sign-in read")
    assert dead.level is Level.FAIL and "dead (HTTP 400 invalid_grant)" in dead.message
    assert "fleetwatch login" in dead.message and exit_code(checks) == 1


async def test_a_refused_and_forgotten_sandbox_sign_in_leaves_doctor_failing(healthy: Setup):
    healthy.settings.sandbox_token_file.unlink()
    check = line(run_checks(await gather(healthy.settings)), "sign-in sandbox")
    assert check.level is Level.FAIL and "fleetwatch login --sandbox" in check.message


async def test_a_slot_others_can_read_or_an_expired_static_token_fails(healthy: Setup):
    healthy.settings.read_token_file.chmod(0o644)
    assert line(run_checks(await gather(healthy.settings)), "sign-in read").level is Level.FAIL
    healthy.settings.read_token_file.chmod(0o600)
    write_slot(healthy.settings.sandbox_token_file, SignIn("t", kind="static", expires_at=time.time() - 60))
    check = line(run_checks(await gather(healthy.settings)), "sign-in sandbox")
    assert check.level is Level.FAIL and "cannot refresh" in check.message


async def test_no_fence_is_a_fail(healthy: Setup, tmp_path: Path):
    settings = healthy.variant(
        FLEETWATCH_WRITE_TEAM_ID="", FLEETWATCH_WRITE_DEVICE_IDS="", FLEETWATCH_RUNTIME_DIR=str(tmp_path)
    )
    check = line(run_checks(await gather(settings)), "fence")
    assert check.level is Level.FAIL and "not configured" in check.message


async def test_a_fence_set_only_in_the_running_services_environment_is_ok_with_a_note(healthy: Setup):
    settings = healthy.variant(FLEETWATCH_WRITE_TEAM_ID="", FLEETWATCH_WRITE_DEVICE_IDS="")
    check = line(run_checks(await gather(settings)), "fence")
    assert check.level is Level.OK and "running services' environment" in check.message


async def test_a_fence_in_this_terminal_only_is_a_warning_and_unasked_services_are_said(tmp_path: Path):
    """Issue 28, item 8: doctor holds this terminal's fence against the running approval_web's,
    and says when it could not ask it."""
    settings = load_settings(base_env(tmp_path, FLEETWATCH_WRITE_DEVICE_IDS="29088800001"))
    running = msgspec.structs.replace(settling_status(), fence_configured=False)
    (unfenced,) = check_fence(settings, running)
    assert unfenced.level is Level.WARN
    assert unfenced.message.startswith("this terminal's settings set allowlist of 1 devices, but the running")
    (unasked,) = check_fence(settings, None)
    assert unasked.level is Level.OK and unasked.message == (
        "allowlist of 1 devices, in this terminal's settings (the running approval_web could not be asked)"
    )
    (agreed,) = check_fence(settings, settling_status())
    assert agreed.level is Level.OK and agreed.message == "allowlist of 1 devices"


async def test_services_that_are_not_running_fail(healthy: Setup, tmp_path: Path):
    checks = run_checks(await gather(healthy.variant(FLEETWATCH_RUNTIME_DIR=str(tmp_path))))
    for service in ("executor", "approval_web", "assistant"):
        assert line(checks, f"service {service}").level is Level.FAIL
    assert line(checks, "queue").level is Level.INFO and exit_code(checks) == 1


async def test_a_socket_anyone_may_open_is_a_warning(healthy: Setup):
    socket_path = healthy.settings.approval_socket
    socket_path.chmod(0o666)
    try:
        check = line(run_checks(await gather(healthy.settings)), "socket approval_web")
    finally:
        socket_path.chmod(0o660)
    assert check.level is Level.WARN and "anyone on this host may connect" in check.message


async def test_a_page_port_bound_beyond_loopback_is_a_fail(healthy: Setup):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as exposed:
        exposed.bind(("0.0.0.0", healthy.settings.ask_port))
        exposed.listen(1)
        check = line(run_checks(await gather(healthy.settings)), "port ask page")
    assert check.level is Level.FAIL and "0.0.0.0" in check.message


async def test_the_model_key_is_masked_and_the_data_sent_is_named(healthy: Setup):
    settings = healthy.variant(FLEETWATCH_ANTHROPIC_API_KEY="sk-ant-secret-value-WXYZ")
    running = ModelInfo(kind="model", model="claude-sonnet-4-6", endpoint="https://api.anthropic.com:443")
    checks = check_model(settings, running)
    model, data = line(checks, "model"), line(checks, "model data")
    assert model.level is Level.OK and "…WXYZ" in model.message and "secret-value" not in model.message
    assert "claude-sonnet-4-6 at https://api.anthropic.com:443" in model.message
    assert data.message == model_data_line() and "FLEETWATCH_ANTHROPIC_API_KEY empty" in data.message
    assert "IP addresses" in data.message and "serial numbers" in data.message


async def test_doctor_tells_the_running_assistants_model_not_this_shells(healthy: Setup):
    assert (await gather(healthy.settings)).model == ModelInfo(kind="keyword")
    with_key = healthy.variant(FLEETWATCH_ANTHROPIC_API_KEY="sk-ant-secret-value-WXYZ")
    model = line(run_checks(await gather(with_key)), "model")
    assert model.message.startswith("the running assistant has no model key: keyword answers only")
    assert "restart the services" in model.message and "WXYZ" not in model.message
    demo = ModelInfo(kind="demo_model", model="claude-sonnet-4-6", endpoint="http://127.0.0.1:8771")
    model, data = check_model(healthy.settings, demo)
    assert "the lab's demo model" in model.message and "nothing leaves this machine" in model.message
    assert data.message.startswith("goes to the lab's demo model on this machine only.")
    unknown = check_model(with_key, None, "service_unavailable")[0]
    assert unknown.message.endswith(
        "(from this shell's settings; the assistant did not say: service_unavailable)"
    )


def settling_status() -> Status:
    """A queue with one denial pause and one change to settle."""
    return Status(
        pending=0,
        max_pending=3,
        last_hour=3,
        per_hour=10,
        kill_switch=False,
        executor_up=True,
        fence_configured=True,
        autonomy="propose",
        pauses=(
            DenialPause(
                tool="batch_recording",
                target="29088800004",
                until="2026-09-16T14:00:00.000Z",
                target_name="Sandbox Classroom",
                denials=3,
            ),
        ),
        unsettled=(
            ChangeToSettle(
                proposal_id="p-0123456789ab",
                tool="batch_reboot",
                action=None,
                targets=("29088800001",),
                target_names=("Sandbox Pearl-2",),
                outcome="unknown",
                verification=None,
                finished_at="2026-09-16T13:00:00.000Z",
            ),
        ),
    )


async def test_each_denial_pause_and_change_to_settle_is_a_warning_with_its_command():
    status = settling_status()
    queue, pause, unsettled = check_queue(status, None)
    assert queue.level is Level.OK
    assert pause.level is Level.WARN and pause.message == (
        "start or stop recording in “Sandbox Classroom” paused until Wed 16 Sep, 14:00 (UTC) after 3 "
        "denials; lift it: fleetwatch resume --denials batch_recording 29088800004"
    )
    assert unsettled.level is Level.WARN and unsettled.message.startswith(
        "reboot in “Sandbox Pearl-2” (p-0123456789ab) ended unknown"
    )
    assert unsettled.message.endswith("fleetwatch acknowledge p-0123456789ab")


async def test_a_policy_that_does_not_load_fails_policy_and_guard(healthy: Setup, tmp_path: Path):
    shutil.copytree(REPO_POLICY_DIR, tmp_path / "policy")
    (tmp_path / "policy" / "tool_policy.yaml").write_text("read: [\n")
    checks = run_checks(await gather(healthy.variant(FLEETWATCH_POLICY_DIR=str(tmp_path / "policy"))))
    assert line(checks, "policy").level is Level.FAIL and line(checks, "guard").level is Level.FAIL


# --- pure checks -------------------------------------------------------------------------------


def owned(service: str, owner: str) -> SocketFacts:
    return SocketFacts(
        service, f"/run/{service}.sock", "present", mode=0o660, uid=hash(owner) % 1000, owner=owner
    )


def stale_watch() -> WatchStatus:
    """A watch whose heartbeat failed three times in a row, with two failed Slack posts."""
    return WatchStatus(
        alive=False,
        now="2026-09-16T13:10:00.000Z",
        interval_seconds=180,
        last_read_at="2026-09-16T13:00:00.000Z",
        last_beat_at="2026-09-16T13:09:00.000Z",
        failed_beats=3,
        last_code="epiphan_auth",
        devices=30,
        online=28,
        fix_first=1,
        fix_soon=2,
        when_convenient=3,
        posts=(PostCounts("slack", sent=4, failed=2, last_code="post_failed", to="#av-ops"),),
    )


async def test_the_watch_line_warns_when_it_is_not_alive_or_posts_fail_and_masks_where_it_posts(
    tmp_path: Path,
):
    settings = load_settings(
        base_env(
            tmp_path,
            FLEETWATCH_SLACK_BOT_TOKEN="xoxb-1234567890-secret-tail",
            FLEETWATCH_SLACK_CHANNEL="#av-ops",
            FLEETWATCH_TEAMS_WEBHOOK_URL="https://hooks.example.com/workflows/abc123secret",
        )
    )
    checks = check_watch(settings, stale_watch(), None)
    assert [(c.name, c.level) for c in checks] == [
        ("watch", Level.WARN),
        ("watch posts to", Level.INFO),
        ("watch settings", Level.WARN),  # the running assistant posts to Slack only
        ("watch posts", Level.WARN),
    ]
    assert "3 failed heartbeats in a row (epiphan_auth)" in checks[0].message
    assert checks[1].message == "Slack #av-ops, as the running assistant says"
    here = checks[2].message
    assert "Slack #av-ops (token …tail)" in here and "Teams (webhook …cret)" in here
    assert "secret-tail" not in here and "abc123" not in here
    unasked = check_watch(settings, None, "service_unavailable")
    assert unasked[0].level == Level.INFO
    assert unasked[1].message.startswith(
        "the running assistant could not be asked (service_unavailable); this terminal's settings say: "
    )


async def test_fence_level_is_os_level_only_with_three_different_users():
    separate = {s: owned(s, f"fw-{s}") for s in ("executor", "approval_web", "assistant")}
    same = {s: owned(s, "alice") for s in separate}
    mixed = {**separate, "assistant": owned("assistant", "fw-executor")}
    assert check_fence_level(separate)[0].message.startswith("OS-level, separate users")
    assert check_fence_level(same)[0].message.startswith("process-level, same user")
    assert check_fence_level(mixed)[0].level is Level.WARN
    assert check_fence_level({})[0].level is Level.INFO


async def test_the_redaction_self_test_plants_srt_stream_ids_ip_addresses_and_serial_numbers():
    (check,) = check_redaction()
    assert check.level is Level.OK and "SRT stream IDs" in check.message and "IP addresses" in check.message


async def test_the_guard_check_runs_the_real_guard_on_every_write_tool():
    assert check_guard(READ_TOOLS_OF_EPIPHAN)[0].level is Level.OK
    assert check_guard(READ_TOOLS_OF_EPIPHAN | WRITE_TOOLS_OF_EPIPHAN)[0].level is Level.OK
    assert check_guard(None)[0].level is Level.FAIL


async def test_listeners_are_read_from_proc_net_tcp_in_both_families():
    tcp = (
        "  sl  local_address rem_address   st\n"
        "   0: 0100007F:2247 00000000:0000 0A\n"
        "   1: 00000000:2246 00000000:0000 0A\n"
        "   2: 0100007F:9C40 0100007F:2247 01\n"
    )
    tcp6 = "  sl  local_address rem_address st\n   0: 00000000000000000000000001000000:2247 0:0 0A\n"
    assert parse_listeners([tcp, tcp6]) == (("127.0.0.1", 8775), ("0.0.0.0", 8774), ("::1", 8775))


async def test_checks_return_words_as_data_and_only_the_rendering_picks_a_language(tmp_path):
    import inspect

    from services.ctl import doctor
    from shared.text.catalogue import Words

    checks = [f for name, f in vars(doctor).items() if name.startswith("check_") and callable(f)]
    assert len(checks) > 12
    assert [f.__name__ for f in checks if "language" in inspect.signature(f).parameters] == []
    (fence,) = doctor.check_fence(load_settings(base_env(tmp_path)))
    assert isinstance(fence.words, Words) and fence.message.startswith("not configured")
    english, spanish = doctor.render([fence]), doctor.render([fence], language="es")
    assert english.split()[:3] == ["FAIL", "fence", "not"] and spanish.split()[:2] == ["fallo", "cerca"]


async def test_doctor_on_the_lab_judges_the_settings_the_demos_services_run_with(tmp_path: Path):
    """Walk item 6: during the demo, doctor said asks from Slack were off and told to restart
    the services over the watch's settings, judging this terminal's settings alone."""
    here = load_settings(base_env(tmp_path))  # on the lab (the default MCP URL), no Slack in this shell
    running = services_settings(here, "es")
    asks = check_slack_asks(running, SlackPreflight("ok"))
    assert all("FLEETWATCH_SLACK_APP_TOKEN is not set" not in c.message for c in asks), asks
    watch = msgspec.structs.replace(
        stale_watch(),
        alive=True,
        failed_beats=0,
        posts=(PostCounts("console"), PostCounts("slack", to=DEMO_SLACK_CHANNEL), PostCounts("teams")),
    )
    assert [c.name for c in check_watch(running, watch, None)] == ["watch", "watch posts to"]
    elsewhere = load_settings(base_env(tmp_path, FLEETWATCH_EPIPHAN_MCP_URL="https://epiphan.example/mcp"))
    assert services_settings(elsewhere, "es") == elsewhere  # off the lab: this terminal's settings


async def test_doctor_says_the_last_read_in_the_operators_time_and_two_people_in_agreement(tmp_path: Path):
    settings = load_settings(base_env(tmp_path))
    watch = msgspec.structs.replace(stale_watch(), alive=True, failed_beats=0, posts=())
    said = render(check_watch(settings, watch, None), language="es")
    assert "2026-09-16T13:00:00.000Z" not in said and "13:00" in said, said
    one = render(check_two_people(settings, ["batch_firmware_update"]), language="es")
    assert "batch_firmware_update necesita dos personas" in one, one
    two = render(check_two_people(settings, ["batch_firmware_update", "batch_reboot"]), language="es")
    assert "necesitan dos personas" in two, two
    assert "batch_firmware_update needs two people" in render(
        check_two_people(settings, ["batch_firmware_update"])
    )
