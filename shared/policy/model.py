"""The two policy files as frozen data, and how a loaded rule judges a call. Pure.

`shared.policy.loader` is the public face (loaders and re-exports); `shared.policy.parse` builds
these from the files. Shapes: see ``policy/policy.yaml`` and ``policy/tool_policy.yaml``.
"""

from __future__ import annotations

import datetime as dt
import enum
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared import ids
from shared.errors import Code, FleetwatchError
from shared.policy.schema import ArgumentProblem, ArgumentsError, ArgumentsValidator, argument_problems
from shared.policy.source import show
from shared.spelling import closest


class Autonomy(enum.StrEnum):
    """``observe``: read and report only, nothing may be proposed. ``propose``: may propose."""

    OBSERVE = "observe"
    PROPOSE = "propose"


class TargetKind(enum.StrEnum):
    """What a rule's target fields hold: master (device) IDs or channel IDs (`shared.ids`)."""

    MASTER = "master"
    CHANNEL = "channel"


@dataclass(frozen=True)
class QuietHours:
    """A daily window in `timezone` (an IANA name; None: the operator's zone, the setting
    ``FLEETWATCH_TIMEZONE`` or else the system's, passed in as `default`), ``start``
    inclusive, ``end`` exclusive; it may wrap midnight (22:00-06:00)."""

    start: dt.time
    end: dt.time
    timezone: str | None = None

    def zone(self, default: dt.tzinfo) -> dt.tzinfo:
        """The window's zone: the policy's when it names one, else `default`."""
        return zoneinfo.ZoneInfo(self.timezone) if self.timezone else default

    def contains(self, moment: dt.datetime, default: dt.tzinfo = dt.UTC) -> bool:
        """True when `moment` (timezone-aware) falls inside the window. ValueError if naive."""
        if moment.tzinfo is None:
            raise ValueError("moment must be timezone-aware")
        local = moment.astimezone(self.zone(default)).time().replace(tzinfo=None)
        if self.start < self.end:
            return self.start <= local < self.end
        return local >= self.start or local < self.end

    def ends_after(self, moment: dt.datetime, default: dt.tzinfo = dt.UTC) -> dt.datetime:
        """When the window `moment` is inside ends (the next local ``end`` after `moment`), as
        an aware datetime in the window's zone. ValueError if naive."""
        if moment.tzinfo is None:
            raise ValueError("moment must be timezone-aware")
        local = moment.astimezone(self.zone(default))
        end = dt.datetime.combine(local.date(), self.end, tzinfo=local.tzinfo)
        if end <= local:
            end = dt.datetime.combine(local.date() + dt.timedelta(days=1), self.end, tzinfo=local.tzinfo)
        return end


@dataclass(frozen=True)
class WatchRules:
    """``policy.yaml``'s optional ``watch:`` block (defaults when absent).

    - ``offline_after_beats``: heartbeats in a row a room must read offline before it is
      posted offline (outside an event and its lead window; inside, at once).
    - ``group_min_rooms`` and ``group_min_percent``: an outage of at least this many rooms
      *and* this share of one group (an Epiphan group, or a building of ``buildings``) is
      one item with its rooms folded under it.
    - ``reminder_minutes``: minutes before a waiting proposal expires when a second notice
      goes out (0: none).
    - ``buildings``: ``{building name: (Epiphan group names...)}``; a group listed in a
      building is counted as that building.
    """

    offline_after_beats: int = 2
    group_min_rooms: int = 3
    group_min_percent: int = 50
    reminder_minutes: int = 10
    buildings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def group_of(self, group_name: str) -> str:
        """The building `group_name` belongs to, else the group itself."""
        for building, groups in self.buildings.items():
            if group_name in groups:
                return building
        return group_name


@dataclass(frozen=True)
class Thresholds:
    """When the heartbeat reports a device: CPU >= `cpu_pct` %, temperature >= `temp_c` °C,
    free disk <= `disk_free_pct` %, a reboot in the last `recent_reboot_minutes` minutes."""

    cpu_pct: int
    temp_c: int
    disk_free_pct: int
    recent_reboot_minutes: int


@dataclass(frozen=True)
class Limits:
    """Limits against approval fatigue (DESIGN.md section 7). Times in minutes or seconds as named.

    ``approval_ttl_seconds``: how long Approve works after a card was shown (the card's own
    window). ``proposal_ttl_seconds``: a proposal's own life from when it was made; one that
    nobody approved or denied by then expires. A card states whichever ends first.

    The denial pause: when ``denials_before_pause`` denials of one tool on one target fall
    within ``denial_window_minutes`` of each other, that tool may not be proposed for that
    target for ``denial_pause_minutes`` from the last of them (the one that made the count).

    ``min_read_seconds``: an Approve sooner than this after its card was shown is flagged in
    the approvers' report (``fleetwatch audit approvers``) as decided faster than the card can
    be read; it refuses nothing.
    """

    max_pending: int
    per_hour: int
    denials_before_pause: int
    denial_pause_minutes: int
    approval_ttl_seconds: int
    proposal_ttl_seconds: int
    denial_window_minutes: int = 1440
    min_read_seconds: int = 3


@dataclass(frozen=True)
class Policy:
    """``policy/policy.yaml``: `lead_minutes` is the window before an event in which a
    disruptive change is refused; `quiet_hours` when the watch posts no digest (readiness still
    posts); `sweep_at` the time of day of the watch's nightly sweep, in the quiet hours' time
    zone. (The heartbeat's interval is the setting ``FLEETWATCH_HEARTBEAT_SECONDS``.)
    `model_tools` is ``all`` (every tool the policy allows, each question) or ``per_question``
    (only the few a question's kind needs: fewer tools per turn for a small model; the same
    guard behind them). `override` is the override file applied, if any."""

    autonomy: Autonomy
    lead_minutes: int
    quiet_hours: QuietHours
    sweep_at: dt.time
    thresholds: Thresholds
    limits: Limits
    source: Path
    override: Path | None = None
    watch: WatchRules = field(default_factory=WatchRules)
    model_tools: str = "all"

    @property
    def may_propose(self) -> bool:
        return self.autonomy is Autonomy.PROPOSE


Condition = Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class ProposeRule:
    """One tool's entry in ``propose:``: what may be proposed and how it is judged.

    `arguments_schema` is the reviewed JSON Schema (read-only; do not mutate).
    `disruptive_when` / `stops_recording` map an argument to the values that make a call
    disruptive / make it stop the recording it targets (``{"action": {"stop"}}``).
    `lead_minutes` can only lengthen the policy's window (see `window_minutes`).
    `approvers`: how many distinct people (page sessions of distinct uids) must approve one
    change, 1 or 2; with 2, the executor claims both approvals together or refuses
    (``approvals_insufficient``).
    """

    tool: str
    schema_version: int
    max_targets: int
    target_fields: tuple[str, ...]
    target_kind: TargetKind
    disruptive: bool
    arguments_schema: Mapping[str, Any]
    summary: str
    undo: str
    disruptive_when: Condition | None = None
    stops_recording: Condition | None = None
    lead_minutes: int | None = None
    approvers: int = 1
    _validator: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_validator", ArgumentsValidator(self.arguments_schema))

    def targets(self, arguments: Mapping[str, object]) -> tuple[str, ...]:
        """The target IDs in `arguments`, in field order (channel IDs for a channel rule)."""
        found: list[str] = []
        for name in self.target_fields:
            value = arguments.get(name)
            items = value if isinstance(value, list) else [value]
            found.extend(item for item in items if isinstance(item, str))
        return tuple(found)

    def target_device_ids(self, arguments: Mapping[str, object]) -> tuple[str, ...]:
        """The master IDs the targets belong to, in order, without repeats (call after `validate`)."""
        out: list[str] = []
        for target in self.targets(arguments):
            master = ids.master_of_channel(target) if self.target_kind is TargetKind.CHANNEL else target
            if master not in out:
                out.append(master)
        return tuple(out)

    def problems(self, arguments: object) -> tuple[ArgumentProblem, ...]:
        """Every reason `arguments` fail the schema (empty when they fit), sorted by JSON path."""
        return argument_problems(self._validator, arguments)

    def validate(self, arguments: object) -> None:
        """Refuse arguments that name too many targets or do not fit the reviewed schema.

        Raises:
            ArgumentsError: code `too_many_targets` when the targets exceed `max_targets`
                (checked first), else `invalid_arguments` with every problem.
        """
        if isinstance(arguments, Mapping):
            count = len(self.targets(arguments))
            if count > self.max_targets:
                problem = ArgumentProblem("$", f"names {count} targets; at most {self.max_targets} allowed")
                raise ArgumentsError(Code.TOO_MANY_TARGETS, [problem])
        problems = self.problems(arguments)
        if problems:
            raise ArgumentsError(Code.INVALID_ARGUMENTS, problems)

    def is_disruptive(self, arguments: Mapping[str, object]) -> bool:
        """True when this call is disruptive. With `disruptive_when`, a missing or unknown
        value counts as disruptive (seed 003, "Disruptive tools")."""
        if not self.disruptive:
            return False
        if self.disruptive_when is None:
            return True
        for name, values in self.disruptive_when.items():
            value = arguments.get(name)
            known = self.arguments_schema["properties"][name]["enum"]
            if value not in known or value in values:
                return True
        return False

    def stops_recording_call(self, arguments: Mapping[str, object]) -> bool:
        """True only when every `stops_recording` argument holds one of its listed values."""
        if self.stops_recording is None:
            return False
        return all(
            isinstance(value := arguments.get(name), str) and value in values
            for name, values in self.stops_recording.items()
        )

    def window_minutes(self, policy_lead_minutes: int) -> int:
        """Minutes before an event in which this tool's disruptive calls are refused:
        the policy's lead minutes, or the rule's own when longer (firmware: 120)."""
        return max(policy_lead_minutes, self.lead_minutes or 0)


@dataclass(frozen=True, slots=True)
class ReviewedDefinition:
    """A tool's definition as Epiphan's server gave it when a person last reviewed it
    (``reviewed_definitions:`` in ``tool_policy.yaml``): its description (the server's text, at
    most 1000 characters) and the SHA-256 (64 hex digits) of its input schema in canonical JSON
    (`shared.policy.definitions.schema_fingerprint`)."""

    tool: str
    description: str
    input_schema_sha256: str


@dataclass(frozen=True)
class ToolPolicy:
    """``policy/tool_policy.yaml``. `not_for_model`: read tools whose results never reach the
    model (``get_channel_image``, a picture). A write tool absent from `propose` is unreviewed:
    not proposable, and counted as disruptive."""

    version: int
    read_tools: frozenset[str]
    write_tools: frozenset[str]
    disruptive_tools: frozenset[str]
    never_proposable: frozenset[str]
    not_for_model: frozenset[str]
    propose: Mapping[str, ProposeRule]
    source: Path
    override: Path | None = None
    definitions: Mapping[str, ReviewedDefinition] = field(default_factory=dict)
    """The reviewed server definitions (``reviewed_definitions:``), by tool (read or write
    tools; a write tool's is used while it is proposable). A proposable tool without one is
    compared by its arguments only; a read tool without one is never refused for a change
    (there is nothing to compare it with), only reported when the server no longer offers it."""

    @property
    def model_read_tools(self) -> frozenset[str]:
        """Read tools the assistant may offer the model."""
        return self.read_tools - self.not_for_model

    def rule_for(self, tool: str) -> ProposeRule:
        """The propose rule of `tool`.

        Raises:
            FleetwatchError: `schema_not_reviewed` for a write tool without a rule,
                `not_proposable` for any other tool (naming the closest proposable tool when
                one is alike: `shared.spelling.closest`).
        """
        rule = self.propose.get(tool)
        if rule is not None:
            return rule
        if tool in self.write_tools and tool not in self.never_proposable:
            raise FleetwatchError(Code.SCHEMA_NOT_REVIEWED, f"{show(tool)} has no reviewed argument schema")
        near = closest(tool, self.propose)
        guess = f"; did you mean {near}?" if near is not None else ""
        raise FleetwatchError(Code.NOT_PROPOSABLE, f"{show(tool)} may not be proposed{guess}")

    def is_disruptive(self, tool: str, arguments: Mapping[str, object]) -> bool:
        """True for a tool on the disruptive list, a tool without a rule, or a disruptive call."""
        rule = self.propose.get(tool)
        return tool in self.disruptive_tools or rule is None or rule.is_disruptive(arguments)
