"""``fleetwatch doctor``'s check of asks from Slack: the settings fit together, and Slack takes the
app-level token (`preflight` calls ``apps.connections.open`` once, through the Slack SDK, and
opens no websocket).

`check_slack_asks` is pure (the preflight's answer is passed in): off without
``FLEETWATCH_SLACK_APP_TOKEN``; FAIL without the bot token or the team ID, for a token Slack
refuses, naming the wrong token type (``not_allowed_token_type``) or the missing scope
(``missing_scope``, ``connections:write``); WARN when nobody may ask (no member, no user group)
or Slack could not be reached; else OK with who may ask and where. Tokens are masked.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.ctl.doctor import Check, Level, _line, mask
from shared.config import Settings
from shared.text.catalogue import C_, N_, Nn_, Words

PREFLIGHT_SECONDS = 5
"""Bound on the preflight call (seconds)."""


@dataclass(frozen=True)
class SlackPreflight:
    """Slack's answer to ``apps.connections.open``: ``outcome`` ``ok``, ``refused`` (``error``:
    Slack's word; ``needed``: the scope it names for ``missing_scope``) or ``unreachable``
    (``error``: the exception's type)."""

    outcome: str
    error: str = ""
    needed: str = ""


async def preflight(settings: Settings) -> SlackPreflight | None:
    """Call ``apps.connections.open`` with the app-level token (None: no token set)."""
    if settings.slack_app_token is None:
        return None
    import aiohttp
    from slack_sdk.errors import SlackApiError, SlackClientError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(base_url=settings.slack_api_url, timeout=PREFLIGHT_SECONDS, retry_handlers=[])
    try:
        await client.apps_connections_open(app_token=settings.slack_app_token.reveal())
    except SlackApiError as exc:
        data = exc.response.data if exc.response is not None and isinstance(exc.response.data, dict) else {}
        return SlackPreflight("refused", str(data.get("error", "error")), str(data.get("needed", "")))
    except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError) as exc:
        return SlackPreflight("unreachable", type(exc).__name__)
    return SlackPreflight("ok")


def check_slack_asks(settings: Settings, answer: SlackPreflight | None) -> list[Check]:
    """The lines about asks from Slack (see the module docstring)."""
    name = C_("doctor check", "asks from Slack")
    token = settings.slack_app_token
    if token is None:
        return [_line(name, Level.INFO, N_("off (FLEETWATCH_SLACK_APP_TOKEN is not set)"))]
    missing = [
        setting
        for setting, value in (
            ("FLEETWATCH_SLACK_BOT_TOKEN", settings.slack_bot_token),
            ("FLEETWATCH_SLACK_TEAM_ID", settings.slack_team_id),
        )
        if value is None
    ]
    checks = [
        _line(name, Level.FAIL, N_("%(setting)s is not set; the assistant will not start"), setting=s)
        for s in missing
    ]
    if answer is None or answer.outcome == "unreachable":
        checks.append(
            _line(
                name,
                Level.WARN,
                N_("Slack could not be reached to check the app-level token (%(why)s)"),
                why=answer.error if answer else "",
            )
        )
    elif answer.outcome == "refused" and answer.error == "not_allowed_token_type":
        checks.append(
            _line(
                name,
                Level.FAIL,
                N_("Slack refused the token %(token)s: it is not an app-level token (xapp-…) (%(error)s)"),
                token=mask(token),
                error=answer.error,
            )
        )
    elif answer.outcome == "refused" and answer.error == "missing_scope":
        checks.append(
            _line(
                name,
                Level.FAIL,
                N_(
                    "the app-level token %(token)s lacks the scope %(scope)s (add it to the token in the app's settings)"
                ),
                token=mask(token),
                scope=answer.needed or "connections:write",
            )
        )
    elif answer.outcome == "refused":
        checks.append(
            _line(
                name,
                Level.FAIL,
                N_("Slack refused the app-level token %(token)s (%(error)s)"),
                token=mask(token),
                error=answer.error,
            )
        )
    else:
        checks.append(
            _line(
                name,
                Level.OK,
                N_("Slack opens a Socket Mode connection for the app-level token %(token)s"),
                token=mask(token),
            )
        )
    users, group = settings.slack_allowed_users, settings.slack_allowed_usergroup
    if not users and group is None:
        checks.append(
            _line(
                name,
                Level.WARN,
                N_(
                    "nobody may ask: set FLEETWATCH_SLACK_ALLOWED_USERS or FLEETWATCH_SLACK_ALLOWED_USERGROUP"
                ),
            )
        )
    else:
        who = ", ".join([*users, *([group] if group else [])])
        checks.append(
            _line(
                C_("doctor check", "who may ask from Slack"),
                Level.INFO,
                N_("%(who)s, in direct messages and %(channels)s; read-only"),
                who=who,
                channels=Words.counted(
                    len(settings.slack_ask_channels), Nn_("%(n)s channel", "%(n)s channels")
                ),
            )
        )
    return checks
