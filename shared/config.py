"""Fleetwatch's settings: one declarative table, read once at the edge from an environment.

The table is `Settings` itself: one field per ``FLEETWATCH_*`` variable, declared once with
`setting`: its default, help text, parser, whether it is a secret, and which processes read it
(``read_by``: a test holds that to the code each process's entry point reaches, and
``docs/settings.md`` shows it; `service_settings` makes it each service's environment
allowlist). `SETTINGS` lists the same rows as `Setting`, derived. `load_settings(env)` reads
them (from `os.environ` unless an environment is passed) into a frozen `Settings`. Rules:

- An empty value means "unset": the default applies (so ``FLEETWATCH_WRITE_DEVICE_IDS=``
  is no allowlist, and ``FLEETWATCH_ANTHROPIC_API_KEY=`` turns the model off).
- Defaults may name earlier settings as ``{FLEETWATCH_HOME}``, the current uid as ``{uid}``
  and the environment's locale's language as ``{system_language}`` (`system_language`, else
  ``en``); a leading ``~`` expands with the environment's ``HOME``.
- A ``FLEETWATCH_*`` variable not in the table is refused, to catch typos.
- Secrets are wrapped in `Secret`, whose ``repr``/``str``/format is ``Secret('***')``; error
  messages name a bad secret's variable but never echo its value.

Errors: `ConfigError` (code ``config_invalid``) naming the variable.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import tzlocal

from shared.errors import N_, Code, FleetwatchError
from shared.ids import is_master_id
from shared.language_tags import LANGUAGES, parse_language, system_language
from shared.spelling import closest

PREFIX = "FLEETWATCH_"
REPO_POLICY_DIR = Path(__file__).resolve().parent.parent / "policy"
"""The checkout's own ``policy/`` folder (absent in an installed package)."""
SHIPPED_POLICY_DIR = Path(__file__).resolve().parent / "policy" / "shipped"
"""The installed package's copy of ``policy/`` (the wheel maps the package
``shared.policy.shipped`` to the checkout's ``policy/``; a checkout has no such folder)."""
DEFAULT_POLICY_DIR = (
    REPO_POLICY_DIR if (REPO_POLICY_DIR / "tool_policy.yaml").is_file() else SHIPPED_POLICY_DIR
)
"""The default `FLEETWATCH_POLICY_DIR`: the checkout's ``policy/`` when running from a checkout,
else the copy installed with the package, so a ``pip install .`` finds the policy anywhere."""


class ConfigError(FleetwatchError):
    """A setting is malformed or unknown (code ``config_invalid``); the message names it.

    Attributes:
        name: the setting (``FLEETWATCH_...``), as it is in every language.
        template: the problem (after ``NAME: ``) as a catalogue message ID (English,
            ``%(key)s`` parameters), or None when the problem is only text.
        params: the template's parameters (text).
    """

    def __init__(
        self, name: str, problem: str, *, template: str | None = None, params: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self.template = template
        self.params = dict(params or {})
        super().__init__(Code.CONFIG_INVALID, f"{name}: {problem}")

    @classmethod
    def of(cls, name: str, template: str, **params: object) -> ConfigError:
        """A `ConfigError` whose problem is `template` (marked `N_`) with `params` put in."""
        texts = {k: str(v) for k, v in params.items()}
        return cls(name, template % texts if texts else template, template=template, params=texts)


@dataclasses.dataclass(frozen=True, slots=True, eq=True)
class Secret:
    """A secret string. It prints as ``Secret('***')`` everywhere (repr, str, format, logs);
    only `reveal()` gives the value, so a leak needs a visible call."""

    _value: str = dataclasses.field(repr=False)

    def reveal(self) -> str:
        """The secret itself. Never log or print it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)


PROCESSES = ("fleetwatch", "assistant", "approval_web", "executor")
"""The processes a setting's ``read_by`` may name: the CLI and the three services."""
EVERY_PROCESS = PROCESSES


class BadValue(ValueError):
    """Raised by a parser; `load_settings` turns it into a `ConfigError` naming the variable.
    `template` is a catalogue message ID (marked `N_`), `params` its parameters (text)."""

    def __init__(self, template: str, **params: object) -> None:
        self.template = template
        self.params = {k: str(v) for k, v in params.items()}
        super().__init__(template % self.params if self.params else template)


def _path(raw: str) -> Path:
    return Path(raw)


def _optional_path(raw: str) -> Path | None:
    return Path(raw) if raw else None


def _team_id(raw: str) -> str | None:
    # Blank is not "unset" by accident: a value of spaces would otherwise count as a fence.
    if not raw:
        return None
    if raw != raw.strip() or not raw.strip():
        raise BadValue(
            N_("blank or with spaces around it: %(raw)s (leave it empty to unset it)"), raw=repr(raw)
        )
    return raw


def _text(raw: str) -> str:
    if not raw.strip():
        raise BadValue(N_("must not be blank"))
    return raw


def _port(raw: str) -> int:
    try:
        port = int(raw, 10)
    except ValueError as exc:
        raise BadValue(N_("not a port number: %(raw)s"), raw=repr(raw)) from exc
    if not 0 <= port <= 65535:
        raise BadValue(N_("port %(port)s is outside 0..65535 (0 = any free port)"), port=port)
    return port


def _url(raw: str) -> str:
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadValue(N_("not an http(s) URL: %(raw)s"), raw=repr(raw))
    return raw


def _optional_url(raw: str) -> str | None:
    return _url(raw) if raw else None


def _number_of_seconds(raw: str) -> float:
    try:
        return float(raw)
    except ValueError as exc:
        raise BadValue(N_("not a number of seconds: %(raw)s"), raw=repr(raw)) from exc


def _positive_seconds(raw: str) -> float:
    seconds = _number_of_seconds(raw)
    if not 0 < seconds < 3600:
        raise BadValue(N_("%(seconds)s s is outside (0, 3600)"), seconds=seconds)
    return seconds


def _reread_seconds(raw: str) -> float:
    seconds = _number_of_seconds(raw)
    if not 0 <= seconds <= 30:
        raise BadValue(N_("%(seconds)s s is outside 0..30"), seconds=f"{seconds:g}")
    return seconds


def _csv(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def _master_ids(raw: str) -> tuple[str, ...]:
    ids = _csv(raw)
    bad = [i for i in ids if not is_master_id(i)]
    if bad:
        raise BadValue(N_("not a master ID (^[0-9a-f]{8,32}$): %(raw)s"), raw=repr(bad[0]))
    return tuple(sorted(set(ids)))


def _uids(raw: str) -> frozenset[int]:
    uids = _csv(raw)
    if not uids or not all(u.isdigit() for u in uids):
        raise BadValue(N_("not a comma-separated list of uids: %(raw)s"), raw=repr(raw))
    return frozenset(int(u) for u in uids)


def _gids(raw: str) -> frozenset[int]:
    gids = _csv(raw)
    if not all(g.isdigit() for g in gids):
        raise BadValue(N_("not a comma-separated list of gids: %(raw)s"), raw=repr(raw))
    return frozenset(int(g) for g in gids)


def _log_level(raw: str) -> str:
    level = raw.strip().upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise BadValue(N_("not a log level: %(raw)s"), raw=repr(raw))
    return level


def _time_zone(raw: str) -> dt.tzinfo:
    if not raw:
        return tzlocal.get_localzone()
    try:
        return ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise BadValue(
            N_("not a time zone: %(raw)s (an IANA name such as America/Mexico_City)"), raw=repr(raw)
        ) from exc


def _optional_secret(raw: str) -> Secret | None:
    return Secret(raw) if raw else None


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts a destination may be reached on over plain http (the lab's stand-ins)."""


def _https_or_loopback(raw: str) -> str:
    parts = urlsplit(raw)
    if not parts.hostname or parts.scheme not in ("http", "https"):
        raise BadValue(N_("not an http(s) URL"))
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        raise BadValue(N_("must be https (plain http only to 127.0.0.1, localhost or ::1)"))
    if parts.username or parts.password:
        raise BadValue(N_("must not carry a user name or password"))
    return raw


def _optional_secret_url(raw: str) -> Secret | None:
    return Secret(_https_or_loopback(raw)) if raw else None


def _interval_seconds(raw: str) -> float:
    seconds = _number_of_seconds(raw)
    if not 1 <= seconds <= 86400:
        raise BadValue(N_("%(seconds)s s is outside 1..86400"), seconds=f"{seconds:g}")
    return seconds


def _minutes(raw: str) -> int:
    if not raw.isdigit():
        raise BadValue(N_("not a whole number of minutes: %(raw)s"), raw=repr(raw))
    minutes = int(raw)
    if not 1 <= minutes <= 1440:
        raise BadValue(N_("%(minutes)s min is outside 1..1440"), minutes=minutes)
    return minutes


def _optional_text(raw: str) -> str | None:
    if not raw:
        return None
    if raw != raw.strip() or any(c in raw for c in "\r\n\t"):
        raise BadValue(N_("spaces around it or a line break: %(raw)s"), raw=repr(raw))
    return raw


def _on_off(raw: str) -> bool:
    if raw.lower() not in ("", "0", "off", "no", "false", "1", "on", "yes", "true"):
        raise BadValue(N_("not on or off: %(raw)s"), raw=repr(raw))
    return raw.lower() in ("1", "on", "yes", "true")


def _audit_export(raw: str) -> str | None:
    if not raw:
        return None
    if raw == "syslog" or raw.startswith("/"):
        return raw
    raise BadValue(N_("neither an absolute file path nor syslog: %(raw)s"), raw=repr(raw))


def _language(raw: str) -> str:
    language = parse_language(raw)
    if language is None:
        raise BadValue(N_("not en or es (nor English, Spanish, es_MX...): %(raw)s"), raw=repr(raw))
    return language


def _slack_ids(prefixes: str, what: str) -> Callable[[str], tuple[str, ...]]:
    """A parser of a comma-separated list of Slack IDs starting with one of `prefixes`."""
    pattern = re.compile(rf"^[{prefixes}][A-Z0-9]{{2,30}}\Z")

    def parse(raw: str) -> tuple[str, ...]:
        ids = _csv(raw)
        bad = [i for i in ids if not pattern.match(i)]
        if bad:
            raise BadValue(N_("not a Slack %(what)s ID: %(raw)s"), what=what, raw=repr(bad[0]))
        return tuple(sorted(set(ids)))

    return parse


def _slack_id(prefixes: str, what: str) -> Callable[[str], str | None]:
    """A parser of one optional Slack ID starting with one of `prefixes`."""
    many = _slack_ids(prefixes, what)

    def parse(raw: str) -> str | None:
        ids = many(raw)
        if len(ids) > 1:
            raise BadValue(N_("one Slack %(what)s ID, not a list: %(raw)s"), what=what, raw=repr(raw))
        return ids[0] if ids else None

    return parse


def _slack_app_token(raw: str) -> Secret | None:
    if not raw:
        return None
    if not raw.startswith("xapp-"):
        kind = raw[:5] if raw[:5] in ("xoxb-", "xoxp-") else "?"
        raise BadValue(
            N_("a %(kind)s token, not an app-level token: Socket Mode needs one starting with xapp-"),
            kind=kind,
        )
    return Secret(raw)


@dataclasses.dataclass(frozen=True, slots=True)
class Setting:
    """One row of the table.

    Attributes:
        name: the environment variable, ``FLEETWATCH_...``.
        default: the raw default (placeholders ``{FLEETWATCH_X}``, ``{uid}``; ``""`` = unset).
        help: one line for ``--help`` and ``doctor``.
        secret: wrap the value in `Secret` and never echo it.
        parse: raw string -> value; raises `BadValue`.
        read_by: the processes (`PROCESSES`) that use it; each must reach code that reads it
            (``tests/shared/test_settings_readers.py``).
    """

    name: str
    default: str
    help: str
    secret: bool
    parse: Callable[[str], Any]
    read_by: tuple[str, ...] = ()

    @property
    def attr(self) -> str:
        """The `Settings` field: the name without ``FLEETWATCH_``, lower case."""
        return self.name.removeprefix(PREFIX).lower()


def setting(
    default: str, help: str, parse: Callable[[str], Any], *, secret: bool = False, read_by: tuple[str, ...]
) -> Any:
    """One row of the table, declared as a `Settings` field: ``attr: type = setting(...)``, the
    field's name giving the variable (``FLEETWATCH_`` + the name in capitals) and its type what
    `parse` returns. The arguments are `Setting`'s."""
    return dataclasses.field(
        metadata={
            "row": {"default": default, "help": help, "secret": secret, "parse": parse, "read_by": read_by}
        }
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """Every setting, parsed: THE table, one row per setting (`setting`). The field's name is
    `Setting.attr`; `SETTINGS` lists the rows as `Setting` in this order (a default may name
    only an earlier row)."""

    home: Path = setting(
        "~/.fleetwatch", "Folder holding all state by default.", _path, read_by=EVERY_PROCESS
    )
    state_dir: Path = setting(
        "{FLEETWATCH_HOME}/state", "Folder for the store and state files.", _path, read_by=EVERY_PROCESS
    )
    runtime_dir: Path = setting(
        "{FLEETWATCH_HOME}/run", "Folder for the sockets (mode 0750/0700).", _path, read_by=EVERY_PROCESS
    )
    db: Path = setting(
        "{FLEETWATCH_STATE_DIR}/fleetwatch.db",
        "The SQLite store (WAL).",
        _path,
        read_by=("approval_web", "executor", "fleetwatch"),
    )
    keys_dir: Path = setting(
        "{FLEETWATCH_HOME}/keys",
        "Folder (0700) of a writing service's own audit key and anchor; on a server each service has "
        "its own, which the other cannot read.",
        _path,
        read_by=("approval_web", "executor"),
    )
    lab_port: int = setting(
        "8770",
        "Port of the lab (simulated Epiphan Edge) on 127.0.0.1; the default MCP URL follows it.",
        _port,
        read_by=("fleetwatch", "assistant", "executor"),
    )
    epiphan_mcp_url: str = setting(
        "http://127.0.0.1:{FLEETWATCH_LAB_PORT}/mcp",
        "Epiphan Edge MCP endpoint; the default is the embedded lab (on FLEETWATCH_LAB_PORT).",
        _url,
        read_by=("fleetwatch", "assistant", "executor"),
    )
    model_standin_port: int = setting(
        "8771",
        "Port of the lab's Messages-API stand-in (the demo model) on 127.0.0.1; the assistant names a "
        "model at this port the demo model.",
        _port,
        read_by=("fleetwatch", "assistant"),
    )
    approve_port: int = setting(
        "8767",
        "Port of the approval page, on 127.0.0.1 and [::1] (its URL: http://127.0.0.1:PORT/).",
        _port,
        read_by=("fleetwatch", "approval_web"),
    )
    approve_secret_file: Path = setting(
        "{FLEETWATCH_STATE_DIR}/approve-secret",
        "Where the approval page's secret is written when not started on a terminal (0600; 0640 in a "
        "setgid folder, for its group).",
        _path,
        read_by=("fleetwatch", "approval_web"),
    )
    ask_port: int = setting(
        "8766",
        "Port of the ask page and the wall, on 127.0.0.1 and [::1] (their URL: http://localhost:PORT/).",
        _port,
        read_by=("fleetwatch", "assistant"),
    )
    ask_secret_file: Path = setting(
        "{FLEETWATCH_STATE_DIR}/ask-secret",
        "Where the ask page's secret is written when not started on a terminal (0600; 0640 in a "
        "setgid folder, for its group).",
        _path,
        read_by=("fleetwatch", "assistant"),
    )
    read_token_file: Path = setting(
        "{FLEETWATCH_HOME}/tokens/read.json",
        "Token slot of the read sign-in (the assistant's).",
        _path,
        read_by=("fleetwatch", "assistant"),
    )
    sandbox_token_file: Path = setting(
        "{FLEETWATCH_HOME}/tokens/sandbox.json",
        "Token slot of the sandbox sign-in (the executor's only).",
        _path,
        read_by=("fleetwatch", "executor"),
    )
    write_device_ids: tuple[str, ...] = setting(
        "",
        "Comma-separated master IDs a change may target (the fence's allowlist); empty = none.",
        _master_ids,
        read_by=EVERY_PROCESS,
    )
    write_team_id: str | None = setting(
        "",
        "The sandbox team's ID, checked against the sandbox sign-in; empty = unset.",
        _team_id,
        read_by=EVERY_PROCESS,
    )
    policy_dir: Path = setting(
        str(DEFAULT_POLICY_DIR),
        "Folder holding policy.yaml and tool_policy.yaml.",
        _path,
        read_by=EVERY_PROCESS,
    )
    policy_override: Path | None = setting(
        "", "Optional policy file layered over the policy folder.", _optional_path, read_by=EVERY_PROCESS
    )
    audit_export: str | None = setting(
        "",
        "Optional continuous copy of the audit: an absolute JSON-lines file path, or syslog. Each "
        "writing service appends every audit row it writes, with its MAC and chain position, right "
        "after the row commits; sent and dropped counts show in status and doctor. Empty: none.",
        _audit_export,
        read_by=("fleetwatch", "approval_web", "executor"),
    )
    anthropic_api_key: Secret | None = setting(
        "",
        "Model API key; empty = model off (keyword answers).",
        _optional_secret,
        secret=True,
        read_by=("fleetwatch", "assistant"),
    )
    anthropic_base_url: str | None = setting(
        "",
        "Model API base URL; empty = the SDK's default.",
        _optional_url,
        read_by=("fleetwatch", "assistant"),
    )
    model: str = setting(
        "claude-sonnet-4-6",
        "Model name (Anthropic Messages API).",
        _text,
        read_by=("fleetwatch", "assistant"),
    )
    model_local_only: bool = setting(
        "off",
        "on: the assistant refuses to start unless the model's URL is on this machine or a private network.",
        _on_off,
        read_by=("fleetwatch", "assistant"),
    )
    model_timeout_seconds: float = setting(
        "60", "Timeout of one model call, in seconds.", _positive_seconds, read_by=("assistant",)
    )
    verify_reread_seconds: float = setting(
        "3",
        "Seconds the executor waits before its one second verification read, when the first read "
        "after a write does not show the change yet (0 to 30; Epiphan applies controls a moment after it answers).",
        _reread_seconds,
        read_by=("executor",),
    )
    executor_uids: frozenset[int] = setting(
        "{uid}",
        "Uids allowed on executor.sock (approval_web's user).",
        _uids,
        read_by=("fleetwatch", "executor"),
    )
    approval_uids: frozenset[int] = setting(
        "{uid}",
        "Operators' uids: every operation on approval.sock (the fleetwatch admin commands) and ask on "
        "assistant.sock.",
        _uids,
        read_by=("fleetwatch", "approval_web"),
    )
    assistant_uids: frozenset[int] = setting(
        "{uid}",
        "The assistant service's uids: on approval.sock they may only submit proposals, read their "
        "state, expire their own turn, list the writable devices and send the assistant's audit "
        "records, which no other uid may send (a uid also on FLEETWATCH_APPROVAL_UIDS is an operator).",
        _uids,
        read_by=("fleetwatch", "assistant", "approval_web"),
    )
    executor_gids: frozenset[int] = setting(
        "",
        "Gids allowed on executor.sock besides its uids (primary or supplementary); empty = none.",
        _gids,
        read_by=("fleetwatch", "executor"),
    )
    approval_gids: frozenset[int] = setting(
        "",
        "Gids allowed on approval.sock besides its uids (e.g. fleetwatch-operators); empty = none.",
        _gids,
        read_by=("fleetwatch", "approval_web"),
    )
    assistant_gids: frozenset[int] = setting(
        "",
        "Gids allowed on assistant.sock besides its uids (e.g. fleetwatch-operators); empty = none.",
        _gids,
        read_by=("fleetwatch", "assistant"),
    )
    timezone: dt.tzinfo = setting(
        "",
        "The operator's time zone (an IANA name such as America/Mexico_City) for every time a person "
        "reads on the page, in the CLI and in answers; empty = the system's. --json and the audit stay UTC.",
        _time_zone,
        read_by=("fleetwatch", "approval_web", "assistant"),
    )
    language: str = setting(
        "{system_language}",
        "The language of the command's words and headings: en or es, in any case, or a locale or a "
        "language's name (ES, es_MX.UTF-8, Spanish); empty = the system locale's (LC_ALL, LC_MESSAGES, "
        "LANG) when it is English or Spanish, else en. --language overrides it; the page follows the "
        "browser or its language switch.",
        _language,
        read_by=("fleetwatch",),
    )
    watch_db: Path = setting(
        "{FLEETWATCH_STATE_DIR}/watch.db",
        "The watch's own SQLite store (devices, findings, posts, room notes); the assistant's only, "
        "never the approval store.",
        _path,
        read_by=("assistant", "fleetwatch"),
    )
    heartbeat_seconds: float = setting(
        "180",
        "Seconds between two reads of the fleet by the watch's heartbeat (1 to 86400).",
        _interval_seconds,
        read_by=("assistant",),
    )
    readiness_minutes: int = setting(
        "30",
        "Minutes before each scheduled event when the watch posts the room's readiness (1 to 1440).",
        _minutes,
        read_by=("assistant",),
    )
    watch_language: str = setting(
        "en", "Language of the watch's posts and wall screen: en or es.", _language, read_by=("assistant",)
    )
    slack_bot_token: Secret | None = setting(
        "",
        "Slack bot token (xoxb-...) for the watch's posts; empty = no Slack. Needs FLEETWATCH_SLACK_CHANNEL.",
        _optional_secret,
        secret=True,
        read_by=("fleetwatch", "assistant"),
    )
    slack_channel: str | None = setting(
        "",
        "Slack channel the watch posts to (a name such as #av-ops, or an ID).",
        _optional_text,
        read_by=("fleetwatch", "assistant"),
    )
    slack_api_url: str = setting(
        "https://slack.com/api/",
        "Slack Web API base URL (https; http only on loopback, for the lab's stand-in).",
        _https_or_loopback,
        read_by=("fleetwatch", "assistant"),
    )
    slack_app_token: Secret | None = setting(
        "",
        "Slack app-level token (xapp-..., scope connections:write) for asks from Slack over Socket Mode; "
        "empty = nobody can ask from Slack. Needs FLEETWATCH_SLACK_BOT_TOKEN and FLEETWATCH_SLACK_TEAM_ID.",
        _slack_app_token,
        secret=True,
        read_by=("fleetwatch", "assistant"),
    )
    slack_team_id: str | None = setting(
        "",
        "The Slack workspace (team ID, T...) asks are answered from; an ask from any other is refused.",
        _slack_id("T", "team"),
        read_by=("fleetwatch", "assistant"),
    )
    slack_allowed_users: tuple[str, ...] = setting(
        "",
        "Slack member IDs (U... or W..., comma-separated) who may ask from Slack; with no user group "
        "either, nobody may.",
        _slack_ids("UW", "member"),
        read_by=("fleetwatch", "assistant"),
    )
    slack_allowed_usergroup: str | None = setting(
        "",
        "A Slack user group (S...) whose members may ask from Slack (looked up with "
        "usergroups.users.list, kept 300 s; a failed lookup admits nobody).",
        _slack_id("S", "user group"),
        read_by=("fleetwatch", "assistant"),
    )
    slack_ask_channels: tuple[str, ...] = setting(
        "",
        "Slack channel IDs (C... or G..., comma-separated) where a mention or /fleetwatch is answered, "
        "besides direct messages.",
        _slack_ids("CG", "channel"),
        read_by=("fleetwatch", "assistant"),
    )
    slack_watchdog_seconds: float = setting(
        "30",
        "Seconds without any frame from Slack after which the Socket Mode connection is opened anew.",
        _positive_seconds,
        read_by=("assistant",),
    )
    teams_webhook_url: Secret | None = setting(
        "",
        "Microsoft Teams Workflows webhook address for the watch's posts (a secret); empty = no Teams.",
        _optional_secret_url,
        secret=True,
        read_by=("fleetwatch", "assistant"),
    )
    log_level: str = setting(
        "INFO",
        "Log level: DEBUG, INFO, WARNING, ERROR or CRITICAL.",
        _log_level,
        read_by=("assistant", "approval_web", "executor"),
    )

    @property
    def fence_configured(self) -> bool:
        """True when the fence has an allowlist or a team ID; with neither, nothing may be
        proposed or run (`Code.FENCE_NOT_CONFIGURED`)."""
        return bool(self.write_device_ids) or self.write_team_id is not None

    @property
    def executor_socket(self) -> Path:
        return self.runtime_dir / "executor.sock"

    @property
    def approval_socket(self) -> Path:
        return self.runtime_dir / "approval.sock"

    @property
    def assistant_socket(self) -> Path:
        return self.runtime_dir / "assistant.sock"

    def describe(self) -> tuple[tuple[str, str], ...]:
        """(variable, shown value) for each setting, secrets as ``Secret('***')`` or ``(unset)``."""
        rows = []
        for setting in SETTINGS:
            value = getattr(self, setting.attr)
            shown = "(unset)" if value in (None, (), "") else str(value)
            if isinstance(value, frozenset):
                shown = ",".join(str(v) for v in sorted(value)) or "(unset)"
            elif isinstance(value, tuple) and value:
                shown = ",".join(value)
            elif isinstance(value, dt.tzinfo):
                shown = str(getattr(value, "key", None) or value)
            rows.append((setting.name, shown))
        return tuple(rows)


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(PREFIX + field.name.upper(), **field.metadata["row"]) for field in dataclasses.fields(Settings)
)
"""Every setting as a `Setting`, in `Settings`' order: derived, never written."""


SERVICES = PROCESSES[1:]
"""The three services, as ``read_by`` names them."""

SERVICE_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The ``PATH`` each service runs with (`service_environment`): the system's folders, never the
caller's."""
SERVICE_LANG = "C.UTF-8"
"""The ``LANG`` each service runs with: the words a person reads follow the settings and the
browser, never the locale."""


def service_settings(service: str) -> frozenset[str]:
    """The ``FLEETWATCH_*`` names `service` (one of `SERVICES`) may be given: the rows whose
    ``read_by`` names it. The one allowlist behind every service's environment, under ``fleetwatch
    up`` (``services.ctl.supervise``) and in the systemd units (their ``UnsetEnvironment=``,
    held to this by ``tests/deploy/test_units.py``): the model key, Slack and Teams reach the
    assistant only, the sandbox slot the executor only.

    Raises:
        ValueError: `service` is not one of `SERVICES`.
    """
    if service not in SERVICES:
        raise ValueError(f"not a service: {service!r}")
    return frozenset(s.name for s in SETTINGS if service in s.read_by)


def service_environment(service: str, env: Mapping[str, str], *, home: str) -> dict[str, str]:
    """Exactly what `service` runs with, from the caller's environment `env`: its own settings
    (`service_settings`) as `env` gives them, ``PATH`` `SERVICE_PATH`, ``LANG`` `SERVICE_LANG`
    and ``HOME`` `home`; nothing else of `env` (no token of another service, no variable of the
    caller's shell).

    Raises:
        ValueError: `service` is not one of `SERVICES`.
    """
    own = service_settings(service)
    settings = {name: value for name, value in env.items() if name in own}
    return {"PATH": SERVICE_PATH, "LANG": SERVICE_LANG, "HOME": home, **settings}


def _expand_home(text: str, env: Mapping[str, str]) -> str:
    if text == "~" or text.startswith("~/"):
        return (env.get("HOME") or str(Path.home())) + text[1:]
    return text


def _default(setting: Setting, resolved: Mapping[str, str], env: Mapping[str, str]) -> str:
    try:
        text = setting.default.format_map(
            {**resolved, "uid": str(os.getuid()), "system_language": system_language(env) or LANGUAGES[0]}
        )
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError.of(
            setting.name, N_("the default names an unknown placeholder (%(why)s)"), why=exc
        ) from exc
    return _expand_home(text, env)


def unknown_setting_error(name: str) -> ConfigError:
    """The `ConfigError` for `name`, a ``FLEETWATCH_*`` variable not in `SETTINGS`: naming the
    closest known setting when one is close (`shared.spelling.closest`), else where the list is."""
    close = closest(name, [s.name for s in SETTINGS], cutoff=0.75)
    if close is not None:
        return ConfigError.of(
            name,
            N_("unknown setting; did you mean %(close)s? (every setting: docs/settings.md)"),
            close=close,
        )
    return ConfigError.of(name, N_("unknown setting; every setting is listed in docs/settings.md"))


def load_settings_with(chosen: Mapping[str, str], env: Mapping[str, str] | None = None) -> Settings:
    """`load_settings` of `env` (default: `os.environ`) with `chosen` over it (the settings a
    running Fleetwatch was started with beside the caller's, e.g. the ports ``up --free-ports``
    chose). Raises as `load_settings`."""
    return load_settings({**(os.environ if env is None else env), **chosen})


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read every setting from `env` (default: `os.environ`) once.

    Raises:
        ConfigError: a value does not parse (the message names the variable, and echoes the
            value unless it is secret), or `env` holds a ``FLEETWATCH_*`` variable that is not
            in `SETTINGS`.
    """
    env = os.environ if env is None else env
    known = {s.name for s in SETTINGS}
    unknown = sorted(name for name in env if name.startswith(PREFIX) and name not in known)
    if unknown:
        raise unknown_setting_error(unknown[0])
    resolved: dict[str, str] = {}
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        given = env.get(setting.name, "")
        raw = given if given else _default(setting, resolved, env)
        if setting.parse in (_path, _optional_path):
            raw = _expand_home(raw, env)
        try:
            values[setting.attr] = setting.parse(raw)
        except BadValue as exc:
            if setting.secret:
                if raw in str(exc):
                    raise ConfigError.of(
                        setting.name, N_("malformed value (secret, not shown): see the setting's help")
                    ) from None
                raise ConfigError.of(
                    setting.name,
                    N_("malformed value (secret, not shown): %(why)s"),
                    why=exc,  # a fixed sentence (no value in it): the catalogue has it too
                ) from None
            raise ConfigError(setting.name, str(exc), template=exc.template, params=exc.params) from exc
        resolved[setting.name] = "" if setting.secret else raw
    return Settings(**values)


def given(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value `env` (default: `os.environ`) gives the setting `name` itself, or None when it
    is unset or empty (its default applies). For a command that repeats the caller's own
    settings back to them (``FLEETWATCH_HOME=... fleetwatch ...``).

    Raises:
        ConfigError: `name` is not a setting.
    """
    if name not in {s.name for s in SETTINGS}:
        raise ConfigError.of(name, N_("unknown setting"))
    env = os.environ if env is None else env
    return env.get(name) or None


def home_given(env: Mapping[str, str] | None = None) -> str | None:
    """``FLEETWATCH_HOME`` as `env` (default: `os.environ`) sets it, or None when it is unset or
    names the default home (``~/.fleetwatch``): what a printed command must carry for a new
    terminal to find this Fleetwatch (`shared.text.command_line.printed_command`)."""
    env = os.environ if env is None else env
    home = given("FLEETWATCH_HOME", env)
    if home is None:
        return None
    default = next(s for s in SETTINGS if s.name == "FLEETWATCH_HOME").default
    return None if Path(_expand_home(home, env)) == Path(_expand_home(default, env)) else home


QUIET_LIBRARIES = ("httpx2", "httpx", "mcp")
"""Libraries that log every HTTP request at INFO: below DEBUG they log warnings only (a
heartbeat every few minutes would otherwise fill the log with request lines)."""


RAW_MESSAGE_LOGGERS = ("mcp",)
"""Libraries that log the raw messages they receive at DEBUG (the MCP SDK: every Epiphan answer,
stream keys and passwords unredacted): never below INFO, whatever the level."""


def configure_logging(settings: Settings) -> None:
    """Set the root logger's level from `FLEETWATCH_LOG_LEVEL` (call once, in ``__main__``);
    `QUIET_LIBRARIES` log warnings only unless it is ``DEBUG``, and `RAW_MESSAGE_LOGGERS` never
    log at DEBUG."""
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if settings.log_level != "DEBUG":
        for name in QUIET_LIBRARIES:
            logging.getLogger(name).setLevel(logging.WARNING)
    else:
        for name in RAW_MESSAGE_LOGGERS:
            logging.getLogger(name).setLevel(logging.INFO)


def settings_markdown() -> str:
    """The page ``docs/settings.md``, generated from `SETTINGS` (a test holds the file to this
    output; regenerate with ``python -m shared.config > docs/settings.md``)."""
    lines = [
        "# Settings",
        "",
        "Every setting is an environment variable, read once when a process starts. An empty value",
        "means unset (the default applies). A `FLEETWATCH_*` variable not listed here is refused, so",
        "a typo cannot silently weaken anything. In a default, a setting's name in braces (such as",
        "`{FLEETWATCH_HOME}`) stands for its value, and `{uid}` for the user the process runs as.",
        "A secret never prints.",
        "No setting skips approval or the fence: with neither `FLEETWATCH_WRITE_DEVICE_IDS` nor",
        "`FLEETWATCH_WRITE_TEAM_ID` set, nothing can be proposed or run.",
        "This page is generated from `shared/config.py` (`python -m shared.config`).",
        "",
        "The last column names the processes that read a setting: `fleetwatch` (the command) and",
        "the three services, `assistant`, `approval_web` and `executor`.",
        "",
        "| variable | default | secret | what it is | read by |",
        "|---|---|---|---|---|",
    ]
    for setting in SETTINGS:
        if setting.default == str(DEFAULT_POLICY_DIR):
            default = "the checkout's `policy/` folder (installed: the package's copy of it)"
        else:
            default = f"`{setting.default}`" if setting.default else "(empty)"
        help_text = setting.help.replace("|", "\\|")
        secret = "yes" if setting.secret else "no"
        readers = ", ".join(f"`{p}`" for p in PROCESSES if p in setting.read_by)
        lines.append(f"| `{setting.name}` | {default} | {secret} | {help_text} | {readers} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(settings_markdown(), end="")
