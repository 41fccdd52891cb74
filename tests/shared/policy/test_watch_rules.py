"""``policy.yaml``'s ``watch:`` block and quiet hours without a zone (issue 29)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from shared.config import REPO_POLICY_DIR
from shared.policy.loader import PolicyError, WatchRules, load_policy

MEXICO = ZoneInfo("America/Mexico_City")


def policy_text(watch: str | None, quiet: str = 'quiet_hours:\n  start: "22:00"\n  end: "06:00"\n') -> str:
    text = (REPO_POLICY_DIR / "policy.yaml").read_text()
    start = text.index("\nwatch:")
    end = text.find("\n\n", start + 1)
    text = text[:start] + ("" if watch is None else "\n" + watch) + (text[end:] if end != -1 else "\n")
    return text.replace('quiet_hours:\n  start: "22:00"\n  end: "06:00"\n', quiet)


def load(tmp_path: Path, text: str):
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return load_policy(path)


def test_the_shipped_policy_has_the_watch_defaults_and_quiet_hours_in_the_operators_zone() -> None:
    policy = load_policy(REPO_POLICY_DIR / "policy.yaml")
    assert policy.watch == WatchRules()
    assert policy.quiet_hours.timezone is None
    five_utc = dt.datetime(2026, 9, 16, 5, 0, tzinfo=dt.UTC)  # 23:00 in Mexico City
    assert policy.quiet_hours.contains(five_utc, MEXICO)
    assert not policy.quiet_hours.contains(dt.datetime(2026, 9, 16, 23, 0, tzinfo=dt.UTC), MEXICO)
    assert policy.quiet_hours.ends_after(five_utc, MEXICO) == dt.datetime(2026, 9, 16, 6, 0, tzinfo=MEXICO)


def test_a_watch_block_and_a_named_zone_are_read(tmp_path: Path) -> None:
    block = (
        "watch:\n  offline_after_beats: 3\n  group_min_rooms: 4\n  reminder_minutes: 0\n"
        '  buildings:\n    "ENG building": ["Engineering", "Engineering annex"]\n'
    )
    quiet = 'quiet_hours:\n  start: "22:00"\n  end: "06:00"\n  timezone: "America/Bogota"\n'
    policy = load(tmp_path, policy_text(block, quiet))
    assert (
        policy.watch.offline_after_beats,
        policy.watch.group_min_rooms,
        policy.watch.reminder_minutes,
    ) == (
        3,
        4,
        0,
    )
    assert policy.watch.group_min_percent == 50
    assert policy.watch.group_of("Engineering annex") == "ENG building"
    assert policy.watch.group_of("Library") == "Library"
    assert policy.quiet_hours.zone(MEXICO) == ZoneInfo("America/Bogota")
    assert load(tmp_path, policy_text(None)).watch == WatchRules()


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("watch:\n  offline_after_beats: 0\n", "from 1 to 10"),
        ("watch:\n  group_min_percent: 101\n", "from 1 to 100"),
        ("watch:\n  snooze: 3\n", "unknown key"),
        ("watch:\n  buildings:\n    ENG: []\n", "a list of Epiphan group names"),
    ],
)
def test_a_bad_watch_block_is_refused_naming_the_line(tmp_path: Path, block: str, problem: str) -> None:
    with pytest.raises(PolicyError) as caught:
        load(tmp_path, policy_text(block))
    assert problem in str(caught.value)
