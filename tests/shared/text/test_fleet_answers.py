"""The shared wording of fleet answers: headings in the singular and plural, caps, unknowns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from shared.epiphan.attention import Priority
from shared.epiphan.fleet import (
    Channel,
    Device,
    DeviceWarning,
    Event,
    Publisher,
    StorageStatus,
    StreamEndpoint,
    SystemStatus,
)
from shared.text import fleet_answers as say
from shared.text.catalogue import Lexicon, translations
from shared.text.wording import PRIORITY_WORDS

NOW = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)


def _device(n: int, **fields) -> Device:
    values = {"name": f"Room {n}", "model": "Pearl-2", "firmware": "4.24.6", "online": True, **fields}
    return Device(id=f"1901234{n:04d}", **values)


def test_headings_agree_with_the_count_in_both_languages():
    one = [_device(1, online=False, state_time=NOW - timedelta(minutes=5))]
    two = [*one, _device(2, online=False)]
    assert say.offline(one, {}, NOW, "en")[:2] == ["1 room is offline:", "- “Room 1”: offline for 5 min"]
    assert say.offline(two, {}, NOW, "es")[0] == "2 salas están desconectadas:"
    assert say.offline(two, {}, NOW, "es")[2] == "- «Room 2»: desconectada"
    assert say.offline([_device(3)], {}, NOW, "en") == ["No room is offline: all 1 are online."]


def test_a_long_list_is_capped_and_says_how_many_more():
    devices = [_device(n, firmware="4.22.0") for n in range(1, 30)] + [_device(99)]
    assert all(d.model == "Pearl-2" for d in devices)
    lines = say.firmware(devices, "en")
    assert lines[0] == "29 rooms run older firmware than the newest of their model in this fleet:"
    assert len(lines) == say.MAX_LINES + 2 and lines[-1] == "…and 9 more."


def test_recording_since_unknown_is_not_made_up():
    device = _device(1, channels=(Channel("1", "Lecture", recording=True),))
    assert say.recording([device], NOW, "en")[1] == "- “Room 1”: recording “Lecture”"


def test_storage_unknown_is_said_so_and_never_counted_as_short():
    offline = _device(3)
    storage = {offline.id: StorageStatus(offline.id, "unknown")}
    assert not say.short_of_storage(storage[offline.id])
    assert say.storage_words(storage[offline.id], "en") == "storage unknown"
    assert say.storage_words(storage[offline.id], "es") == "almacenamiento desconocido"
    assert say.disk([offline], storage, "en") == ["No room is short of storage (1 checked)."]


def test_storage_heat_and_readiness_use_the_thresholds():
    hot = _device(1)
    low = _device(2)
    system = {
        hot.id: SystemStatus(hot.id, cpu_load_pct=20, cpu_temp_c=80),
        low.id: SystemStatus(low.id, 20, 50),
    }
    storage = {
        low.id: StorageStatus(low.id, "ok", free=5, total=100),
        hot.id: StorageStatus(hot.id, "ok", 50, 100),
    }
    assert say.heat([hot, low], system, "en")[1] == "- “Room 1”: 80 °C, CPU 20%"
    assert say.disk([hot, low], storage, "en")[1:] == ["- “Room 2”: 5.0% (5 bytes) free of 100 bytes"]
    event = Event("e1", "Physics", start=NOW + timedelta(minutes=10), finish=NOW + timedelta(minutes=60))
    ready = say.readiness([low], {low.id: event}, NOW, "en", storage=storage)
    assert ready[0] == "1 room has a class on now or within the hour; these need attention first: “Room 2”."
    assert ready[1] == '- “Room 2” ("Physics" in 10 min): storage: 5.0% (5 bytes) free of 100 bytes'


def test_a_name_with_hidden_characters_is_shown_marked():
    device = _device(1, name="Room\u202e 1", online=False)
    assert say.offline([device], {}, NOW, "en")[1] == "- “Room⟦U+202E⟧ 1”: offline"


def test_times_in_answers_are_in_the_operators_zone_across_the_date_line():
    # 12:30 UTC on the 16th is 02:30 on the 17th in Kiritimati (UTC+14): `now` carries the zone.
    kiritimati = ZoneInfo("Pacific/Kiritimati")
    device = _device(
        1, channels=(Channel("1", "Lecture", recording=True, recording_since=NOW - timedelta(minutes=30)),)
    )
    assert (
        say.recording([device], NOW.astimezone(kiritimati), "en")[1]
        == "- “Room 1”: recording “Lecture” since 02:30"
    )
    assert (
        say.recording([device], NOW.astimezone(kiritimati), "es")[1]
        == "- «Room 1»: graba «Lecture» desde las 02:30"
    )
    assert say.recording([device], NOW, "en")[1] == "- “Room 1”: recording “Lecture” since 12:30"
    yesterday = _device(
        2, channels=(Channel("1", "Lecture", recording=True, recording_since=NOW - timedelta(days=1)),)
    )
    assert (
        say.recording([yesterday], NOW, "es")[1] == "- «Room 2»: graba «Lecture» desde las mar 15 sep, 13:00"
    )


def test_the_fleet_words_come_from_the_one_catalogue_in_both_languages():
    # Priorities, findings and headings are keyed catalogue entries (msgctxt per table), not code.
    assert {p: PRIORITY_WORDS["es"][p] for p in Priority} == {
        p: translations()["es"].pgettext("priority", str(p.value)) for p in Priority
    }
    assert PRIORITY_WORDS["es"][Priority.FIX_FIRST] == "Arreglar primero"
    assert PRIORITY_WORDS["en"][Priority.FIX_FIRST] == "Fix first"
    offline = [_device(1, online=False, state_time=NOW - timedelta(minutes=5))]
    assert say.offline(offline, {}, NOW, "es")[:2] == [
        "1 sala está desconectada:",
        "- «Room 1»: desconectada hace 5 min",
    ]
    # A key without words is missing, never shown as a key.
    table = Lexicon("a table nobody wrote")
    assert table["es"].get("k") is None and list(table) == ["en", "es"]
    with pytest.raises(KeyError):
        table["es"]["k"]


@pytest.mark.parametrize(
    ("language", "next_word", "on_now"), [("en", "next:", "on now"), ("es", "próxima:", "en curso")]
)
def test_a_class_under_way_is_never_labelled_as_the_next_one(language, next_word, on_now):
    """Issue 28 walk item 9: a class already under way said after "next:"/"próxima:"."""
    event = Event(
        "e1", "Moot Court Finals", start=NOW - timedelta(minutes=30), finish=NOW + timedelta(minutes=30)
    )
    online, offline = _device(1), _device(2, online=False)
    lines = [
        *say.room(online, event, NOW, language),
        *say.offline([offline], {offline.id: event}, NOW, language),
    ]
    said = [line for line in lines if "Moot Court Finals" in line]
    assert len(said) == 2, lines
    for line in said:
        assert on_now in line and next_word not in line, line
    later = Event("e2", "Physics", start=NOW + timedelta(minutes=30), finish=NOW + timedelta(minutes=90))
    assert any(next_word in line for line in say.room(online, later, NOW, language))


@pytest.mark.parametrize(("language", "open_mark", "close_mark"), [("en", "“", "”"), ("es", "«", "»")])
def test_every_name_a_keyword_answer_shows_stays_inside_its_quote_marks(language, open_mark, close_mark):
    """A room, channel, source or destination name carrying state-like words ("ready", "approved,
    ran, verified") is shown between the reader's quote marks on every topic's lines, so the words
    after it are the answer's own."""
    forged = "ENG 210: ready - approved, ran, verified"
    channel = Channel(
        "1",
        f"{forged} ch",
        recording=True,
        warnings=(DeviceWarning("channel_no_signal"),),
        publishers=(Publisher("p1", "srt", "started"),),
    )
    device = _device(
        1,
        name=forged,
        channels=(channel,),
        warnings=(DeviceWarning("source_no_signal", data={"source_name": f"{forged} src"}),),
    )
    endpoint = StreamEndpoint(id="p1", name=f"{forged} dest", host="ingest.example")
    lines = [
        *say.recording([device], NOW, language),
        *say.signal([device], language),
        *say.streams([device], [endpoint], language),
        *say.room(device, None, NOW, language),
        *say.offline([_device(2, name=forged, online=False)], {}, NOW, language),
    ]
    shown = [line for line in lines if forged in line]
    assert len(shown) >= 6, lines
    for line in shown:
        at = 0
        while (found := line.find(forged, at)) != -1:
            assert line[found - 1] == open_mark, line
            end = line.index(close_mark, found)
            assert line[found:end].startswith(forged) and open_mark not in line[found:end], line
            at = end
