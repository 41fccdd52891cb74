"""The optional override file (``FLEETWATCH_POLICY_OVERRIDE``): it may only narrow.

One YAML file, read on top of both policy files. What it may say, and the only direction
each may move (anything else is refused with a `PolicyError` naming the override's line)::

    autonomy: observe            # propose -> observe only
    lead_minutes: 60             # raise only
    model_tools: per_question    # all -> per_question only
    limits: {per_hour: 5}        # lower only; denial_pause_minutes, min_read_seconds: raise only
    read: [get_device_info, ...] # the new read list: a subset of the base one
    propose:
      batch_firmware_update: false             # remove the tool from propose
      batch_reboot: {max_targets: 1,           # lower only
                     lead_minutes: 180,        # raise only
                     disruptive: true,         # false -> true only (then every call is)
                     approvers: 2}             # raise only (1 -> 2: two distinct people)

Argument schemas, the write, disruptive and never_proposable lists, quiet hours, the sweep's
time and thresholds cannot be overridden: there is no safe way to say they only narrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Final

from shared.policy.model import Autonomy, Policy, ProposeRule, ToolPolicy
from shared.policy.parse import (
    LIMIT_RANGES,
    MODEL_TOOLS,
    OPTIONAL_LIMIT_RANGES,
    POLICY_KEYS,
    POLICY_OPTIONAL,
    RULE_KEYS,
    RULE_OPTIONAL,
    TOOL_POLICY_KEYS,
    TOOL_POLICY_OPTIONAL,
)
from shared.policy.source import Source, show

OVERRIDE_ENV: Final = "FLEETWATCH_POLICY_OVERRIDE"
"""The environment variable naming the override file (read by the config, not here)."""

OVERRIDE_KEYS: Final = ("autonomy", "lead_minutes", "model_tools", "limits", "read", "propose")
RULE_OVERRIDE_KEYS: Final = ("max_targets", "lead_minutes", "disruptive", "approvers")
RAISE_ONLY_LIMITS: Final = frozenset({"denial_pause_minutes", "denial_window_minutes", "min_read_seconds"})
_ONLY_NARROW: Final = "an override may only narrow"


def check_override(src: Source) -> Mapping[str, object]:
    """The override's top level, checked for known keys (empty for an empty file)."""
    if src.data is None:
        return {}
    fixed = set(POLICY_KEYS + POLICY_OPTIONAL + TOOL_POLICY_KEYS + TOOL_POLICY_OPTIONAL) - set(OVERRIDE_KEYS)
    if isinstance(src.data, dict):
        for key in src.data:
            if key in fixed:
                raise src.error(
                    (key,), f"cannot be set in an override ({_ONLY_NARROW}: {', '.join(OVERRIDE_KEYS)})"
                )
    return src.mapping((), optional=OVERRIDE_KEYS)


def narrow_policy(policy: Policy, src: Source) -> Policy:
    """`policy` narrowed by the override `src`. Raises `PolicyError` on any widening."""
    data = check_override(src)
    changes: dict[str, object] = {}
    if "autonomy" in data:
        autonomy = Autonomy(src.choice(("autonomy",), tuple(Autonomy)))
        if autonomy is Autonomy.PROPOSE and policy.autonomy is Autonomy.OBSERVE:
            raise src.error(("autonomy",), f"widens observe to propose; {_ONLY_NARROW}")
        changes["autonomy"] = autonomy
    if "lead_minutes" in data:
        changes["lead_minutes"] = _raise_only(src, ("lead_minutes",), policy.lead_minutes)
    if "model_tools" in data:
        chosen = src.choice(("model_tools",), MODEL_TOOLS)
        if MODEL_TOOLS.index(chosen) < MODEL_TOOLS.index(policy.model_tools):
            raise src.error(("model_tools",), f"widens {policy.model_tools} to {chosen}; {_ONLY_NARROW}")
        changes["model_tools"] = chosen
    if "limits" in data:
        ranges = {**LIMIT_RANGES, **OPTIONAL_LIMIT_RANGES}
        limits = src.mapping(("limits",), optional=tuple(ranges))
        new = {}
        for name in limits:
            base = getattr(policy.limits, name)
            if name in RAISE_ONLY_LIMITS:
                new[name] = _raise_only(src, ("limits", name), base, high=ranges[name][1])
            else:
                new[name] = _lower_only(src, ("limits", name), base, low=LIMIT_RANGES[name][0])
        changes["limits"] = replace(policy.limits, **new)
    return replace(policy, override=src.path, **changes)


def narrow_tool_policy(tool_policy: ToolPolicy, src: Source) -> ToolPolicy:
    """`tool_policy` narrowed by the override `src`. Raises `PolicyError` on any widening."""
    data = check_override(src)
    read = tool_policy.read_tools
    if "read" in data:
        names = src.names(("read",))
        for index, tool in enumerate(names):
            if tool not in tool_policy.read_tools:
                raise src.error(
                    ("read", index), f"adds {show(tool)}, not on the base read list; {_ONLY_NARROW}"
                )
        read = frozenset(names)
    propose = dict(tool_policy.propose)
    if "propose" in data:
        for tool, value in src.mapping(("propose",), any_key=True).items():
            rule = tool_policy.propose.get(tool)
            if rule is None:
                raise src.error(
                    ("propose", tool), f"adds {show(tool)}, not proposable in the base policy; {_ONLY_NARROW}"
                )
            if value is False:
                del propose[tool]
            elif isinstance(value, dict):
                propose[tool] = _narrow_rule(src, rule)
            else:
                raise src.error(
                    ("propose", tool), "must be false (remove the tool) or a mapping of narrowed values"
                )
    return replace(
        tool_policy,
        read_tools=read,
        not_for_model=tool_policy.not_for_model & read,
        propose=MappingProxyType(propose),
        override=src.path,
    )


def _narrow_rule(src: Source, rule: ProposeRule) -> ProposeRule:
    at = ("propose", rule.tool)
    for key in src.mapping(at, any_key=True):
        if key == "arguments":
            raise src.error(
                (*at, key),
                f"an override cannot change an argument schema (it could loosen it); {_ONLY_NARROW}",
            )
        if key in RULE_KEYS + RULE_OPTIONAL and key not in RULE_OVERRIDE_KEYS:
            raise src.error((*at, key), f"cannot be set in an override ({', '.join(RULE_OVERRIDE_KEYS)} can)")
    values = src.mapping(at, optional=RULE_OVERRIDE_KEYS)
    changes: dict[str, object] = {}
    if "max_targets" in values:
        changes["max_targets"] = _lower_only(src, (*at, "max_targets"), rule.max_targets, low=1)
    if "lead_minutes" in values:
        changes["lead_minutes"] = _raise_only(src, (*at, "lead_minutes"), rule.lead_minutes or 0)
    if "approvers" in values:
        changes["approvers"] = _raise_only(src, (*at, "approvers"), rule.approvers, high=2)
    if "disruptive" in values:
        if values["disruptive"] is not True:
            raise src.error((*at, "disruptive"), f"may only be set to true; {_ONLY_NARROW}")
        changes.update(disruptive=True, disruptive_when=None)
    return replace(rule, **changes)


def _raise_only(src: Source, where: tuple[str, ...], base: int, *, high: int = 1440) -> int:
    value = src.integer(where, low=0, high=max(base, high))
    if value < base:
        raise src.error(where, f"lowers {base} to {value}; {_ONLY_NARROW} (raise it)")
    return value


def _lower_only(src: Source, where: tuple[str, ...], base: int, *, low: int) -> int:
    value = src.integer(where, low=low)
    if value > base:
        raise src.error(where, f"raises {base} to {value}; {_ONLY_NARROW} (lower it)")
    return value
