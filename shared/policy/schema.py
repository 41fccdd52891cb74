"""Argument schemas of proposable tools: checked strictly at load, then used to judge arguments.

An argument schema in ``policy/tool_policy.yaml`` is JSON Schema (draft 2020-12, checked with
``Draft202012Validator.check_schema``) written in a small reviewed subset, so a reader can see
at a glance what a tool accepts:

- keywords: ``type properties required additionalProperties items minItems maxItems
  uniqueItems enum pattern minLength maxLength title description``; no ``$ref``, ``anyOf``...
- every schema names one ``type``: object, array, string or boolean;
- an object lists ``properties``, sets ``additionalProperties: false`` and requires every
  property (and nothing else);
- an array has ``items``, ``minItems`` >= 1 and a ``maxItems``;
- a string is bounded by an ``enum`` of texts or a ``pattern`` copied verbatim from
  `shared.ids.SCHEMA_PATTERNS`; ``device_id``, ``channel_id``, ``stream_id`` and ``event_id``
  must use their own pattern (master ID, channel number, stream ID, event ID);
- a field holding master or channel IDs must be one of the rule's ``target_fields``, so no
  device is touched without being resolved and checked against the sandbox.

Patterns are matched whole (``re.fullmatch``), not searched as JSON Schema says: our patterns
are all anchored, and Python's ``$`` would otherwise let a trailing newline through.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import SchemaError

from shared import ids
from shared.errors import Code, FleetwatchError
from shared.policy.source import DocPath, Source, show
from shared.spelling import closest

KEYWORDS: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "enum",
        "pattern",
        "minLength",
        "maxLength",
        "title",
        "description",
    }
)
TYPES: Final = ("object", "array", "string", "boolean")
FIELD_PATTERNS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "device_id": "MASTER_ID",
        "channel_id": "CHANNEL_NUMBER",
        "stream_id": "STREAM_ID",
        "event_id": "EVENT_ID",
    }
)
TARGET_PATTERNS: Final[Mapping[str, str]] = MappingProxyType({"master": "MASTER_ID", "channel": "CHANNEL_ID"})
_PATTERN_WORDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        ids.MASTER_ID: "a master ID (8 to 32 lower-case hex digits)",
        ids.CHANNEL_ID: "a channel ID (<master ID>-<1..999>)",
        ids.CHANNEL_NUMBER: "a channel number (1 to 999)",
        ids.STREAM_ID: "a stream endpoint ID (a UUID)",
        ids.EVENT_ID: "an event ID (letters, digits, _ and -, up to 128)",
    }
)
_PATTERN_NAMES: Final[Mapping[str, str]] = MappingProxyType({v: k for k, v in ids.SCHEMA_PATTERNS.items()})


# --- checking a schema at load --------------------------------------------------------------


def check_arguments_schema(src: Source, where: DocPath) -> dict[str, Any]:
    """The argument schema at `where`, checked as valid JSON Schema and inside the subset.

    Returns the schema (plain dicts and lists as read). Raises `PolicyError` naming the line.
    """
    schema = src.at(where)
    if not isinstance(schema, dict):
        raise src.error(where, "must be a mapping (a JSON Schema object)")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        at = (*where, *exc.path)
        if exc.validator == "format" and exc.path and exc.path[-1] == "pattern":
            raise src.error(at, "the pattern does not compile as a regular expression") from None
        raise src.error(
            at, f"not valid JSON Schema (the meta-schema's {exc.validator!r} rule fails)"
        ) from None
    if schema.get("type") != "object":
        raise src.error((*where, "type"), "the arguments must be described as type: object")
    _check_node(src, where, schema, name=None)
    return schema


def _check_node(src: Source, where: DocPath, node: object, *, name: str | None) -> None:
    if not isinstance(node, dict):
        raise src.error(where, "must be a mapping (true/false schemas are not in the reviewed subset)")
    for keyword in node:
        if keyword not in KEYWORDS:
            raise src.error((*where, keyword), f"keyword {show(keyword)} is outside the reviewed subset")
    kind = node.get("type")
    if kind not in TYPES:
        raise src.error(_key(where, node, "type"), f"must name one type: {', '.join(TYPES)}")
    if kind == "object":
        _check_object(src, where, node)
    elif kind == "array":
        _check_array(src, where, node, name=name)
    elif kind == "string":
        _check_string(src, where, node, name=name)


def _key(where: DocPath, node: Mapping[str, Any], key: str) -> DocPath:
    """The path of `key` when `node` has it (its line), else of `node` itself."""
    return (*where, key) if key in node else where


def _check_object(src: Source, where: DocPath, node: dict[str, Any]) -> None:
    properties = node.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise src.error(_key(where, node, "properties"), "an object must list its properties")
    if node.get("additionalProperties") is not False:
        raise src.error(
            _key(where, node, "additionalProperties"), "an object must set additionalProperties: false"
        )
    required = node.get("required", [])
    for index, field in enumerate(required):
        if field not in properties:
            raise src.error((*where, "required", index), f"{show(field)} is required but not a property")
    for field, sub in properties.items():
        if field not in required:
            raise src.error((*where, "properties", field), f"property {show(field)} is not in required")
        _check_node(src, (*where, "properties", field), sub, name=field)


def _check_array(src: Source, where: DocPath, node: dict[str, Any], *, name: str | None) -> None:
    if "items" not in node:
        raise src.error(where, "an array must describe its items")
    if node.get("minItems", 0) < 1:
        raise src.error(_key(where, node, "minItems"), "an array must set minItems to 1 or more")
    if "maxItems" not in node:
        raise src.error(where, "an array must set maxItems")
    if node["maxItems"] < node["minItems"]:
        raise src.error((*where, "maxItems"), "maxItems is below minItems")
    _check_node(src, (*where, "items"), node["items"], name=None if name is None else f"{name}[]")


def _check_string(src: Source, where: DocPath, node: dict[str, Any], *, name: str | None) -> None:
    if "pattern" not in node and "enum" not in node:
        raise src.error(where, "a text argument must be bounded by a pattern or an enum")
    for index, value in enumerate(node.get("enum", [])):
        if not isinstance(value, str) or not value:
            raise src.error((*where, "enum", index), "enum values must be non-empty text")
    if "pattern" in node:
        pattern = node["pattern"]
        if pattern not in _PATTERN_NAMES:
            known = ", ".join(f"shared.ids.{n}" for n in ids.SCHEMA_PATTERNS)
            raise src.error((*where, "pattern"), f"the pattern differs from every ID pattern ({known})")
        wanted = FIELD_PATTERNS.get(name or "")
        if wanted is not None and ids.SCHEMA_PATTERNS[wanted] != pattern:
            raise src.error((*where, "pattern"), f"{name} must use shared.ids.{wanted}")


def check_targets(
    src: Source, where: DocPath, schema: Mapping[str, Any], fields: Sequence[str], kind: str, max_targets: int
) -> None:
    """Check a rule's target fields against its (already checked) argument schema.

    Each target field is a top-level property holding IDs of `kind` (a string, or an array of
    strings, with the kind's pattern); every property holding master or channel IDs is a target
    field; the schema admits exactly `max_targets` targets. `where` is the rule's path.
    """
    properties: Mapping[str, Any] = schema["properties"]
    wanted = ids.SCHEMA_PATTERNS[TARGET_PATTERNS[kind]]
    capacity = 0
    for index, field in enumerate(fields):
        at = (*where, "target_fields", index)
        sub = properties.get(field)
        if sub is None:
            raise src.error(at, f"target field {show(field)} is not a property of the arguments")
        leaf = sub["items"] if sub["type"] == "array" else sub
        if leaf.get("type") != "string" or leaf.get("pattern") != wanted:
            raise src.error(
                at, f"target field {show(field)} must hold {kind} IDs (shared.ids.{TARGET_PATTERNS[kind]})"
            )
        capacity += sub["maxItems"] if sub["type"] == "array" else 1
    allowed = {("properties", f, "pattern") for f in fields} | {
        ("properties", f, "items", "pattern") for f in fields
    }
    for at in _device_id_patterns(schema, ()):
        if at not in allowed:
            raise src.error((*where, "arguments", *at), "holds device IDs but is not a target field")
    if capacity != max_targets:
        raise src.error(
            (*where, "max_targets"), f"is {max_targets} but the schema admits {capacity} target(s)"
        )


def _device_id_patterns(node: object, at: DocPath) -> Iterator[DocPath]:
    """The schema paths of every ``pattern`` that accepts master or channel IDs."""
    if isinstance(node, dict):
        for key, sub in node.items():
            if key == "pattern" and sub in (ids.MASTER_ID, ids.CHANNEL_ID):
                yield (*at, key)
            yield from _device_id_patterns(sub, (*at, key))


def check_conditions(src: Source, where: DocPath, schema: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """A ``{field: [value, ...]}`` condition (``disruptive_when``, ``stops_recording``).

    Each field is a top-level property with an ``enum``; each value is in that enum.
    """
    conditions = src.mapping(where, optional=tuple(schema["properties"]))
    if not conditions:
        raise src.error(where, "must name at least one argument")
    out: dict[str, frozenset[str]] = {}
    for field in conditions:
        enum = schema["properties"][field].get("enum")
        if enum is None:
            raise src.error((*where, field), f"argument {show(field)} has no enum to choose values from")
        values = src.at((*where, field))
        if not isinstance(values, list) or not values:
            raise src.error((*where, field), "must list at least one value")
        for index, value in enumerate(values):
            if not isinstance(value, str) or value not in enum:
                raise src.error(
                    (*where, field, index), f"{show(value)} is not one of the argument's enum values"
                )
        out[field] = frozenset(values)
    return out


# --- judging arguments ------------------------------------------------------------------------


@dataclass(frozen=True)
class ArgumentProblem:
    """One reason arguments were refused: a JSON path (``$.device_ids[0]``) and plain words."""

    path: str
    message: str


class ArgumentsError(FleetwatchError):
    """Arguments do not fit a tool's reviewed schema (`invalid_arguments`) or name more
    targets than the policy allows (`too_many_targets`). ``.problems`` lists each reason."""

    def __init__(self, code: Code, problems: Sequence[ArgumentProblem]) -> None:
        self.problems = tuple(problems)
        text = "; ".join(f"{p.path}: {p.message}" for p in self.problems[:5])
        super().__init__(code, text or None)


def _whole_pattern(
    validator: Any, pattern: str, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and re.fullmatch(pattern, instance) is None:
        yield ValidationError(f"must be {_PATTERN_WORDS.get(pattern, 'of the expected form')}")


ArgumentsValidator: Final = validators.extend(Draft202012Validator, {"pattern": _whole_pattern})
"""Draft 2020-12, except that ``pattern`` must match the whole text."""


def argument_problems(validator: Any, arguments: object) -> tuple[ArgumentProblem, ...]:
    """Every way `arguments` fails the schema of `validator`, as paths and plain words.

    The words never repeat a value the caller sent, only key names (shortened).
    """
    problems = {_problem(error) for error in validator.iter_errors(arguments)}
    return tuple(sorted(problems, key=lambda p: (p.path, p.message)))


_TYPE_WORDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "array": "a JSON list",
        "string": "text",
        "integer": "a whole number",
        "number": "a number",
        "boolean": "true or false",
        "object": "a JSON map",
        "null": "null",
    }
)


def _type_words(expected: object, schema: Mapping[str, Any]) -> str:
    """The shape a JSON Schema ``type`` asks for, in words; a list names what each item is."""
    words = (
        _TYPE_WORDS.get(expected, f"of type {expected}")
        if isinstance(expected, str)
        else f"of type {expected}"
    )
    items = schema.get("items") if expected == "array" else None
    item = _PATTERN_WORDS.get(items.get("pattern", "")) if isinstance(items, Mapping) else None
    return f"{words}, each item {item}" if item else words


def _problem(error: ValidationError) -> ArgumentProblem:
    path = "$" + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in error.absolute_path)
    keyword, expected, instance = error.validator, error.validator_value, error.instance
    if keyword == "required" and isinstance(instance, dict):
        missing = [name for name in expected if name not in instance]
        message = f"missing {', '.join(missing)}"
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {})
        unknown = [name for name in instance if name not in known]
        message = f"unexpected argument(s) {', '.join(show(name, 40) for name in unknown)}"
        guesses = [g for g in (closest(str(name), known) for name in unknown) if g and g not in instance]
        if guesses:
            message += f"; did you mean {', '.join(dict.fromkeys(guesses))}?"
    elif keyword == "type":
        message = f"must be {_type_words(expected, error.schema)}"
    elif keyword == "enum":
        message = f"must be one of: {', '.join(map(str, expected))}"
    elif keyword == "pattern":
        message = error.message
    elif keyword in ("minItems", "maxItems"):
        message = f"must hold {'at least' if keyword == 'minItems' else 'at most'} {expected} item(s)"
    elif keyword == "uniqueItems":
        message = "must not repeat an item"
    else:
        message = f"fails the {keyword!r} rule"
    return ArgumentProblem(path=path, message=message)
