"""Pinned tool definitions: Epiphan's tool list compared with the one a person reviewed.

The server's ``tools/list`` (`shared.epiphan.mcp_session.McpConnection.list_tools`: name,
description, input schema) is compared with `ToolPolicy`:

- a **proposable** tool (``propose:``) differs when the server does not offer it, when its
  arguments (names, required ones) differ from the reviewed ``arguments`` schema
  (`arguments_differ`, the one comparison ``fleetwatch capture`` uses too), or, when the policy
  records its reviewed definition (``reviewed_definitions:``), when its input schema's SHA-256
  or its description differs. Such a tool is neither proposed nor run (``tool_changed``);
- a **read** tool on the read list differs the same way when the policy records its reviewed
  definition: the guarded read client then refuses to call it. A read tool without a recorded
  definition cannot be compared: it is reported when the server no longer offers it, never
  refused for it;
- a tool the server offers that is on neither list is **new**: reported, never called.

Nothing the server says is trusted: its description is compared, never followed, and shown only
through `shared.text.display` by the commands that print it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy


NOT_OFFERED = "not offered by the server"
"""What differs for a reviewed tool the server's list does not hold."""


def schema_fingerprint(schema: Any) -> str:
    """SHA-256 (64 hex digits) of `schema` as canonical JSON (sorted keys, no spaces, UTF-8):
    what ``reviewed_definitions:`` records as ``input_schema_sha256``."""
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


_PLAIN = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def plain(name: object) -> str:
    """A name the server chose (a tool's, an argument's) as it is when it is plain (letters,
    digits, ``_.-``, at most 64), else ``<name XXXXXXXX>`` (its SHA-256's first 8 hex digits):
    what differs is said in messages, logs and audit rows without the server's own text."""
    text = str(name)
    return text if _PLAIN.fullmatch(text) else f"<name {hashlib.sha256(text.encode()).hexdigest()[:8]}>"


def _names(schema: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    properties = schema.get("properties")
    required = schema.get("required")
    return (
        {plain(p) for p in properties} if isinstance(properties, Mapping) else set(),
        {plain(r) for r in required} if isinstance(required, list) else set(),
    )


ARGUMENTS_DIFFER = (
    "differs: the server takes %(server)s (required %(server_required)s), "
    "the reviewed schema %(reviewed)s (required %(reviewed_required)s)"
)
"""What differs of a tool's arguments (English; the catalogue holds it in other languages),
filled with `argument_names`."""


def argument_names(served: Mapping[str, Any], reviewed: Mapping[str, Any]) -> dict[str, str] | None:
    """None when the server's input schema `served` names the same arguments, with the same
    required ones, as the `reviewed` schema; else the sorted names of each, as text, to fill
    `ARGUMENTS_DIFFER` (``server``, ``server_required``, ``reviewed``, ``reviewed_required``)."""
    server, ours = _names(served), _names(reviewed)
    if server == ours:
        return None
    return {
        "server": str(sorted(server[0])),
        "server_required": str(sorted(server[1])),
        "reviewed": str(sorted(ours[0])),
        "reviewed_required": str(sorted(ours[1])),
    }


def arguments_differ(served: Mapping[str, Any], reviewed: Mapping[str, Any]) -> str | None:
    """None when the arguments are the same (`argument_names`); else what differs, in one
    English line (`ARGUMENTS_DIFFER`)."""
    names = argument_names(served, reviewed)
    return None if names is None else ARGUMENTS_DIFFER % names


@dataclass(frozen=True, slots=True)
class ToolDifference:
    """One tool whose server definition is not the reviewed one.

    Attributes:
        tool: the tool's name.
        kind: ``proposable``, ``read`` or ``new`` (on neither list).
        what: what differs, one English line each (``not offered by the server``, the
            arguments, ``input schema``, ``description``); empty for a new tool.
        arguments: `argument_names` when the arguments differ (to say it in other words).
        blocking: True when the tool may not be proposed, run or called until reviewed.
        served: the server's definition (``{name, description, input_schema}``), None when not
            offered.
    """

    tool: str
    kind: str
    what: tuple[str, ...]
    blocking: bool
    served: Mapping[str, Any] | None
    arguments: Mapping[str, str] | None = None

    def describe(self) -> str:
        """``tool: what; what`` in one line (English, for messages and logs)."""
        return f"{self.tool}: {'; '.join(self.what) or 'new tool'}"


@dataclass(frozen=True, slots=True)
class ToolReport:
    """The server's tool list compared with the reviewed policy (`compare_tools`)."""

    differences: tuple[ToolDifference, ...]

    def blocked(self, tool: str) -> ToolDifference | None:
        """The difference that stops `tool` (proposing, running or calling it), or None."""
        return next((d for d in self.differences if d.tool == tool and d.blocking), None)

    @property
    def clean(self) -> bool:
        """True when every tool is as reviewed and the server offers no new one."""
        return not self.differences


def _served_what(served: Mapping[str, Any], reviewed: Any) -> list[str]:
    what: list[str] = []
    if reviewed is not None:
        if schema_fingerprint(served.get("input_schema")) != reviewed.input_schema_sha256:
            what.append("input schema")
        if served.get("description") != reviewed.description:
            what.append("description")
    return what


def compare_tools(listed: Sequence[Mapping[str, Any]], policy: ToolPolicy) -> ToolReport:
    """`listed` (``[{name, description, input_schema, ...}]``, the server's tool list) compared
    with `policy`: proposable tools first, then read tools, then new ones, each by name. Pure."""
    by_name = {str(t.get("name")): t for t in listed}
    out: list[ToolDifference] = []
    for tool, rule in sorted(policy.propose.items()):
        served = by_name.get(tool)
        if served is None:
            out.append(ToolDifference(tool, "proposable", (NOT_OFFERED,), True, None))
            continue
        schema = served.get("input_schema")
        names = argument_names(schema if isinstance(schema, Mapping) else {}, rule.arguments_schema)
        what = [] if names is None else [ARGUMENTS_DIFFER % names]
        what += _served_what(served, policy.definitions.get(tool))
        if what:
            out.append(ToolDifference(tool, "proposable", tuple(what), True, served, names))
    for tool in sorted(policy.read_tools):
        served = by_name.get(tool)
        reviewed = policy.definitions.get(tool)
        if served is None:
            out.append(ToolDifference(tool, "read", (NOT_OFFERED,), False, None))
        elif what := _served_what(served, reviewed):
            out.append(ToolDifference(tool, "read", tuple(what), True, served))
    known = set(policy.read_tools) | set(policy.write_tools)
    out += [ToolDifference(plain(n), "new", (), False, by_name[n]) for n in sorted(set(by_name) - known)]
    return ToolReport(tuple(out))
