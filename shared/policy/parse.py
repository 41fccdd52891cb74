"""Parsing the two policy files strictly into `shared.policy.model` types (no override).

Refuses anything malformed with a `PolicyError` naming the file and line (see
``tests/shared/policy/policy_cases/``). Bounds written here make the design's numbers ceilings
(DESIGN.md section 7): a policy file can tighten them, never loosen them (at most 3 pending
proposals, an approval lives at most 300 s, a denial pause lasts at least an hour...).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from shared.policy.model import (
    Autonomy,
    Limits,
    Policy,
    ProposeRule,
    QuietHours,
    ReviewedDefinition,
    TargetKind,
    Thresholds,
    ToolPolicy,
    WatchRules,
)
from shared.policy.schema import check_arguments_schema, check_conditions, check_targets
from shared.policy.source import Source, show

TOOL_POLICY_VERSION: Final = 1
READ_PREFIXES: Final = ("get_", "kb_")

THRESHOLD_RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {"cpu_pct": (1, 100), "temp_c": (1, 150), "disk_free_pct": (1, 99), "recent_reboot_minutes": (0, 1440)}
)
LIMIT_RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {
        "max_pending": (1, 3),
        "per_hour": (1, 60),
        "denials_before_pause": (1, 3),
        "denial_pause_minutes": (60, 1440),
        "approval_ttl_seconds": (30, 300),
        "proposal_ttl_seconds": (300, 3600),
    }
)
OPTIONAL_LIMIT_RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {"denial_window_minutes": (60, 10080), "min_read_seconds": (1, 60)}
)
"""Limits a policy file may leave out (the default of `Limits` applies): added after policy
files were in use, so a file written before them still loads."""
_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


POLICY_KEYS: Final = ("autonomy", "lead_minutes", "quiet_hours", "thresholds", "limits")
POLICY_OPTIONAL: Final = ("sweep_at", "watch", "model_tools")
WATCH_RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {
        "offline_after_beats": (1, 10),
        "group_min_rooms": (2, 10000),
        "group_min_percent": (1, 100),
        "reminder_minutes": (0, 60),
    }
)
"""The ``watch:`` block's numbers (each optional: `WatchRules`' default applies)."""
MODEL_TOOLS: Final = ("all", "per_question")
"""``model_tools``, widest first: an override may only move right (`shared.policy.override`)."""
DEFAULT_SWEEP_AT: Final = dt.time(3, 0)
"""The nightly sweep's time when ``sweep_at`` is not given (in the quiet hours' time zone)."""
MOVED_KEYS: Final[Mapping[str, str]] = MappingProxyType(
    {"heartbeat_seconds": "moved to the setting FLEETWATCH_HEARTBEAT_SECONDS (remove it from this file)"}
)
"""Keys an earlier policy.yaml had, and where they went (named in the refusal)."""
TOOL_POLICY_KEYS: Final = ("version", "read", "write", "disruptive", "never_proposable", "propose")
TOOL_POLICY_OPTIONAL: Final = ("not_for_model", "reviewed_definitions")
DEFINITION_KEYS: Final = ("description", "input_schema_sha256")
DESCRIPTION_MAX: Final = 1000
_SHA256 = re.compile(r"[0-9a-f]{64}")
RULE_KEYS: Final = (
    "schema_version",
    "summary",
    "undo",
    "max_targets",
    "target_fields",
    "target_kind",
    "disruptive",
    "arguments",
)
RULE_OPTIONAL: Final = ("disruptive_when", "stops_recording", "lead_minutes", "approvers")
APPROVERS_RANGE: Final = (1, 2)
"""How many distinct people a rule may ask to approve one change (``approvers:``; 1 unless set)."""


def parse_policy(src: Source) -> Policy:
    """`Policy` from a parsed ``policy.yaml``. Raises `PolicyError` naming the line."""
    if isinstance(src.data, dict):
        for key, where in MOVED_KEYS.items():
            if key in src.data:
                raise src.error((key,), where)
    present = src.mapping((), required=POLICY_KEYS, optional=POLICY_OPTIONAL)
    return Policy(
        autonomy=Autonomy(src.choice(("autonomy",), tuple(Autonomy))),
        lead_minutes=src.integer(("lead_minutes",), low=0, high=1440),
        quiet_hours=_quiet_hours(src),
        sweep_at=_time_of_day(src, ("sweep_at",)) if "sweep_at" in present else DEFAULT_SWEEP_AT,
        thresholds=Thresholds(**_integers(src, "thresholds", THRESHOLD_RANGES)),
        limits=_limits(src),
        source=src.path,
        watch=_watch(src) if "watch" in present else WatchRules(),
        model_tools=src.choice(("model_tools",), MODEL_TOOLS) if "model_tools" in present else "all",
    )


def _watch(src: Source) -> WatchRules:
    given = src.mapping(("watch",), optional=(*WATCH_RANGES, "buildings"))
    numbers = {
        name: src.integer(("watch", name), low=low, high=high)
        for name, (low, high) in WATCH_RANGES.items()
        if name in given
    }
    out: dict[str, tuple[str, ...]] = {}
    if "buildings" in given:
        buildings = src.mapping(("watch", "buildings"), any_key=True)
        for name in buildings:
            where = ("watch", "buildings", name)
            groups = src.at(where)
            if not isinstance(name, str) or not name.strip() or len(name) > 80:
                raise src.error(where, "a building's name must be non-empty text of at most 80 characters")
            if not isinstance(groups, list) or not groups:
                raise src.error(where, "must be a list of Epiphan group names")
            out[name] = tuple(src.text((*where, i), max_length=200) for i in range(len(groups)))
    return WatchRules(**numbers, buildings=MappingProxyType(out))


def _integers(src: Source, key: str, ranges: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    src.mapping((key,), required=tuple(ranges))
    return {name: src.integer((key, name), low=low, high=high) for name, (low, high) in ranges.items()}


def _limits(src: Source) -> Limits:
    given = src.mapping(("limits",), required=tuple(LIMIT_RANGES), optional=tuple(OPTIONAL_LIMIT_RANGES))
    values = {
        name: src.integer(("limits", name), low=low, high=high) for name, (low, high) in LIMIT_RANGES.items()
    }
    for name, (low, high) in OPTIONAL_LIMIT_RANGES.items():
        if name in given:
            values[name] = src.integer(("limits", name), low=low, high=high)
    return Limits(**values)


def _time_of_day(src: Source, where: tuple[str, ...]) -> dt.time:
    value = src.at(where)
    if isinstance(value, int):
        raise src.error(where, 'write the time in quotes, e.g. "22:00" (YAML reads 22:00 as a number)')
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        raise src.error(where, 'must be a time of day "HH:MM", 00:00 to 23:59')
    return dt.time.fromisoformat(value)


def _quiet_hours(src: Source) -> QuietHours:
    given = src.mapping(("quiet_hours",), required=("start", "end"), optional=("timezone",))
    times = [_time_of_day(src, ("quiet_hours", name)) for name in ("start", "end")]
    if times[0] == times[1]:
        raise src.error(("quiet_hours", "end"), "start and end are the same time")
    if "timezone" not in given:
        return QuietHours(start=times[0], end=times[1])
    zone = src.text(("quiet_hours", "timezone"), max_length=64)
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise src.error(
            ("quiet_hours", "timezone"), "is not a known IANA time zone (e.g. UTC, America/Bogota)"
        ) from None
    return QuietHours(start=times[0], end=times[1], timezone=zone)


def parse_tool_policy(src: Source) -> ToolPolicy:
    """`ToolPolicy` from a parsed ``tool_policy.yaml``. Raises `PolicyError` naming the line."""
    src.mapping((), required=TOOL_POLICY_KEYS, optional=TOOL_POLICY_OPTIONAL)
    version = src.integer(("version",), low=1)
    if version != TOOL_POLICY_VERSION:
        raise src.error(
            ("version",), f"{version} is not supported (this Fleetwatch reads version {TOOL_POLICY_VERSION})"
        )
    read, write = src.names(("read",)), src.names(("write",))
    for index, tool in enumerate(read):
        if tool in write:
            raise src.error(
                ("read", index), f"{show(tool)} is also on the write list; a write tool is never a read tool"
            )
        if not tool.startswith(READ_PREFIXES):
            raise src.error(
                ("read", index),
                f"{show(tool)} does not start with get_ or kb_; only such tools are read tools",
            )
    for index, tool in enumerate(write):
        if tool.startswith(READ_PREFIXES):
            raise src.error(
                ("write", index), f"{show(tool)} starts with get_ or kb_, so it is a read tool, not a write"
            )
    disruptive = _subset(src, "disruptive", write, "write")
    never = _subset(src, "never_proposable", write, "write")
    not_for_model = _subset(src, "not_for_model", read, "read") if src.has(("not_for_model",)) else ()
    rules = src.mapping(("propose",), any_key=True)
    propose: dict[str, ProposeRule] = {}
    for tool in rules:
        if tool not in write:
            raise src.error(
                ("propose", tool), f"{show(tool)} is not on the write list; only write tools are proposed"
            )
        if tool in never:
            raise src.error(("propose", tool), f"{show(tool)} is never proposable (it carries stream keys)")
        propose[tool] = _rule(src, tool, always_disruptive=tool in disruptive)
    definitions = _definitions(src, read, write) if src.has(("reviewed_definitions",)) else {}
    return ToolPolicy(
        version=version,
        read_tools=frozenset(read),
        write_tools=frozenset(write),
        disruptive_tools=frozenset(disruptive),
        never_proposable=frozenset(never),
        not_for_model=frozenset(not_for_model),
        propose=MappingProxyType(propose),
        source=src.path,
        definitions=MappingProxyType(definitions),
    )


def _definitions(src: Source, read: tuple[str, ...], write: tuple[str, ...]) -> dict[str, ReviewedDefinition]:
    """``reviewed_definitions:``: per read or write tool, the server's description and the
    SHA-256 of its input schema as a person last reviewed them (a write tool's is used while
    it is proposable: one taken off ``propose:`` keeps its entry, unused)."""
    out: dict[str, ReviewedDefinition] = {}
    for tool in src.mapping(("reviewed_definitions",), any_key=True):
        at = ("reviewed_definitions", tool)
        if tool not in read and tool not in write:
            raise src.error(at, f"{show(tool)} is on neither the read list nor the write list")
        src.mapping(at, required=DEFINITION_KEYS)
        digest = src.at((*at, "input_schema_sha256"))
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise src.error((*at, "input_schema_sha256"), "must be 64 lower-case hex digits (SHA-256)")
        out[tool] = ReviewedDefinition(
            tool=tool,
            description=src.text((*at, "description"), max_length=DESCRIPTION_MAX),
            input_schema_sha256=digest,
        )
    return out


def _subset(src: Source, key: str, of: tuple[str, ...], of_name: str) -> tuple[str, ...]:
    names = src.names((key,))
    for index, tool in enumerate(names):
        if tool not in of:
            raise src.error((key, index), f"{show(tool)} is not on the {of_name} list")
    return names


def _rule(src: Source, tool: str, *, always_disruptive: bool) -> ProposeRule:
    at = ("propose", tool)
    src.mapping(at, required=RULE_KEYS, optional=RULE_OPTIONAL)
    disruptive = src.at((*at, "disruptive"))
    if not isinstance(disruptive, bool):
        raise src.error((*at, "disruptive"), "must be true or false")
    if always_disruptive and not disruptive:
        raise src.error((*at, "disruptive"), f"{show(tool)} is on the disruptive list, so this must be true")
    if always_disruptive and src.has((*at, "disruptive_when")):
        raise src.error(
            (*at, "disruptive_when"), f"{show(tool)} is on the disruptive list: every call is disruptive"
        )
    fields = src.names((*at, "target_fields"))
    if not fields:
        raise src.error((*at, "target_fields"), "must name at least one argument")
    max_targets = src.integer((*at, "max_targets"), low=1)
    kind = TargetKind(src.choice((*at, "target_kind"), tuple(TargetKind)))
    schema = check_arguments_schema(src, (*at, "arguments"))
    check_targets(src, at, schema, fields, kind, max_targets)
    when = (
        check_conditions(src, (*at, "disruptive_when"), schema) if src.has((*at, "disruptive_when")) else None
    )
    stops = (
        check_conditions(src, (*at, "stops_recording"), schema) if src.has((*at, "stops_recording")) else None
    )
    if when is not None and not disruptive:
        raise src.error((*at, "disruptive_when"), "needs disruptive: true")
    for name, values in (stops or {}).items():
        if not disruptive or (when is not None and not values <= when.get(name, frozenset())):
            raise src.error(
                (*at, "stops_recording", name), "a call that stops a recording must be disruptive"
            )
    return ProposeRule(
        tool=tool,
        schema_version=src.integer((*at, "schema_version"), low=1),
        max_targets=max_targets,
        target_fields=fields,
        target_kind=kind,
        disruptive=disruptive,
        arguments_schema=schema,
        summary=src.text((*at, "summary"), max_length=200),
        undo=src.text((*at, "undo"), max_length=300),
        disruptive_when=None if when is None else MappingProxyType(when),
        stops_recording=None if stops is None else MappingProxyType(stops),
        lead_minutes=src.integer((*at, "lead_minutes"), low=0, high=1440)
        if src.has((*at, "lead_minutes"))
        else None,
        approvers=src.integer((*at, "approvers"), low=APPROVERS_RANGE[0], high=APPROVERS_RANGE[1])
        if src.has((*at, "approvers"))
        else 1,
    )
