"""The supervisord configuration `fleetwatch up` renders, read back by supervisor's own parser:
each program's environment is exactly its own (the allowlist `shared.config.service_settings`,
issue 24 item 8), values pass as themselves or are refused by name, and a service that exits
for any reason but a refusal to start is started again (item 9). The running processes'
environments are read in ``tests/deploy/test_service_env.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from supervisor.datatypes import RestartWhenExitUnexpected
from supervisor.options import ServerOptions

from services.ctl.supervise import PROGRAMS, SERVICES, SuperviseError, daemon_environment, render_config
from shared.config import SERVICE_LANG, SERVICE_PATH, SETTINGS, load_settings, service_settings
from shared.errors import Code

CALLER = {
    "FW_CANARY": "the caller's shell only",
    "PYTHONPATH": "/opt/example/site",
    "FLEETWATCH_ANTHROPIC_API_KEY": "sk-ant-example-%41,b c",
    "FLEETWATCH_SLACK_BOT_TOKEN": "xoxb-example",
    "FLEETWATCH_SLACK_CHANNEL": "#av ops",
    "FLEETWATCH_TEAMS_WEBHOOK_URL": "https://example.com/hook?a=1&sig=%2Fx%3D",
    "FLEETWATCH_WRITE_DEVICE_IDS": "0123456789abcdef",
    "FLEETWATCH_LOG_LEVEL": "WARNING",
}


def parsed(tmp_path: Path, caller: dict[str, str]) -> dict[str, object]:
    """Render for `caller`'s environment on one account and parse it as supervisord does:
    ``{program: its process config}``."""
    env = {"HOME": str(tmp_path), **caller}
    settings = load_settings({k: v for k, v in env.items() if k != "FW_CANARY"})
    (tmp_path / ".fleetwatch" / "state" / "logs").mkdir(parents=True)
    (tmp_path / ".fleetwatch" / "run").mkdir(parents=True)
    config = tmp_path / "supervisord.conf"
    config.write_text(render_config(settings, env))
    options = ServerOptions()
    options.configfile = str(config)
    options.process_config(do_usage=False)
    return {pc.name: pc for group in options.process_group_configs for pc in group.process_configs}


def test_each_program_gets_exactly_its_own_settings_as_given_and_nothing_else(tmp_path: Path):
    programs = parsed(tmp_path, CALLER)
    assert set(programs) == set(PROGRAMS)
    base = {
        "PATH": SERVICE_PATH,
        "LANG": SERVICE_LANG,
        "HOME": str(tmp_path),
        "PYTHONPATH": "/opt/example/site",
    }
    for name, program in programs.items():
        env = program.environment
        if name not in SERVICES:  # its home only: whose it is, to a later up (shared.web.port_holder)
            assert env == {**base, "FLEETWATCH_HOME": str(tmp_path / ".fleetwatch")}, name
            continue
        own = {k: v for k, v in CALLER.items() if k in service_settings(name)}
        assert env == {**base, **own, "FLEETWATCH_HOME": str(tmp_path / ".fleetwatch")}, name
    assistant = programs["assistant"].environment
    assert assistant["FLEETWATCH_TEAMS_WEBHOOK_URL"] == CALLER["FLEETWATCH_TEAMS_WEBHOOK_URL"]
    assert assistant["FLEETWATCH_ANTHROPIC_API_KEY"] == CALLER["FLEETWATCH_ANTHROPIC_API_KEY"]
    for name in ("executor", "approval_web"):
        assert not {k for k in programs[name].environment if "SLACK" in k or "TEAMS" in k or "ANTHROPIC" in k}


def test_supervisord_itself_starts_with_no_setting_and_nothing_of_the_callers():
    assert daemon_environment({"HOME": "/root", **CALLER}) == {
        "PATH": SERVICE_PATH,
        "LANG": SERVICE_LANG,
        "PYTHONPATH": "/opt/example/site",
    }


@pytest.mark.parametrize("value", ['xoxb-a"b', "xoxb-a\nb", "xoxb-a ;b", "xoxb-a #b", "'xoxb-ab", "xoxb-ab'"])
def test_a_value_supervisord_would_change_is_refused_by_name_never_shown(tmp_path: Path, value: str):
    with pytest.raises(SuperviseError) as caught:
        parsed(tmp_path, {**CALLER, "FLEETWATCH_SLACK_BOT_TOKEN": value})
    assert caught.value.code == Code.CONFIG_INVALID
    assert "FLEETWATCH_SLACK_BOT_TOKEN" in caught.value.message and value not in caught.value.message


def test_a_service_is_started_again_after_any_exit_but_a_refusal_to_start(tmp_path: Path):
    programs = parsed(tmp_path, CALLER)
    for name in SERVICES:
        assert programs[name].autorestart is RestartWhenExitUnexpected, name
        assert programs[name].exitcodes == [2], name  # 0 (SIGTERM'd) and crashes are unexpected
        assert programs[name].startretries >= 1 and programs[name].startsecs >= 1, name


@pytest.mark.parametrize("service", SERVICES)
def test_a_setting_a_service_is_given_has_its_default_from_settings_it_is_given_too(service: str):
    """Else a service would resolve a default (``{FLEETWATCH_STATE_DIR}/...``) from a setting it
    was not given, and differ from the caller's."""
    own = service_settings(service)
    for setting in SETTINGS:
        named = set(re.findall(r"\{(FLEETWATCH_\w+)\}", setting.default))
        assert setting.name not in own or named <= own, (setting.name, sorted(named - own))
