"""``fleetwatch doctor``'s check of asks from Slack: the preflight against the lab's Socket Mode
stand-in names a wrong token type and a missing scope; the settings that do not fit together."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from services.ctl.doctor import Level, render
from services.ctl.doctor_slack import SlackPreflight, check_slack_asks, preflight
from services.lab.notices import LAB_SLACK_BOT, slack_base_url
from services.lab.server import LabHandle, run_lab
from services.lab.slack_board import LAB_SLACK_APP, LAB_SLACK_APP_WITHOUT_SCOPE
from shared.config import Secret, Settings, load_settings


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


def settings(lab_url: str = "http://127.0.0.1:9", **env: str) -> Settings:
    base = {
        "FLEETWATCH_HOME": "/nonexistent-fleetwatch",
        "FLEETWATCH_SLACK_API_URL": slack_base_url(lab_url),
        "FLEETWATCH_SLACK_BOT_TOKEN": LAB_SLACK_BOT,
        "FLEETWATCH_SLACK_CHANNEL": "#av-watch",
        "FLEETWATCH_SLACK_APP_TOKEN": LAB_SLACK_APP,
        "FLEETWATCH_SLACK_TEAM_ID": "T0LABDEMO",
        "FLEETWATCH_SLACK_ALLOWED_USERS": "U0LABOPS",
    }
    return load_settings(base | env)


async def test_the_preflight_passes_with_the_labs_app_token(lab):
    checks = check_slack_asks(settings(lab.url), await preflight(settings(lab.url)))
    assert [c.level for c in checks] == [Level.OK, Level.INFO]
    assert "Socket Mode" in checks[0].message and LAB_SLACK_APP not in checks[0].message
    assert "U0LABOPS" in checks[1].message


@pytest.mark.parametrize(
    ("token", "words"),
    [
        (LAB_SLACK_BOT, "not an app-level token"),
        (LAB_SLACK_APP_WITHOUT_SCOPE, "lacks the scope connections:write"),
    ],
)
async def test_the_preflight_names_a_wrong_token_type_and_a_missing_scope(lab, token, words):
    # A bot token never loads as FLEETWATCH_SLACK_APP_TOKEN (the setting refuses it); Slack's
    # own answer is checked too, for a token the setting cannot tell.
    wrong = dataclasses.replace(settings(lab.url), slack_app_token=Secret(token))
    (first, *_) = check_slack_asks(wrong, await preflight(wrong))
    assert first.level is Level.FAIL and words in first.message and token not in first.message


def test_a_bot_token_given_as_the_app_token_is_refused_when_the_settings_load():
    with pytest.raises(Exception, match="xoxb- token, not an app-level token") as raised:
        settings(FLEETWATCH_SLACK_APP_TOKEN=LAB_SLACK_BOT)
    assert LAB_SLACK_BOT not in str(raised.value)


def test_without_the_app_token_asks_are_off_and_without_team_or_allowlist_doctor_says_so():
    off = check_slack_asks(settings(FLEETWATCH_SLACK_APP_TOKEN=""), None)
    assert [(c.level, c.message) for c in off] == [
        (Level.INFO, "off (FLEETWATCH_SLACK_APP_TOKEN is not set)")
    ]
    lacking = settings(FLEETWATCH_SLACK_TEAM_ID="", FLEETWATCH_SLACK_ALLOWED_USERS="")
    levels = [(c.level, c.message) for c in check_slack_asks(lacking, SlackPreflight("ok"))]
    assert (Level.FAIL, "FLEETWATCH_SLACK_TEAM_ID is not set; the assistant will not start") in levels
    assert any(level is Level.WARN and "nobody may ask" in message for level, message in levels)
    spanish = render(
        check_slack_asks(lacking, SlackPreflight("unreachable", "ClientConnectorError")), language="es"
    )
    assert "nadie puede preguntar" in spanish
