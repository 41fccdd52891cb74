"""``fleetwatch doctor`` in Spanish: every check line and its level in words, the check names
too; ``doctor --json`` stays as it was (English, raw levels) for scripts.

The walk: every check, through every branch it has (built from invented facts), says its line
in Spanish; a line with an English word left in it (outside commands, settings, paths, codes
and names, which stay as they are) fails, and names the line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec

from services.ctl.commands_doctor import probe_detail
from services.ctl.doctor import (
    Check,
    Facts,
    LiveProof,
    Probe,
    SocketFacts,
    check_fence,
    check_fence_level,
    check_guard,
    check_live,
    check_model,
    check_policy,
    check_ports,
    check_probe,
    check_queue,
    check_redaction,
    check_sign_in,
    check_socket,
    check_tools,
    check_watch,
    render,
)
from shared.config import load_settings
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN
from shared.policy.definitions import NOT_OFFERED, ToolDifference, ToolReport
from shared.wire.assistant import ModelInfo
from tests.ctl.test_doctor import settling_status, stale_watch
from tests.ctl.test_main import fleetwatch
from tests.procs import base_env

ENGLISH = frozenset(
    """the is are was not and of to in on for with none run running unknown yet until after ago
    this user may cannot answer answered answers did read sent never model folder mode team
    expired refused failed alive pending hour hours off only bound listens nothing service
    port key configured set it its ended ends every all tools self-test passed removed withheld
    from goes anyone connect exists does load valid proposable machine clock says accepted
    new device devices heartbeat heartbeats row posts console log fleet last settings shell
    running restart turn leave empty keyword lift paused denials change settle verification
    proposed room fresh verifies skipped probed open peers separate same users level
    mixed some share lab demo stand instead note guard policy queue sign-in watch fence
    redaction refreshed refresh refuses capabilities""".split()
)
"""Words that mark a line as English (none of them is a Spanish word)."""

KEPT = [
    r"`[^`]*`",  # a command to run
    r"\bfleetwatch(?: [a-z-]+)+(?: [\w.-]+)*",  # a command without backticks (the lift command)
    r"\bFLEETWATCH_\w+",  # a setting's name
    r"(?:https?://|/)\S+",  # a path or an address
    r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b",  # a code, a tool, a service (approval_web)
    r"\b(?:GetStatus|Epiphan|Slack|Teams|Anthropic's API|Sandbox Classroom|Sandbox Pearl-2)\b",
]


def english_words(line: str) -> list[str]:
    """The English words left in `line` once what stays as it is was taken out."""
    for pattern in KEPT:
        line = re.sub(pattern, " ", line)
    return [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", line) if w.lower() in ENGLISH]


SPANISH_LEVELS = ("correcto", "aviso", "fallo", "info")


def every_branch(tmp_path: Path) -> list[Check]:
    """Each check through each of its branches, in Spanish."""
    settings = load_settings(
        base_env(
            tmp_path,
            FLEETWATCH_WRITE_TEAM_ID="team-sandbox",
            FLEETWATCH_WRITE_DEVICE_IDS="29088800001,29088800004",
            FLEETWATCH_SLACK_BOT_TOKEN="xoxb-1234567890-secret-tail",
            FLEETWATCH_SLACK_CHANNEL="#av-ops",
            FLEETWATCH_TEAMS_WEBHOOK_URL="https://hooks.example.com/workflows/abc123secret",
            FLEETWATCH_ANTHROPIC_API_KEY="sk-ant-secret-value-WXYZ",
        )
    )
    bare = load_settings(base_env(tmp_path))
    now = 1_800_000_000.0
    checks: list[Check] = []
    good = Facts(settings=settings, now=now, read_tools=READ_TOOLS_OF_EPIPHAN, proposable=("batch_reboot",))
    checks += check_policy(good)
    checks += check_policy(Facts(settings=settings, now=now, read_tools=None, policy_error="x.yaml"))
    checks += check_guard(READ_TOOLS_OF_EPIPHAN) + check_guard(None)
    checks += check_redaction()
    ok = {"present": True, "ok": True, "mode": "600", "folder_mode": "700", "kind": "lab", "team_id": "t1"}
    for summary in (
        {"present": None, "code": "permission_denied"},
        {"present": False},
        {"present": True, "ok": False, "message": "x"},
        {**ok, "folder_mode": "755"},
        {**ok, "dead": True, "dead_reason": "HTTP 400 invalid_grant"},
        ok,
        {**ok, "team_id": None, "expires_at": now + 600},
        {**ok, "expires_at": now + 3 * 3600},
        {**ok, "expires_at": now - 600, "refreshable": True},
        {**ok, "expires_at": now - 600},
    ):
        for slot in ("read", "sandbox"):
            checks += check_sign_in(slot, summary, now)
    for proof in (
        LiveProof("here", "accepted", devices=3),
        LiveProof("assistant", "refreshed", devices=3, valid_until=now + 600),
        LiveProof("executor", "refused", detail="epiphan_auth", valid_until=now + 600),
        LiveProof("executor", "skipped", detail=probe_detail("not_approval")),
        LiveProof("here", "failed", detail="epiphan_unavailable"),
    ):
        checks += check_live("read", proof, now)
    checks += check_fence(settings) + check_fence(bare)
    running = msgspec.structs.replace(
        settling_status(), pending=3, kill_switch=True, executor_up=False, last_hour=1
    )
    checks += check_fence(bare, running)

    def owned(service: str, owner: str) -> SocketFacts:
        return SocketFacts(
            service, f"/run/{service}.sock", "present", mode=0o660, uid=len(owner), owner=owner
        )

    services = ("executor", "approval_web", "assistant")
    for sockets in (
        {s: owned(s, f"fw-{s}") for s in services},
        {s: owned(s, "alice") for s in services},
        {
            "executor": owned("executor", "a"),
            "approval_web": owned("approval_web", "a"),
            "assistant": owned("assistant", "bb"),
        },
        {},
    ):
        checks += check_fence_level(sockets)
    peers = (("alice(1000)",), ())
    for facts in (
        SocketFacts("executor", "/run/x.sock", "missing"),
        SocketFacts("executor", "/run/x.sock", "denied"),
        SocketFacts("executor", "/run/x.sock", "not_socket"),
        SocketFacts(
            "executor", "/run/x.sock", "present", mode=0o666, owner="a", group="b", folder_mode=0o755
        ),
        SocketFacts(
            "executor", "/run/x.sock", "present", mode=0o660, owner="a", group="b", folder_mode=0o750
        ),
    ):
        checks += check_socket(facts, peers)
    for probe in (
        Probe("executor", "skipped", probe_detail("not_allowed")),
        Probe("approval_web", "skipped", probe_detail("not_allowed")),
        Probe("executor", "up"),
        Probe("executor", "refused", "peer_not_allowed"),
        Probe("executor", "unreachable", probe_detail("denied")),
        Probe("executor", "down", probe_detail("missing", path="/run/x.sock")),
        Probe("executor", "down", "service_unavailable"),
    ):
        checks += check_probe(probe, running) + check_probe(probe, None)
    checks += check_queue(running, None) + check_queue(None, "service_unavailable")
    stale = stale_watch()
    fresh = msgspec.structs.replace(stale, alive=True, failed_beats=0, posts=())
    never = msgspec.structs.replace(stale, last_read_at=None, failed_beats=0)
    for watch in (stale, fresh, never):
        checks += check_watch(settings, watch, None)
    checks += check_watch(bare, None, "service_unavailable")
    for model_settings, running_model, error in (
        (
            settings,
            ModelInfo(kind="model", model="claude-sonnet-4-6", endpoint="https://api.anthropic.com:443"),
            None,
        ),
        (settings, ModelInfo(kind="keyword"), None),
        (bare, ModelInfo(kind="keyword"), None),
        (
            bare,
            ModelInfo(kind="demo_model", model="claude-sonnet-4-6", endpoint="http://127.0.0.1:8771"),
            None,
        ),
        (settings, None, "service_unavailable"),
        (bare, None, "service_unavailable"),
    ):
        checks += check_model(model_settings, running_model, error)
    ports = load_settings(base_env(tmp_path, FLEETWATCH_APPROVE_PORT="18767", FLEETWATCH_ASK_PORT="18768"))
    checks += check_ports(ports, None)
    checks += check_ports(ports, [("127.0.0.1", 18767), ("0.0.0.0", 18768)])
    served = {"name": "batch_reboot", "description": "x", "input_schema": {"properties": {"force": {}}}}
    names = {
        "server": "['force']",
        "server_required": "[]",
        "reviewed": "['device_ids']",
        "reviewed_required": "[]",
    }
    changed = ToolReport(
        (
            ToolDifference(
                "batch_reboot", "proposable", ("x", "input schema", "description"), True, served, names
            ),
            ToolDifference("batch_recording", "proposable", (NOT_OFFERED,), True, None),
            ToolDifference("get_device_info", "read", ("description",), True, served),
            ToolDifference("kb_fetch", "read", (NOT_OFFERED,), False, None),
            ToolDifference("get_secret_things", "new", (), False, served),
        )
    )
    for report, why in (
        (None, None),
        (None, probe_detail("no_read_slot")),
        (ToolReport(()), None),
        (changed, None),
    ):
        checks += check_tools(report, why)
    return checks


def test_every_check_says_every_branch_in_spanish(tmp_path: Path) -> None:
    checks = every_branch(tmp_path)
    assert len(checks) > 60
    lines = render(checks, language="es").splitlines()
    assert len(lines) == len(checks)
    assert [(line, english_words(line)) for line in lines if english_words(line)] == []
    for line in lines:
        assert line.split()[0] in SPANISH_LEVELS, line


def test_the_english_detector_sees_english(tmp_path: Path) -> None:
    english = render(check_fence(load_settings(base_env(tmp_path))))
    assert english_words(english)  # the walk above can fail
    assert english_words("fence: not configured") == ["fence", "not", "configured"]


async def test_doctor_speaks_spanish_as_a_person_runs_it_and_json_stays_raw(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for env, argv in (
        (base_env(home, FLEETWATCH_LANGUAGE="es"), ("doctor",)),
        (base_env(home), ("doctor", "--language", "es")),
    ):
        code, out, err = await fleetwatch(env, *argv)
        assert code == 1, err
        lines = out.splitlines()
        assert len(lines) > 15, out
        for line in lines:
            assert line.split()[0] in SPANISH_LEVELS, line
            assert english_words(line) == [], line
        assert any(line.startswith("fallo") and "interruptor" not in line for line in lines)
    code, out, _ = await fleetwatch(base_env(home, FLEETWATCH_LANGUAGE="es"), "doctor", "--json")
    report = json.loads(out)
    assert code == 1 and report["counts"]["FAIL"] > 0
    fence = next(c for c in report["checks"] if c["name"] == "fence")
    assert fence["level"] == "FAIL" and fence["message"].startswith("not configured")
    code, out, _ = await fleetwatch(base_env(home), "doctor")
    assert code == 1 and out.splitlines()[0].split()[0] in ("OK", "FAIL")


def test_the_queue_the_pauses_and_the_services_are_said_in_spanish_words() -> None:
    """Issue 28, item 4: no "autonomía propose", no raw ISO time, no "socket del executor"."""
    from services.ctl.doctor import check_queue
    from shared.text.catalogue import translations

    text = render(check_queue(settling_status(), None), language="es")
    assert "autonomía: puede proponer cambios" in text and "autonomía propose" not in text
    assert "T14:00:00" not in text and "mié 16 sep, 14:00 (UTC)" in text, text
    names = translations()["es"]
    for service, spanish in (("executor", "ejecutor"), ("assistant", "asistente")):
        for kind in ("socket", "service"):
            assert spanish in names.pgettext("doctor check", f"{kind} {service}")
    assert "GetCapabilities" not in names.gettext("up (answered GetCapabilities)")
