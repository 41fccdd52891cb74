"""Doctor's "model host" line (`services.ctl.doctor.check_model_host`): where the model's requests
go and whether that is on site, in English and Spanish; FAIL only when local-only mode would
refuse it. The resolver is a fake passed in."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.ctl.doctor import Level, check_model_host, render
from shared.config import load_settings


def _settings(tmp_path: Path, url: str | None, local_only: str = "off", key: str = "sk-test-key-123456"):
    env = {"FLEETWATCH_HOME": str(tmp_path), "FLEETWATCH_MODEL_LOCAL_ONLY": local_only}
    env |= {"FLEETWATCH_ANTHROPIC_API_KEY": key} if key else {}
    env |= {"FLEETWATCH_ANTHROPIC_BASE_URL": url} if url else {}
    return load_settings(env)


def fake(host: str) -> list[str]:
    return {"gpu.campus.test": ["10.20.0.5"], "api.anthropic.com": ["198.51.100.9"]}.get(host, [])


@pytest.mark.parametrize(
    ("url", "local_only", "level", "english", "spanish"),
    [
        (
            "http://gpu.campus.test:11434",
            "on",
            Level.OK,
            "gpu.campus.test (10.20.0.5): local (this machine or a private network); FLEETWATCH_MODEL_LOCAL_ONLY is on",
            "gpu.campus.test (10.20.0.5): local (esta máquina o una red privada)",
        ),
        (
            None,
            "off",
            Level.INFO,
            "api.anthropic.com (198.51.100.9) is not local: questions and what the model reads of the fleet leave this site",
            "api.anthropic.com (198.51.100.9) no es local",
        ),
        (
            "http://203.0.113.7:8000",
            "on",
            Level.FAIL,
            "203.0.113.7 (203.0.113.7) is not local and FLEETWATCH_MODEL_LOCAL_ONLY is on: the assistant refuses to start",
            "el asistente se niega a arrancar",
        ),
    ],
)
def test_doctor_shows_the_model_host_and_whether_it_is_local(
    tmp_path, url, local_only, level, english, spanish
):
    settings = _settings(tmp_path, url, local_only)
    (line,) = check_model_host(settings, resolve=fake)
    assert (line.name, line.level) == ("model host", level) and line.message.startswith(english), line
    said = render([line], language="es")
    assert "servidor del modelo" in said and spanish in said, said


def test_without_a_model_key_there_is_no_model_host_line(tmp_path):
    assert check_model_host(_settings(tmp_path, "http://203.0.113.7:8000", "on", key=""), resolve=fake) == []
