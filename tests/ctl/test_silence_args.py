"""``fleetwatch silence``'s times: ``--for`` as minutes, ``--until`` in the operator's zone."""

from __future__ import annotations

import argparse
import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from services.ctl import CtlError
from services.ctl.commands_watch import _duration, until_utc

MEXICO = ZoneInfo("America/Mexico_City")
NOW = dt.datetime(2026, 9, 16, 19, 0, tzinfo=dt.UTC)  # 13:00 in Mexico City


@pytest.mark.parametrize(
    ("text", "minutes"), [("45m", 45), ("2h", 120), ("1h30m", 90), ("3d", 4320), ("14d", 20160)]
)
def test_for_takes_days_hours_and_minutes(text: str, minutes: int) -> None:
    assert _duration(text) == minutes


@pytest.mark.parametrize("text", ["", "0m", "15d", "2 hours", "h", "-1h"])
def test_for_refuses_what_is_not_a_time_within_fourteen_days(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _duration(text)


def test_until_is_the_next_such_time_in_the_operators_zone_or_a_date_and_time_there() -> None:
    assert until_utc("14:00", MEXICO, NOW) == "2026-09-16T20:00:00.000Z"
    assert until_utc("12:00", MEXICO, NOW) == "2026-09-17T18:00:00.000Z"  # already past today
    assert until_utc("2026-09-17T08:00", MEXICO, NOW) == "2026-09-17T14:00:00.000Z"
    assert until_utc("2026-09-17T08:00+00:00", MEXICO, NOW) == "2026-09-17T08:00:00.000Z"
    with pytest.raises(CtlError):
        until_utc("tomorrow", MEXICO, NOW)
