"""Reading a policy file strictly, keeping the line of every key so refusals can name it.

A `Source` is one parsed YAML document made of plain values (dict, list, str, int, float,
bool, None) plus the 1-based line of every mapping key and list item, addressed by a
*document path* (a tuple of keys and indexes, ``("propose", "batch_reboot", "max_targets")``).
Its checking helpers raise `PolicyError` naming the file, the line and the dotted key; they
never repeat a value from the file beyond the offending key or entry (shortened).

Refused while reading: unreadable or non-UTF-8 files, files over `MAX_BYTES`, YAML syntax
errors, more than one document, duplicate keys, non-text keys, anchors and aliases, merge
keys, explicit tags, dates and binary scalars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from shared.errors import Code, FleetwatchError

MAX_BYTES: Final = 1_000_000
"""A policy file larger than this (bytes) is refused unread."""

Key = str | int
DocPath = tuple[Key, ...]

_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS: Final = frozenset(
    {_YAML + "str", _YAML + "int", _YAML + "float", _YAML + "bool", _YAML + "null"}
)
_NO_TAGS: Final = "tags (!!...), dates and binary values are not allowed in policy files; quote the text"


class PolicyError(FleetwatchError):
    """A policy file is invalid. Code `policy_invalid`.

    Attributes:
        path: the file (None when no file is involved).
        line: 1-based line of the offending key or entry (None when the file is unreadable).
        problem: the message without the file and line.
    """

    def __init__(self, problem: str, *, path: Path | None, line: int | None) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = "policy" if path is None else str(path)
        if line is not None:
            where += f", line {line}"
        super().__init__(Code.POLICY_INVALID, f"{where}: {problem}")


def show(value: object, limit: int = 60) -> str:
    """A short, quoted rendering of an offending entry for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def dotted(where: DocPath) -> str:
    """``("propose", "x", "target_fields", 0)`` -> ``"propose.x.target_fields[0]"``."""
    out = ""
    for key in where:
        name = key if isinstance(key, int) or len(key) <= 40 else key[:37] + "..."
        out += f"[{name}]" if isinstance(name, int) else (f".{name}" if out else name)
    return out or "(top level)"


class _Refusal(Exception):
    def __init__(self, line: int, problem: str) -> None:
        super().__init__(problem)
        self.line = line
        self.problem = problem


class _StrictLoader(yaml.SafeLoader):
    def compose_node(self, parent: Node | None, index: object) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            line = self.peek_event().start_mark.line + 1
            raise _Refusal(line, "anchors and aliases (*name) are not allowed in policy files")
        return super().compose_node(parent, index)


@dataclass(frozen=True)
class Source:
    """One parsed policy file: `data` and the line of each document path."""

    path: Path
    data: object
    lines: Mapping[DocPath, int]

    def line_of(self, where: DocPath) -> int:
        """The line of `where`, or of its nearest recorded ancestor (line 1 for the top)."""
        while where and where not in self.lines:
            where = where[:-1]
        return self.lines.get(where, 1)

    def error(self, where: DocPath, problem: str) -> PolicyError:
        """A `PolicyError` for `where`: ``"<file>, line N: <dotted key>: <problem>"``."""
        return PolicyError(f"{dotted(where)}: {problem}", path=self.path, line=self.line_of(where))

    def at(self, where: DocPath) -> object:
        """The value at `where` (the caller has checked the containers on the way)."""
        value = self.data
        for key in where:
            if isinstance(value, dict) and isinstance(key, str):
                value = value[key]
            elif isinstance(value, list) and isinstance(key, int):
                value = value[key]
            else:
                raise LookupError(dotted(where))
        return value

    def has(self, where: DocPath) -> bool:
        parent = self.at(where[:-1])
        return isinstance(parent, dict) and where[-1] in parent

    def mapping(
        self,
        where: DocPath,
        *,
        required: Sequence[str] = (),
        optional: Sequence[str] = (),
        any_key: bool = False,
    ) -> dict[str, object]:
        """The mapping at `where`; refuses another type, a missing required key, and (unless
        `any_key`) a key neither required nor optional."""
        value = self.at(where)
        if value is None and not where:
            raise self.error(where, "the file is empty")
        if not isinstance(value, dict):
            raise self.error(where, "must be a mapping (key: value lines)")
        known = (*required, *optional)
        for key in value:
            if key not in known and not any_key:
                raise self.error((*where, key), f"unknown key {show(key)} (known: {', '.join(known)})")
        for key in required:
            if key not in value:
                raise self.error(where, f"missing key {key!r}")
        return value

    def integer(self, where: DocPath, *, low: int, high: int | None = None) -> int:
        """A whole number in ``low..high`` (booleans and floats are refused)."""
        value = self.at(where)
        span = f"from {low} to {high}" if high is not None else f"at least {low}"
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(where, f"must be a whole number ({span})")
        if value < low or (high is not None and value > high):
            raise self.error(where, f"must be {span}")
        return value

    def text(self, where: DocPath, *, max_length: int = 200) -> str:
        """Non-empty text of at most `max_length` characters, no control characters."""
        value = self.at(where)
        if not isinstance(value, str) or not value.strip():
            raise self.error(where, "must be non-empty text")
        if len(value) > max_length:
            raise self.error(where, f"must be at most {max_length} characters")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise self.error(where, "must not hold control characters (tabs, new lines...)")
        return value

    def choice(self, where: DocPath, allowed: Sequence[str]) -> str:
        value = self.at(where)
        if not isinstance(value, str) or value not in allowed:
            raise self.error(where, f"must be one of: {', '.join(allowed)}")
        return value

    def names(self, where: DocPath) -> tuple[str, ...]:
        """A list of distinct, non-empty names (``[a-z0-9_]``), in file order."""
        value = self.at(where)
        if not isinstance(value, list):
            raise self.error(where, "must be a list")
        seen: list[str] = []
        for index, item in enumerate(value):
            if (
                not isinstance(item, str)
                or not item
                or not all(c.isascii() and (c.isalnum() or c == "_") for c in item)
            ):
                raise self.error((*where, index), "must be a name of letters, digits and _")
            if item in seen:
                raise self.error((*where, index), f"{show(item)} is listed twice")
            seen.append(item)
        return tuple(seen)


def read_source(path: Path) -> Source:
    """Read and parse one policy file strictly.

    Raises:
        PolicyError: unreadable, too large, not UTF-8, not valid YAML, or using a refused
            YAML feature (see the module docstring); the message names the file and line.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"cannot read the file ({exc.strerror})", path=path, line=None) from exc
    if len(raw) > MAX_BYTES:
        raise PolicyError(f"the file is larger than {MAX_BYTES} bytes", path=path, line=None)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PolicyError("the file is not UTF-8 text", path=path, line=line) from exc
    loader = _StrictLoader(text)
    lines: dict[DocPath, int] = {}
    try:
        node = loader.get_single_node()
        data = None if node is None else _build(loader, node, (), lines)
    except _Refusal as exc:
        raise PolicyError(exc.problem, path=path, line=exc.line) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = "; ".join(part for part in (exc.context, exc.problem) if part) or "not valid YAML"
        raise PolicyError(
            f"YAML syntax error: {problem}", path=path, line=None if mark is None else mark.line + 1
        ) from None
    except yaml.YAMLError as exc:
        raise PolicyError("YAML syntax error", path=path, line=None) from exc
    finally:
        loader.dispose()
    return Source(path=path, data=data, lines=MappingProxyType(lines))


def _build(loader: _StrictLoader, node: Node, where: DocPath, lines: dict[DocPath, int]) -> object:
    line = node.start_mark.line + 1
    if isinstance(node, MappingNode):
        if node.tag != _YAML + "map":
            raise _Refusal(line, _NO_TAGS)
        out: dict[str, object] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if key_node.tag == _YAML + "merge":
                raise _Refusal(key_line, "merge keys (<<) are not allowed in policy files")
            if not isinstance(key_node, ScalarNode) or key_node.tag != _YAML + "str":
                raise _Refusal(key_line, "every key must be plain text (quote keys such as yes, on, 1)")
            key = loader.construct_object(key_node)
            if key in out:
                raise _Refusal(key_line, f"{dotted((*where, key))}: duplicate key {show(key)}")
            lines[(*where, key)] = key_line
            out[key] = _build(loader, value_node, (*where, key), lines)
        return out
    if isinstance(node, SequenceNode):
        if node.tag != _YAML + "seq":
            raise _Refusal(line, _NO_TAGS)
        items: list[object] = []
        for index, item in enumerate(node.value):
            lines[(*where, index)] = item.start_mark.line + 1
            items.append(_build(loader, item, (*where, index), lines))
        return items
    if node.tag not in _SCALAR_TAGS:
        raise _Refusal(line, f"{dotted(where)}: {_NO_TAGS}")
    return loader.construct_object(node)
