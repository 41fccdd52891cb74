"""``FLEETWATCH_MODEL_LOCAL_ONLY``: the assistant refuses to start with a model URL that is not on
this machine or a private network (`services.assistant.server.refuse_unless_local`), before it
opens a socket or reads the fleet."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.assistant.__main__ import main
from services.assistant.server import refuse_unless_local
from shared.config import load_settings
from shared.errors import Code, FleetwatchError


def _settings(tmp_path: Path, url: str | None, *, local_only: str = "on", key: str = "sk-test"):
    env = {"FLEETWATCH_HOME": str(tmp_path), "FLEETWATCH_MODEL_LOCAL_ONLY": local_only}
    env |= {"FLEETWATCH_ANTHROPIC_API_KEY": key} if key else {}
    env |= {"FLEETWATCH_ANTHROPIC_BASE_URL": url} if url else {}
    return load_settings(env)


def _public(host: str) -> list[str]:
    return ["198.51.100.9"]


@pytest.mark.parametrize("url", [None, "http://203.0.113.7:11434", "http://model.example.com:8000"])
def test_local_only_refuses_a_public_model_url(tmp_path, url):
    with pytest.raises(FleetwatchError) as refused:
        refuse_unless_local(_settings(tmp_path, url), _public)
    assert refused.value.code == Code.MODEL_NOT_LOCAL


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434", "http://10.1.2.3:8000"])
def test_local_only_accepts_loopback_and_private_addresses(tmp_path, url):
    refuse_unless_local(_settings(tmp_path, url), _public)


def test_without_local_only_or_without_a_key_nothing_is_refused(tmp_path):
    refuse_unless_local(_settings(tmp_path, "http://203.0.113.7:11434", local_only="off"), _public)
    refuse_unless_local(_settings(tmp_path, "http://203.0.113.7:11434", key=""), _public)


def test_the_assistant_command_exits_2_with_the_code_for_a_public_model_url(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLEETWATCH_HOME", str(tmp_path))
    monkeypatch.setenv("FLEETWATCH_MODEL_LOCAL_ONLY", "on")
    monkeypatch.setenv("FLEETWATCH_ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("FLEETWATCH_ANTHROPIC_BASE_URL", "http://203.0.113.7:11434")
    assert main([]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("assistant: ") and err.rstrip().endswith("[model_not_local]") and "203.0.113.7" in err
    )
