"""The systemd units: systemd's own verifier passes on each, every hardening option a reviewer
expects is there, and units, users, folders and the start order agree with each other."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shared.config import SERVICE_LANG, SERVICE_PATH, SETTINGS, service_settings
from tests.deploy.systemd_units import (
    REPO,
    UNITS,
    Scratch,
    command,
    one,
    parse_unit,
    render,
    unit_path,
    values,
)

TEMPLATES = REPO / "deploy" / "systemd"
HARDENING = {
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
    "PrivateDevices": "yes",
    "ProtectKernelTunables": "yes",
    "ProtectKernelModules": "yes",
    "ProtectKernelLogs": "yes",
    "ProtectControlGroups": "yes",
    "LockPersonality": "yes",
    "MemoryDenyWriteExecute": "yes",
    "RestrictNamespaces": "yes",
    "RestrictRealtime": "yes",
    "RestrictSUIDSGID": "yes",
    "CapabilityBoundingSet": "",
    "UMask": "0077",
}
NETWORK = {
    "executor": {"AF_UNIX", "AF_INET", "AF_INET6"},
    "approval-web": {"AF_UNIX", "AF_INET", "AF_INET6"},  # the page holds [::1] too (issue 24)
    "assistant": {"AF_UNIX", "AF_INET", "AF_INET6"},
}
MODULES = {
    "executor": ["services.executor"],
    "approval-web": ["services.approval_web"],
    "assistant": ["services.assistant", "--page"],  # assistant.sock and the ask page, as under `up`
}
USERS = {
    "executor": "fleetwatch-executor",
    "approval-web": "fleetwatch-web",
    "assistant": "fleetwatch-assistant",
}


def template(unit: str) -> dict[str, list[tuple[str, str]]]:
    return parse_unit((TEMPLATES / f"fleetwatch-{unit}.service").read_text())


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The units as install.sh writes them, for this interpreter, without users."""
    root = tmp_path_factory.mktemp("root")
    result = render(root, "fleetwatch", sys.executable, users=False)
    assert result.returncode == 0, result.stderr
    return root


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None and not os.environ.get("CI"),
    reason="systemd-analyze is not installed (scripts/setup --system installs it; in CI this fails instead)",
)
def test_systemd_analyze_verify_passes_on_every_unit_without_a_warning(rendered: Path):
    units = [unit_path(rendered, "fleetwatch", u) for u in UNITS]
    units.append(rendered / "etc" / "systemd" / "system" / "fleetwatch.target")
    result = subprocess.run(
        ["systemd-analyze", "verify", *map(str, units)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "" and result.stderr.strip() == "", result.stderr


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None and not os.environ.get("CI"),
    reason="systemd-analyze is not installed (scripts/setup --system installs it; in CI this fails instead)",
)
@pytest.mark.parametrize("unit", UNITS)
def test_systemd_rates_each_unit_exposure_at_2_or_below(rendered: Path, unit: str):
    result = subprocess.run(
        [
            "systemd-analyze",
            "security",
            "--offline=true",
            "--threshold=20",
            str(unit_path(rendered, "fleetwatch", unit)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert "Overall exposure level" in result.stdout


@pytest.mark.parametrize("unit", UNITS)
def test_every_unit_has_the_hardening_a_reviewer_expects(unit: str):
    service = template(unit)
    missing = {k: v for k, v in HARDENING.items() if v not in values(service, "Service", k)}
    assert missing == {}
    assert values(service, "Service", "SystemCallFilter")[0] == "@system-service"
    assert set(one(service, "Service", "RestrictAddressFamilies").split()) == NETWORK[unit]
    assert values(service, "Service", "PrivateUsers") == []  # it would blind the SO_PEERCRED check
    assert one(service, "Service", "Restart") == "always"  # a SIGTERM from its own user included
    assert one(service, "Service", "RestartPreventExitStatus") == "2"  # a refusal to start stays down


@pytest.mark.parametrize("unit", UNITS)
def test_each_unit_runs_its_own_module_as_its_own_user_with_private_state(unit: str):
    service = template(unit)
    assert one(service, "Service", "User") == USERS[unit]
    assert command(one(service, "Service", "ExecStart"))[1:] == ["-m", *MODULES[unit]]
    assert one(service, "Service", "StateDirectoryMode") == "0700"
    assert one(service, "Service", "RuntimeDirectoryMode") == "0750"
    runtime = one(service, "Service", "RuntimeDirectory")
    env = dict(a.partition("=")[::2] for a in values(service, "Service", "Environment"))
    assert env["FLEETWATCH_RUNTIME_DIR"] == f"/run/{runtime}"
    assert env["FLEETWATCH_HOME"] == f"/var/lib/{one(service, 'Service', 'StateDirectory')}"
    ready = command(one(service, "Service", "ExecStartPost"))
    assert ready[0] == "/bin/sh" and ready[-1].startswith(f"/run/{runtime}/") and ready[-1].endswith(".sock")


def test_only_approval_web_joins_the_executors_group_and_only_it_may_connect():
    groups = {u: " ".join(values(template(u), "Service", "SupplementaryGroups")).split() for u in UNITS}
    assert [u for u, g in groups.items() if "fleetwatch-executor" in g] == ["approval-web"]
    assert one(template("executor"), "Service", "Group") == "fleetwatch-executor"
    assert {one(template(u), "Service", "Group") for u in ("approval-web", "assistant")} == {
        "fleetwatch-operators"
    }


def test_only_the_executor_and_approval_web_may_write_the_store_and_the_assistant_cannot_see_it():
    store = "/var/lib/fleetwatch/store"
    for unit in UNITS:
        service = template(unit)
        groups = " ".join(values(service, "Service", "SupplementaryGroups")).split()
        writes = store in values(service, "Service", "ReadWritePaths")
        in_group = "fleetwatch" in groups or one(service, "Service", "Group") == "fleetwatch"
        assert (writes, in_group) == ((True, True) if unit != "assistant" else (False, False)), unit
    assert values(template("assistant"), "Service", "InaccessiblePaths") == [f"-{store}"]
    tmpfiles = (TEMPLATES / "fleetwatch.tmpfiles").read_text().splitlines()
    assert f"z {store} 2770 root fleetwatch -" in tmpfiles
    assert f"z {store}/fleetwatch.db* 0660 root fleetwatch -" in tmpfiles


def test_secrets_come_from_root_only_environment_files_and_no_unit_holds_one():
    for unit in UNITS:
        service = template(unit)
        files = values(service, "Service", "EnvironmentFile")
        assert files[0] == "/etc/fleetwatch/fleetwatch.env" and files[1].startswith("-/etc/fleetwatch/")
        assert not any("KEY" in a or "TOKEN=" in a for a in values(service, "Service", "Environment"))


def test_the_units_start_executor_then_approval_web_then_the_assistant():
    web, assistant = template("approval-web"), template("assistant")
    assert "fleetwatch-executor.service" in one(web, "Unit", "After").split()
    assert "fleetwatch-executor.service" in one(web, "Unit", "Requires").split()
    assert "fleetwatch-approval-web.service" in one(assistant, "Unit", "After").split()
    assert "fleetwatch-approval-web.service" in one(assistant, "Unit", "Wants").split()
    target = parse_unit((TEMPLATES / "fleetwatch.target").read_text())
    assert set(one(target, "Unit", "Wants").split()) == {f"fleetwatch-{u}.service" for u in UNITS}
    for unit in UNITS:
        assert one(template(unit), "Install", "WantedBy") == "fleetwatch.target"


def test_install_renders_the_interpreter_and_names_into_every_unit(tmp_path: Path):
    result = render(tmp_path, "fwrender", "/usr/bin/python3", users=False)
    assert result.returncode == 0, result.stderr
    for unit in UNITS:
        service = parse_unit(unit_path(tmp_path, "fwrender", unit).read_text())
        assert command(one(service, "Service", "ExecStart"))[0] == "/usr/bin/python3"
        assert one(service, "Service", "User").startswith("fwrender-")
        assert "fleetwatch" not in unit_path(tmp_path, "fwrender", unit).read_text().replace("FLEETWATCH", "")


SERVICE_OF = {"executor": "executor", "approval-web": "approval_web", "assistant": "assistant"}


@pytest.mark.parametrize("unit", UNITS)
def test_each_unit_unsets_every_setting_its_service_does_not_read(unit: str):
    service = template(unit)
    unset = " ".join(values(service, "Service", "UnsetEnvironment")).split()
    expected = [s.name for s in SETTINGS if s.name not in service_settings(SERVICE_OF[unit])]
    lines = "\n".join(f"UnsetEnvironment={name}" for name in expected)
    assert unset == expected, f"fleetwatch-{unit}.service's UnsetEnvironment= lines must be:\n{lines}"
    assert values(service, "Service", "PassEnvironment") == []
    env = dict(a.partition("=")[::2] for a in values(service, "Service", "Environment"))
    assert (env["PATH"], env["LANG"], env["HOME"]) == (SERVICE_PATH, SERVICE_LANG, "/nonexistent")


@pytest.mark.parametrize("unit", UNITS)
def test_a_unit_passes_its_service_only_its_own_settings_whichever_file_sets_them(unit: str, tmp_path: Path):
    root = tmp_path / "root"
    assert render(root, "fleetwatch", sys.executable, users=False).returncode == 0
    every = "".join(f"{s.name}=x\n" for s in SETTINGS)  # an operator who put everything everywhere
    for env_file in (root / "etc" / "fleetwatch").glob("*.env"):
        env_file.write_text(every)
    launch = Scratch(root).launch(unit_path(root, "fleetwatch", unit), {})
    settings = {name for name in launch.env if name.startswith("FLEETWATCH_")}
    assert settings == service_settings(SERVICE_OF[unit])
    assert set(launch.env) - settings == {"PATH", "LANG", "HOME"}
