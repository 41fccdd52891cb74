"""What ``fleetwatch up`` says once everything runs, in English and Spanish (the one catalogue)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from services.ctl.commands_up import started_words
from services.ctl.supervise import choose_fence
from shared.config import load_settings
from shared.text.catalogue import say_text
from shared.text.languages import Language

NOW = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)


def _said(tmp_path: Path, language: Language, *, demo: bool, **env: str) -> list[str]:
    settings = load_settings({"HOME": str(tmp_path), **env})
    fence = choose_fence(settings, euid=1000)
    lines = started_words(settings, fence, demo=demo, logs=tmp_path / "logs")
    return [say_text(words, language, zone=dt.UTC, now=NOW) for words in lines]


def test_up_says_where_each_page_and_its_secret_is_in_english_and_spanish(tmp_path: Path) -> None:
    english = _said(tmp_path, "en", demo=True)
    assert english[0] == "Fleetwatch is up on the lab (a simulated Epiphan Edge)."
    assert english[1] == "Fence level: process-level, same user (the settings are not deploy/install.sh's)."
    assert english[2].startswith("Approval page: http://127.0.0.1:")
    assert english[3].startswith("Its secret is in ") and english[3].endswith(
        "(asked once per browser session)."
    )
    assert english[-1] == f"Logs: {tmp_path / 'logs'}"
    spanish = _said(tmp_path, "es", demo=True)
    assert spanish[0] == "Fleetwatch está en marcha en el laboratorio (un Epiphan Edge simulado)."
    assert spanish[1] == (
        "Nivel de la cerca: por procesos, con el mismo usuario (la configuración no es la de deploy/install.sh)."
    )
    assert spanish[2].startswith("Página de aprobación: http://127.0.0.1:")
    assert spanish[3].startswith("Su secreto está en ") and spanish[3].endswith(
        "(se pide una vez por sesión del navegador)."
    )
    assert any(line.startswith("Página de preguntas: http://localhost:") for line in spanish)
    assert any(
        line.startswith("Pantalla de pared (solo lectura, sin secreto): http://localhost:")
        for line in spanish
    )
    assert any(line.startswith("Ask page: http://localhost:") for line in english)  # never 127.0.0.1
    assert spanish[-1] == f"Registros: {tmp_path / 'logs'}"
    assert len(spanish) == len(english)


def test_off_the_lab_without_a_fence_up_says_so_in_spanish(tmp_path: Path) -> None:
    spanish = _said(tmp_path, "es", demo=False, FLEETWATCH_EPIPHAN_MCP_URL="https://epiphan.example/mcp")
    assert spanish[0] == "Fleetwatch está en marcha."
    assert spanish[1].startswith(
        "No está en el laboratorio: FLEETWATCH_EPIPHAN_MCP_URL es https://epiphan.example/mcp"
    )
    assert any(line.startswith("La cerca no está configurada") for line in spanish)
    assert not any("Página de aprobación" in line for line in spanish)


def test_the_demos_reason_for_no_card_is_in_the_operators_language() -> None:
    """Issue 28, item 4: the demo's "no card" reason was always English."""
    from services.ctl.commands_up import no_card_reason
    from shared.policy.loader import load_policies
    from shared.wire.assistant import Answer

    limits = load_policies(load_settings({"HOME": "/nonexistent"}).policy_dir, None)[0].limits
    nothing = Answer(text="-", language="es", answered_by="model")
    assert (
        no_card_reason(nothing, limits, "es")
        == "el asistente no propuso ningún cambio (vea su respuesta arriba)."
    )
    assert no_card_reason(nothing, limits, "en") == "the assistant proposed no change (see its answer above)."
    refused = Answer(text="-", language="es", answered_by="model", code="queue_full")
    said = no_card_reason(refused, limits, "es")
    assert said is not None and said.startswith("la cola") and said.endswith(".")


def test_a_rooms_next_event_says_its_times_then_how_soon_once_in_both_languages() -> None:
    """Walk item 12: "de 13:29, dentro de 60 minutos a 14:29, dentro de 2 horas" was hard to
    read: the start and end as clock times, then how soon it starts, once."""
    from services.ctl.admin_words import View, render_writable
    from shared.wire.executor import UpcomingEvent, WritableDevice, WritableDevices

    now = dt.datetime(2026, 12, 5, 12, 29, tzinfo=dt.UTC)
    event = UpcomingEvent("e1", "Lecture", "2026-12-05T13:29:00.000Z", "2026-12-05T14:29:00.000Z")
    devices = WritableDevices(
        (WritableDevice("d1", "Sandbox Classroom", "Pearl-2", True, (), event),), "2026-12-05T12:29:00.000Z"
    )
    said = {language: render_writable(View(language, dt.UTC, now), devices, ()) for language in ("en", "es")}
    assert "next event: Lecture, 13:29 to 14:29 (in 60 minutes)" in said["en"], said["en"]
    assert "próximo evento: Lecture, de 13:29 a 14:29 (dentro de 60 minutos)" in said["es"], said["es"]
