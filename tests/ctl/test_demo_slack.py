"""The demo lets the lab's Slack workspace ask (read-only), unless Slack is configured for real;
``up`` says how to try it with curl."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from services.ctl.commands_up import started_words
from services.ctl.demo_env import demo_environment
from services.ctl.supervise import choose_fence
from services.lab.slack_board import (
    LAB_ASK_CHANNEL,
    LAB_SLACK_APP,
    LAB_SLACK_TEAM,
    LAB_SLACK_USERGROUP_MEMBERS,
    LAB_SLACK_USERS,
)
from shared.config import load_settings
from shared.text.catalogue import say_text
from shared.text.languages import Language


def test_the_demo_turns_on_asks_from_the_labs_slack_and_leaves_a_real_slack_alone():
    env = demo_environment(load_settings({}), "campus")
    assert (
        env["FLEETWATCH_SLACK_APP_TOKEN"] == LAB_SLACK_APP
        and env["FLEETWATCH_SLACK_TEAM_ID"] == LAB_SLACK_TEAM
    )
    assert env["FLEETWATCH_SLACK_ALLOWED_USERS"] == "U0LABOPS"
    assert env["FLEETWATCH_SLACK_ASK_CHANNELS"] == LAB_ASK_CHANNEL
    assert (
        load_settings({k: v for k, v in env.items() if k.startswith("FLEETWATCH_")}).slack_app_token
        is not None
    )
    real = load_settings({"FLEETWATCH_SLACK_BOT_TOKEN": "xoxb-real-one", "FLEETWATCH_SLACK_CHANNEL": "#ops"})
    assert "FLEETWATCH_SLACK_APP_TOKEN" not in demo_environment(real, "campus")


def test_up_on_the_lab_says_how_to_ask_from_slack_with_curl_as_a_member_of_the_operators_language(
    tmp_path: Path,
):
    settings = load_settings({"HOME": str(tmp_path)})
    fence = choose_fence(settings, euid=1000)
    now = dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC)

    def curl_line(language: Language) -> str:
        lines = started_words(settings, fence, demo=True, logs=tmp_path / "logs", language=language)
        (line,) = [
            t for w in lines if "/_lab/slack/ask" in (t := say_text(w, language, zone=dt.UTC, now=now))
        ]
        return line

    english, spanish = curl_line("en"), curl_line("es")
    assert english.startswith(
        "Ask from the lab's Slack (read-only): curl -s -X POST http://127.0.0.1:8770/_lab/slack/ask"
    )
    assert '{"user": "U0LABOPS", "channel": "D0LABOPS", "text": "what is offline?"}' in english
    assert spanish.startswith("Pregunte desde el Slack del laboratorio")
    # a member whose Slack language is Spanish, so the answer comes back in Spanish (walk item 2)
    assert '{"user": "U0LABAV", "channel": "D0LABAV", "text": "¿qué está desconectado?"}' in spanish
    assert LAB_SLACK_USERS["U0LABAV"].startswith("es") and "U0LABAV" in LAB_SLACK_USERGROUP_MEMBERS
