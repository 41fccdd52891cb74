"""Times a person reads: the operator's zone, one format, relative where it helps."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from shared.config import ConfigError, load_settings
from shared.text.times import parse_utc, say_time

NOW = dt.datetime(2026, 12, 1, 9, 32, tzinfo=dt.UTC)
MEXICO = ZoneInfo("America/Mexico_City")  # UTC-6
KIRITIMATI = ZoneInfo("Pacific/Kiritimati")  # UTC+14: the first to see a new day


def test_a_time_today_is_its_hour_and_minute_and_how_far_it_is() -> None:
    assert say_time("2026-12-01T09:55:00Z", zone=dt.UTC, now=NOW) == "09:55, in 23 minutes"
    assert say_time("2026-12-01T09:20:00.000Z", zone=dt.UTC, now=NOW) == "09:20, 12 minutes ago"
    assert say_time("2026-12-01T09:55:00Z", zone=dt.UTC, now=NOW, language="es") == (
        "09:55, dentro de 23 minutos"
    )


def test_another_day_names_the_day_and_far_times_say_no_distance() -> None:
    assert say_time("2026-12-03T15:00:00Z", zone=dt.UTC, now=NOW) == "Thu 3 Dec, 15:00"
    assert say_time("2026-12-03T15:00:00Z", zone=dt.UTC, now=NOW, language="es") == "jue 3 dic, 15:00"
    assert say_time("2026-12-01T09:55:00Z", zone=dt.UTC, now=NOW, relative=False) == "09:55"


def test_the_same_moment_reads_in_each_operators_zone_across_the_date_line() -> None:
    moment = "2026-12-01T10:30:00Z"  # 1 December, UTC
    assert say_time(moment, zone=KIRITIMATI, now=NOW) == "Wed 2 Dec, 00:30, in 58 minutes"  # tomorrow there
    late = dt.datetime(2026, 12, 2, 20, 0, tzinfo=dt.UTC)
    assert say_time(moment, zone=KIRITIMATI, now=late) == "Wed 2 Dec, 00:30"
    assert say_time(moment, zone=MEXICO, now=late) == "Tue 1 Dec, 04:30"
    assert say_time(moment, zone=MEXICO, now=late, language="es") == "mar 1 dic, 04:30"


def test_offsets_and_missing_or_unreadable_times_are_shown_safely() -> None:
    assert parse_utc("2026-12-01T04:30:00-06:00") == dt.datetime(2026, 12, 1, 10, 30, tzinfo=dt.UTC)
    assert say_time(None, zone=dt.UTC, now=NOW) == "—"
    assert say_time("soon\u202e", zone=dt.UTC, now=NOW) == "soon⟦U+202E⟧"


def test_the_time_zone_setting_takes_an_iana_name_and_defaults_to_the_systems() -> None:
    assert load_settings({"FLEETWATCH_TIMEZONE": "Pacific/Kiritimati"}).timezone == KIRITIMATI
    assert load_settings({}).timezone is not None
    with pytest.raises(ConfigError, match="FLEETWATCH_TIMEZONE: not a time zone"):
        load_settings({"FLEETWATCH_TIMEZONE": "Mars/Olympus"})


def test_a_misspelt_setting_names_the_closest_known_one() -> None:
    with pytest.raises(ConfigError, match="did you mean FLEETWATCH_TIMEZONE"):
        load_settings({"FLEETWATCH_TIMEZNOE": "UTC"})
    with pytest.raises(ConfigError, match="did you mean FLEETWATCH_WRITE_DEVICE_IDS"):
        load_settings({"FLEETWATCH_WRITE_DEVICES_IDS": "29088800001"})
    with pytest.raises(ConfigError, match="every setting is listed in docs/settings.md"):
        load_settings({"FLEETWATCH_SOMETHING_ELSE_ENTIRELY": "1"})


def test_numbers_take_the_languages_decimal_mark_through_one_formatter() -> None:
    """Issue 28, item 9: "2,1 GB" in Spanish, never "2.1 GB"; the share and the size alike."""
    from shared.text.times import say_number
    from shared.text.wording import free_space, size_text

    assert say_number(2.14, decimals=1, language="es") == "2,1"
    assert say_number(2.14, decimals=1, language="en") == "2.1"
    assert say_number(12345.6, decimals=1, language="es") == "12.345,6"
    assert say_number(12345.6, decimals=1, language="en") == "12,345.6"
    assert size_text(2.1e9, "es") == "2,1 GB" and size_text(2.1e9, "en") == "2.1 GB"
    assert free_space(4_000_000_000, 1_000_000_000_000, "es") == "0,4% (4,0 GB) libre"
    assert free_space(4_000_000_000, 1_000_000_000_000, "en") == "0.4% (4.0 GB) free"
    assert free_space(1, 1_000_000_000_000, "es").startswith("<0,1%")


def test_the_wall_the_digest_and_the_command_say_a_time_and_its_distance_alike() -> None:
    """Issue 28, item 9: one relative time (`say_ago`) and one clock format on every surface:
    the command's ``say_time``, the watch's ``clock`` (digest, wall, notices)."""
    from services.assistant.watch.times import clock
    from shared.text.times import say_ago, say_time

    now = dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC)
    read = now - dt.timedelta(minutes=35)
    yesterday = now - dt.timedelta(days=1)
    for language in ("en", "es"):
        said = say_time(read, zone=dt.UTC, now=now, language=language)
        assert said == f"{clock(read, dt.UTC, now, language)}, {say_ago(read, now=now, language=language)}"
        assert clock(yesterday, dt.UTC, now, language) == say_time(
            yesterday, zone=dt.UTC, now=now, language=language, relative=False
        )
    assert say_ago(read, now=now, language="es") == "hace 35 minutos"
    assert say_ago(now, now=now, language="en") == "1 second ago"
    assert clock(yesterday, dt.UTC, now, "es") == "dom 1 mar, 10:00"
