"""Fleetwatch's policy: ``policy/policy.yaml`` and ``policy/tool_policy.yaml``, loaded strictly.

The public face of the policy modules; import from here.

- `load_policy` -> `Policy`: autonomy (observe | propose), lead minutes, quiet hours, the
  heartbeat interval, heartbeat thresholds, limits against approval fatigue.
- `load_tool_policy` -> `ToolPolicy`: the read, write, disruptive, never_proposable and
  not_for_model lists, and ``propose:``, one `ProposeRule` per reviewed tool, each with its
  argument schema (JSON Schema, judged with jsonschema), target fields, disruptive rules,
  lead minutes, and the card's summary and undo text.
- An optional override file may only narrow either one (`shared.policy.override`).

Loading is strict: an unknown or duplicate key, a write tool on the read list, a schema that
is loose or whose ID patterns differ from `shared.ids`... raise `PolicyError` (code
`policy_invalid`) with ``.path`` and ``.line`` and a message naming both. Messages never
repeat file contents beyond the offending key or entry.

Layers: `shared.policy.source` (YAML with lines) <- `shared.policy.schema` (argument schemas)
<- `shared.policy.model` (frozen data) <- `shared.policy.parse` <- `shared.policy.override`
<- this module.
Pure apart from reading the named files; no clock, no environment (the caller resolves
``FLEETWATCH_POLICY_OVERRIDE``, see `OVERRIDE_ENV`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from shared.policy.model import (
    Autonomy,
    Limits,
    Policy,
    ProposeRule,
    QuietHours,
    TargetKind,
    Thresholds,
    ToolPolicy,
    WatchRules,
)
from shared.policy.override import OVERRIDE_ENV, narrow_policy, narrow_tool_policy
from shared.policy.parse import (
    LIMIT_RANGES,
    READ_PREFIXES,
    THRESHOLD_RANGES,
    TOOL_POLICY_VERSION,
    parse_policy,
    parse_tool_policy,
)
from shared.policy.schema import ArgumentProblem, ArgumentsError
from shared.policy.source import PolicyError, read_source

__all__ = [
    "LIMIT_RANGES",
    "OVERRIDE_ENV",
    "POLICY_FILE",
    "READ_PREFIXES",
    "THRESHOLD_RANGES",
    "TOOL_POLICY_FILE",
    "TOOL_POLICY_VERSION",
    "ArgumentProblem",
    "ArgumentsError",
    "Autonomy",
    "Limits",
    "Policy",
    "PolicyError",
    "ProposeRule",
    "QuietHours",
    "WatchRules",
    "TargetKind",
    "Thresholds",
    "ToolPolicy",
    "load_policies",
    "load_policy",
    "load_tool_policy",
]

POLICY_FILE: Final = "policy.yaml"
TOOL_POLICY_FILE: Final = "tool_policy.yaml"


def load_policy(path: Path, override: Path | None = None) -> Policy:
    """Load ``policy.yaml`` at `path`, narrowed by the `override` file if given.

    Raises:
        PolicyError: either file is unreadable or invalid, or the override widens anything.
    """
    policy = parse_policy(read_source(path))
    return policy if override is None else narrow_policy(policy, read_source(override))


def load_tool_policy(path: Path, override: Path | None = None) -> ToolPolicy:
    """Load ``tool_policy.yaml`` at `path`, narrowed by the `override` file if given.

    Raises:
        PolicyError: either file is unreadable or invalid, or the override widens anything.
    """
    tool_policy = parse_tool_policy(read_source(path))
    return tool_policy if override is None else narrow_tool_policy(tool_policy, read_source(override))


def load_policies(policy_dir: Path, override: Path | None = None) -> tuple[Policy, ToolPolicy]:
    """Load ``policy.yaml`` and ``tool_policy.yaml`` from `policy_dir`, both narrowed by the
    one `override` file if given (it is read once).

    Raises:
        PolicyError: as `load_policy` and `load_tool_policy`.
    """
    policy = parse_policy(read_source(policy_dir / POLICY_FILE))
    tool_policy = parse_tool_policy(read_source(policy_dir / TOOL_POLICY_FILE))
    if override is None:
        return policy, tool_policy
    source = read_source(override)
    return narrow_policy(policy, source), narrow_tool_policy(tool_policy, source)
