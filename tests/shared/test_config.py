"""Settings: one declarative table read from an injected environment."""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import shared
from shared.config import SETTINGS, ConfigError, Secret, Setting, Settings, load_settings
from shared.errors import Code

API_KEY = "sk-ant-test-0123456789-do-not-print"


def test_the_table_and_the_settings_fields_agree_both_ways():
    assert [s.attr for s in SETTINGS] == [f.name for f in dataclasses.fields(Settings)]
    assert len({s.name for s in SETTINGS}) == len(SETTINGS)
    assert all(s.name.startswith("FLEETWATCH_") and s.help for s in SETTINGS)


def test_each_setting_is_declared_once_as_a_field_typed_by_what_its_parser_returns():
    """The row is the field: its name gives the variable, its type is its parser's return."""
    types = typing.get_type_hints(Settings)
    for field, row in zip(dataclasses.fields(Settings), SETTINGS, strict=True):
        assert row == Setting(f"FLEETWATCH_{field.name.upper()}", **field.metadata["row"])
        assert typing.get_type_hints(row.parse)["return"] == types[field.name], row.name


def test_defaults_put_all_state_under_one_home_folder(tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    home = tmp_path / ".fleetwatch"
    assert settings.home == home
    assert settings.state_dir == home / "state"
    assert settings.runtime_dir == home / "run"
    assert settings.db == home / "state" / "fleetwatch.db"
    assert settings.read_token_file == home / "tokens" / "read.json"
    assert settings.sandbox_token_file == home / "tokens" / "sandbox.json"
    assert settings.executor_socket == home / "run" / "executor.sock"
    assert settings.approval_socket.parent == settings.assistant_socket.parent == home / "run"


def test_defaults_of_ports_model_lab_url_policy_and_peers(tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    assert (settings.lab_port, settings.approve_port, settings.ask_port) == (8770, 8767, 8766)
    assert settings.epiphan_mcp_url == "http://127.0.0.1:8770/mcp"
    assert settings.model == "claude-sonnet-4-6"
    assert settings.anthropic_api_key is None and settings.anthropic_base_url is None
    assert settings.policy_dir == Path(shared.__file__).resolve().parent.parent / "policy"
    assert settings.policy_override is None
    uid = os.getuid()
    assert settings.executor_uids == settings.approval_uids == settings.assistant_uids == frozenset({uid})
    assert settings.write_device_ids == () and settings.write_team_id is None
    assert not settings.fence_configured
    assert settings.log_level == "INFO"


def test_moving_home_moves_every_derived_path_but_explicit_ones_stay(tmp_path):
    env = {"FLEETWATCH_HOME": str(tmp_path / "fw"), "FLEETWATCH_DB": str(tmp_path / "elsewhere.db")}
    settings = load_settings(env)
    assert settings.state_dir == tmp_path / "fw" / "state"
    assert settings.db == tmp_path / "elsewhere.db"
    moved_state = load_settings(
        {"FLEETWATCH_HOME": str(tmp_path), "FLEETWATCH_STATE_DIR": str(tmp_path / "s")}
    )
    assert moved_state.db == tmp_path / "s" / "fleetwatch.db"


def test_a_tilde_expands_with_the_given_environments_home(tmp_path):
    settings = load_settings({"HOME": str(tmp_path), "FLEETWATCH_RUNTIME_DIR": "~/sockets"})
    assert settings.runtime_dir == tmp_path / "sockets"


def test_values_are_parsed_into_their_types(tmp_path):
    env = {
        "HOME": str(tmp_path),
        "FLEETWATCH_APPROVE_PORT": "18767",
        "FLEETWATCH_WRITE_DEVICE_IDS": " 19012341234, abcdef01 ,19012341234,",
        "FLEETWATCH_WRITE_TEAM_ID": "team-42",
        "FLEETWATCH_EXECUTOR_UIDS": "1001,1002",
        "FLEETWATCH_MODEL_TIMEOUT_SECONDS": "12.5",
        "FLEETWATCH_LOG_LEVEL": "debug",
        "FLEETWATCH_ANTHROPIC_BASE_URL": "http://127.0.0.1:9999",
        "FLEETWATCH_POLICY_OVERRIDE": str(tmp_path / "override.yaml"),
    }
    settings = load_settings(env)
    assert settings.approve_port == 18767
    assert settings.write_device_ids == ("19012341234", "abcdef01")
    assert settings.write_team_id == "team-42"
    assert settings.executor_uids == frozenset({1001, 1002})
    assert settings.model_timeout_seconds == 12.5
    assert settings.log_level == "DEBUG"
    assert settings.anthropic_base_url == "http://127.0.0.1:9999"
    assert settings.policy_override == tmp_path / "override.yaml"
    assert settings.fence_configured


@pytest.mark.parametrize(
    ("env", "fenced"),
    [
        ({}, False),
        ({"FLEETWATCH_WRITE_DEVICE_IDS": "abcdef01"}, True),
        ({"FLEETWATCH_WRITE_TEAM_ID": "t"}, True),
    ],
)
def test_the_fence_is_configured_by_an_allowlist_or_a_team_id(tmp_path, env, fenced):
    assert load_settings({"HOME": str(tmp_path), **env}).fence_configured is fenced


def test_an_empty_value_means_unset(tmp_path):
    env = {
        "HOME": str(tmp_path),
        "FLEETWATCH_WRITE_DEVICE_IDS": "",
        "FLEETWATCH_LAB_PORT": "",
        "FLEETWATCH_ANTHROPIC_API_KEY": "",
    }
    settings = load_settings(env)
    assert (
        settings.write_device_ids == () and settings.lab_port == 8770 and settings.anthropic_api_key is None
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FLEETWATCH_APPROVE_PORT", "eighty"),
        ("FLEETWATCH_ASK_PORT", "70000"),
        ("FLEETWATCH_LAB_PORT", "-1"),
        ("FLEETWATCH_WRITE_DEVICE_IDS", "19012341234,Room-101"),
        ("FLEETWATCH_WRITE_DEVICE_IDS", "ABCDEF0123"),
        ("FLEETWATCH_WRITE_DEVICE_IDS", "190123\n41234"),
        ("FLEETWATCH_EXECUTOR_UIDS", "root"),
        ("FLEETWATCH_APPROVAL_UIDS", " , "),
        ("FLEETWATCH_MODEL_TIMEOUT_SECONDS", "0"),
        ("FLEETWATCH_MODEL_TIMEOUT_SECONDS", "nan"),
        ("FLEETWATCH_EPIPHAN_MCP_URL", "ftp://example/mcp"),
        ("FLEETWATCH_ANTHROPIC_BASE_URL", "localhost:9999"),
        ("FLEETWATCH_LOG_LEVEL", "LOUD"),
        ("FLEETWATCH_MODEL", "   "),
    ],
)
def test_a_bad_value_is_refused_naming_the_variable(tmp_path, name, value):
    with pytest.raises(ConfigError) as caught:
        load_settings({"HOME": str(tmp_path), name: value})
    assert caught.value.code is Code.CONFIG_INVALID
    assert caught.value.name == name
    assert str(caught.value).startswith(f"config_invalid: {name}: ")


def test_an_unknown_fleetwatch_variable_is_refused_to_catch_typos(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_settings({"HOME": str(tmp_path), "FLEETWATCH_WRITE_DEVICE_ID": "19012341234", "OTHER_VAR": "x"})
    assert caught.value.name == "FLEETWATCH_WRITE_DEVICE_ID"


def test_the_process_environment_is_read_when_none_is_given(tmp_path, monkeypatch):
    for name in [n for n in os.environ if n.startswith("FLEETWATCH_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("FLEETWATCH_LAB_PORT", "18770")
    settings = load_settings()
    assert settings.lab_port == 18770 and settings.home == tmp_path / ".fleetwatch"


def test_the_api_key_never_shows_in_repr_str_format_or_describe(tmp_path):
    settings = load_settings({"HOME": str(tmp_path), "FLEETWATCH_ANTHROPIC_API_KEY": API_KEY})
    assert isinstance(settings.anthropic_api_key, Secret)
    assert settings.anthropic_api_key.reveal() == API_KEY
    shown = [
        repr(settings),
        str(settings),
        repr(settings.anthropic_api_key),
        str(settings.anthropic_api_key),
        f"{settings.anthropic_api_key}",
        f"{settings.anthropic_api_key!r}",
        f"{settings.anthropic_api_key:>40}",
        repr(settings.describe()),
    ]
    for text in shown:
        assert API_KEY not in text
    assert "Secret('***')" in repr(settings)
    assert ("FLEETWATCH_ANTHROPIC_API_KEY", "Secret('***')") in settings.describe()


def test_the_api_key_never_reaches_log_output(tmp_path, caplog):
    settings = load_settings({"HOME": str(tmp_path), "FLEETWATCH_ANTHROPIC_API_KEY": API_KEY})
    log = logging.getLogger("fleetwatch.test")
    with caplog.at_level(logging.DEBUG, logger="fleetwatch.test"):
        log.info("settings: %s", settings)
        log.info("key: %r / %s", settings.anthropic_api_key, settings.anthropic_api_key)
        log.info("key in a dict: %s", {"key": settings.anthropic_api_key})
    assert len(caplog.records) == 3
    assert API_KEY not in caplog.text
    assert "Secret('***')" in caplog.text


def test_secrets_compare_by_value_without_showing_it():
    assert Secret("a") == Secret("a") and Secret("a") != Secret("b")
    assert repr(Secret("a")) == repr(Secret("b"))


def test_settings_are_frozen(tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.lab_port = 1


@pytest.mark.parametrize("level", ["DEBUG", "INFO", "WARNING"])
def test_no_log_level_lets_the_mcp_client_log_the_raw_answers_it_receives(tmp_path, level):
    """The MCP SDK logs every message it receives, unredacted (stream keys, passwords), at
    DEBUG: even ``FLEETWATCH_LOG_LEVEL=DEBUG`` keeps it from the log."""
    code = (
        "import logging, sys\n"
        "from shared.config import configure_logging, load_settings\n"
        f"configure_logging(load_settings({{'HOME': sys.argv[1], 'FLEETWATCH_LOG_LEVEL': '{level}'}}))\n"
        "print(logging.getLogger('mcp.client.streamable_http').isEnabledFor(logging.DEBUG),"
        " logging.getLogger('services.assistant').isEnabledFor(logging.DEBUG))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", str(level == "DEBUG")]
