"""The demo's environment: what the services run with when ``up`` runs them on the lab (the
sandbox fence, the lab's scripted model, the lab's Slack and Teams stand-ins, asks from the lab's
Slack workspace, the watch's language), for ``up`` to start them with and for ``doctor`` to judge
what they do (`services_settings`). Reads the lab's scenario and stand-ins' addresses only."""

from __future__ import annotations

import os
from collections.abc import Mapping

from services.ctl import supervise
from shared.config import Settings, given, load_settings
from shared.text import languages
from shared.text.languages import Language

DEMO_SLACK_CHANNEL = "#av-watch"
"""The channel the demo's watch posts to on the lab's Slack stand-in."""
DEMO_SLACK_ASKER = "U0LABOPS"
"""The lab workspace's member the demo lets ask from Slack."""


def demo_environment(
    settings: Settings, scenario: str, language: Language = "en", base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment the services run in for the demo: the fence set to the lab's sandbox
    team; when no model key is set, the lab's scripted model behind the real SDK; when Slack or
    Teams is not configured, the watch posts to the lab's stand-ins (see them at ``GET
    /_lab/notices``), so a newcomer sees digests and notices without any account, and the lab's
    workspace may ask from Slack (`demo_slack_asks`); and unless
    ``FLEETWATCH_WATCH_LANGUAGE`` is set, the watch posts in `language` (``up --language``).
    `base`: the environment it adds to (default: this process's)."""
    from services.lab.notices import LAB_SLACK_BOT, slack_base_url, teams_webhook_url
    from services.lab.scenario import load_scenario

    env = dict(os.environ if base is None else base)
    if not settings.fence_configured:
        sandbox = load_scenario(scenario).teams.sandbox
        env["FLEETWATCH_WRITE_DEVICE_IDS"] = ",".join(d.id for _, d in sandbox.devices())
    if settings.anthropic_api_key is None:
        env["FLEETWATCH_ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{settings.model_standin_port}"
        env["FLEETWATCH_ANTHROPIC_API_KEY"] = supervise.DEMO_MODEL_KEY
    lab_url = f"http://127.0.0.1:{settings.lab_port}"
    if settings.slack_bot_token is None and settings.slack_channel is None:
        env["FLEETWATCH_SLACK_API_URL"] = slack_base_url(lab_url)
        env["FLEETWATCH_SLACK_BOT_TOKEN"] = LAB_SLACK_BOT
        env["FLEETWATCH_SLACK_CHANNEL"] = DEMO_SLACK_CHANNEL
        if settings.slack_app_token is None:
            env |= demo_slack_asks()
    if settings.teams_webhook_url is None:
        env["FLEETWATCH_TEAMS_WEBHOOK_URL"] = teams_webhook_url(lab_url)
    if given("FLEETWATCH_WATCH_LANGUAGE") is None:
        env["FLEETWATCH_WATCH_LANGUAGE"] = language
    return env


def demo_slack_asks() -> dict[str, str]:
    """The settings that let the lab's workspace ask from Slack in the demo: the lab's app-level
    token and team, its operator ``U0LABOPS`` and user group, its ask channel (try it with
    ``POST /_lab/slack/ask``)."""
    from services.lab.slack_board import (
        LAB_ASK_CHANNEL,
        LAB_SLACK_APP,
        LAB_SLACK_TEAM,
        LAB_SLACK_USERGROUP,
    )

    return {
        "FLEETWATCH_SLACK_APP_TOKEN": LAB_SLACK_APP,
        "FLEETWATCH_SLACK_TEAM_ID": LAB_SLACK_TEAM,
        "FLEETWATCH_SLACK_ALLOWED_USERS": DEMO_SLACK_ASKER,
        "FLEETWATCH_SLACK_ALLOWED_USERGROUP": LAB_SLACK_USERGROUP,
        "FLEETWATCH_SLACK_ASK_CHANNELS": LAB_ASK_CHANNEL,
    }


def demo_slack_member(language: Language) -> str:
    """The lab workspace's member the demo's curl example asks as: the first the demo lets ask
    (``U0LABOPS`` by ID, the user group's members) whose Slack locale is in `language`, so the
    answer comes back in it (else ``U0LABOPS``)."""
    from services.lab.slack_board import LAB_SLACK_USERGROUP_MEMBERS, LAB_SLACK_USERS

    allowed = (DEMO_SLACK_ASKER, *LAB_SLACK_USERGROUP_MEMBERS)
    spoken = {user: languages.language_of(LAB_SLACK_USERS[user].partition("-")[0]) for user in allowed}
    return next((user for user in allowed if spoken[user] == language), DEMO_SLACK_ASKER)


def running_environment(settings: Settings, language: str = "en") -> dict[str, str] | None:
    """The environment the services run in, for a readout to answer as they would: on the lab
    (`supervise.is_demo`), `demo_environment` over this process's; elsewhere None (this
    process's own)."""
    if not supervise.is_demo(settings):
        return None
    return demo_environment(settings, "campus", languages.language_of(language))


def services_settings(settings: Settings, language: str) -> Settings:
    """The settings the services run with, for what doctor says of the watch's posts and of asks
    from Slack: on the lab (`supervise.is_demo`), `up`'s demo
    environment over this terminal's (`demo_environment`: the lab's Slack and Teams
    stand-ins, asks from the lab's Slack, the demo model, the sandbox fence), so doctor judges
    what the running services do; elsewhere `settings` itself.

    Raises:
        ConfigError: the demo's environment does not parse (as `up` would say).
    """
    env = running_environment(settings, language)
    return settings if env is None else load_settings(env)
