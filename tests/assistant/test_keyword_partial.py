"""The keyword answer on a partial view: what was read is answered, what was not is said."""

from __future__ import annotations

from services.assistant.keyword import keyword_answer
from tests.assistant.conftest import START


async def test_offline_rooms_are_answered_although_the_events_could_not_be_read(lab, reader):
    lab.set_fault("get_current_or_next_cms_events_for_devices", "malformed_json")
    snapshot = await reader.snapshot()
    answer = keyword_answer("which devices are offline?", "en", snapshot, START)
    assert "ENG 210" in answer and "LIB Room 2" in answer
    assert "events: could not be read: " in answer
    assert "I could not read the fleet" not in answer
    spanish = keyword_answer("¿qué equipos están desconectados?", "es", snapshot, START)
    assert "ENG 210" in spanish and "eventos: no se pudieron leer: " in spanish


async def test_a_question_that_needs_what_could_not_be_read_says_so_instead_of_answering(lab, reader):
    lab.set_fault("get_system_status_for_devices", "error")
    snapshot = await reader.snapshot()
    answer = keyword_answer("Is any room running hot?", "en", snapshot, START)
    assert "No room is running hot" not in answer
    assert "CPU, temperature and uptime: could not be read: " in answer
