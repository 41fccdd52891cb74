"""The watch's commands in words, in the operator's language and time zone (pure): ``status
--check``, ``history``, ``digest --post``, ``note`` and ``notes``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

from services.ctl.admin_words import View
from services.ctl.commands_watch import (
    check_words,
    history_words,
    note_words,
    notes_words,
    posted_words,
)
from shared.wire.assistant import History, HistoryEntry, NoteOutcome, RoomNote, WatchStatus
from tests.ctl.test_main import fleetwatch
from tests.procs import base_env

NOW = dt.datetime(2026, 3, 2, 10, 0, 12, tzinfo=dt.UTC)
MEXICO = View("en", ZoneInfo("America/Mexico_City"), NOW)
SPANISH = View("es", ZoneInfo("America/Mexico_City"), NOW)


def _status(alive: bool, last: str | None) -> WatchStatus:
    return WatchStatus(
        alive=alive,
        now="2026-03-02T10:00:12.000Z",
        interval_seconds=60.0,
        last_read_at=last,
        last_beat_at=last,
        failed_beats=0,
        last_code=None,
        devices=3,
        online=3,
        fix_first=0,
        fix_soon=0,
        when_convenient=0,
    )


def test_status_check_says_ok_or_not_in_words_and_local_time() -> None:
    alive = _status(True, "2026-03-02T10:00:00.000Z")
    assert (
        check_words(MEXICO, alive) == "OK: the heartbeat read the fleet at 04:00, 12 seconds ago (every 60 s)"
    )
    assert check_words(SPANISH, alive).startswith("OK: el latido leyó la flota a las 04:00")
    dead = check_words(SPANISH, _status(False, None))
    assert dead == "NO OK: ningún latido leyó la flota en tres intervalos (última lectura: nunca)"
    assert check_words(SPANISH, None, "service_unavailable").startswith("NO OK: la vigilancia no respondió")


def test_history_is_in_the_operators_language_and_zone() -> None:
    entry = HistoryEntry(at="2026-03-02T09:00:00.000Z", kind="note", text="Nota en ENG 210")
    reply = History(
        since="2026-02-23T10:00:00.000Z",
        entries=(entry,),
        more=4,
        unread={"proposals": "service_unavailable"},
    )
    spanish = history_words(SPANISH, reply, 7)
    assert "03:00" in spanish and "UTC" not in spanish and "Nota en ENG 210" in spanish
    assert "… y 4 entradas más antiguas que no se muestran." in spanish
    assert "No se muestra: proposals no se pudo leer" in spanish
    empty = History(since="2026-02-23T10:00:00.000Z", entries=())
    assert history_words(MEXICO, empty, 7) == "Nothing changed in the last 7 days."
    assert history_words(SPANISH, empty, 7) == "Nada cambió en los últimos 7 días."


def test_digest_note_and_notes_say_what_happened_in_spanish() -> None:
    assert posted_words(SPANISH, ("console", "slack")) == "Publicado en: console, slack."
    assert posted_words(SPANISH, ()) == "Nada que publicar: nada cambió."
    note = RoomNote(
        device_id="d1", room="ENG 210", text="Puerto roto", set_at="2026-03-02T09:00:00.000Z", set_by=7
    )
    assert (
        note_words(SPANISH, NoteOutcome(status="saved", note=note))
        == "Nota en «ENG 210» guardada: Puerto roto"
    )
    assert note_words(SPANISH, NoteOutcome(status="cleared", note=note)) == "Nota en «ENG 210» eliminada."
    assert (
        note_words(MEXICO, NoteOutcome(status="saved", note=note)) == "Note on “ENG 210” saved: Puerto roto"
    )
    lines = notes_words(SPANISH, (note,), uid=7)
    assert lines == "«ENG 210»: Puerto roto  (puesta 03:00, hace 60 minutos, por usted)"
    assert notes_words(SPANISH, (), uid=7) == "No hay notas de salas."


async def test_history_follows_fleetwatch_language_and_its_days_complaint_is_spanish(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home", FLEETWATCH_LANGUAGE="es")
    code, _, err = await fleetwatch(env, "history", "--days", "500")
    assert code == 2 and "argumento --days: un número entero de días de 1 a 90" in err, err


def test_status_names_where_the_watch_posts_in_the_operators_words() -> None:
    """Issue 28, item 4: ``status`` said "console" in Spanish."""
    import msgspec

    from services.ctl.commands_watch import render_status
    from shared.wire.assistant import PostCounts

    status = msgspec.structs.replace(
        _status(True, None),
        posts=(
            PostCounts("console", sent=1, failed=2, last_code="internal_error"),
            PostCounts("slack", sent=3),
        ),
    )
    spanish = render_status(status, SPANISH)
    assert "consola: 1 enviada, 2 fallidas (internal_error; no se reintentan)" in spanish, spanish
    assert "Slack: 3 enviadas" in spanish and "console" not in spanish
    english = render_status(status, MEXICO)
    assert "console: 1 sent, 2 failed (internal_error; not retried)" in english and "Slack: 3 sent" in english


def test_the_silences_line_prints_its_command_with_the_language_and_the_home() -> None:
    import dataclasses

    import msgspec

    from services.ctl.commands_watch import render_status

    status = msgspec.structs.replace(_status(True, None), silences=2)
    home = dataclasses.replace(SPANISH, home="/srv/fw")
    assert "2 silencios vigentes: FLEETWATCH_HOME=/srv/fw fleetwatch silences --language es" in render_status(
        status, home
    )
    assert "1 silence holds: fleetwatch silences" in render_status(
        msgspec.structs.replace(status, silences=1), MEXICO
    )
