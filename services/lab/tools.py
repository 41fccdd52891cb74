"""The registry of the 35 tools: name, description, input and output schemas, read or write,
disruptive or not (``EPIPHAN.md``), and the handler.

The low-level MCP server does not validate arguments; `ToolDef.argument_problem` does, with
the tool's JSON schema (``additionalProperties: false``), and names the first problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import jsonschema
import mcp_types as types

from services.lab.calls import Call
from services.lab.reads import READ_HANDLERS
from services.lab.schemas import INPUT_SCHEMAS, Schema, output_schema
from services.lab.writes import WRITE_HANDLERS

DISRUPTIVE: frozenset[str] = frozenset(
    {
        "batch_reboot",
        "batch_firmware_update",
        "apply_team_preset",
        "stop_stream_endpoint",
        "delete_cms_event",
        "delete_stream_endpoint",
        "switch_device_to_cms",
        "update_cms_event",
        "cms_event_action",
        "batch_recording",  # for action "stop" only
    }
)

_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "get_devices_in_my_team": "List every device in your team with status, channels and warnings.",
        "get_device_info": "Details of one device: model, firmware, status, channels, warnings.",
        "get_device_sources": "The video inputs of a device and whether each has a signal.",
        "get_system_status_for_devices": "CPU load, CPU temperature and uptime for devices.",
        "get_recorder_status_for_devices": "Recording state of every channel of the given devices.",
        "get_storage_status_for_devices": "Free and total storage (bytes) of the given devices.",
        "get_channel_settings": "Encoding settings of one channel.",
        "get_channel_image": "A preview picture of one channel.",
        "get_channel_audio_levels": "Current audio levels of one channel (dB).",
        "get_stream_endpoint": "One stream endpoint (destination) of your team.",
        "get_stream_endpoints": "All stream endpoints (destinations) of your team.",
        "get_team_presets": "Configuration presets of your team.",
        "get_cms_events_for_device": "CMS events scheduled on one device.",
        "get_cms_events_for_devices": "CMS events scheduled on the given devices.",
        "get_current_or_next_cms_event_for_device": "The event in progress or the next one on a device.",
        "get_current_or_next_cms_events_for_devices": "The event in progress or the next one (until a UTC time) per device.",
        "get_cms_names_for_devices": "Which CMS (Panopto, Kaltura...) each device uses.",
        "get_devices_by_cms": "The devices that use a given CMS.",
        "kb_search": "Search Epiphan's knowledge base.",
        "kb_fetch": "Fetch one knowledge base article.",
        "batch_recording": "Start or stop recording on channels (channel IDs <master>-<n>).",
        "start_stream_endpoint": "Start streaming a channel to a stream endpoint.",
        "stop_stream_endpoint": "Stop streaming a channel to a stream endpoint.",
        "create_cms_event": "Schedule an Epiphan CMS event on a device.",
        "update_cms_event": "Change a CMS event's title or times.",
        "delete_cms_event": "Delete a CMS event.",
        "cms_event_action": "Start, stop, pause, resume or extend a CMS event.",
        "confirm_cms_event_on_device": "Confirm a CMS event on its device.",
        "create_stream_endpoint": "Create a stream endpoint (destination URL and stream key).",
        "update_stream_endpoint": "Change a stream endpoint.",
        "delete_stream_endpoint": "Delete a stream endpoint; streams to it stop.",
        "apply_team_preset": "Apply a team preset to devices (they restart their channels).",
        "switch_device_to_cms": "Switch a device to another CMS.",
        "batch_reboot": "Reboot devices (offline for about 90 seconds).",
        "batch_firmware_update": "Update devices to the latest firmware (about five minutes, with a reboot).",
    }
)


@dataclass(frozen=True)
class ToolDef:
    """One tool. ``handler`` returns the result object (read) or the write result map."""

    name: str
    description: str
    write: bool
    disruptive: bool
    input_schema: Schema
    handler: Callable[[Call], Any]
    validator: jsonschema.protocols.Validator

    def argument_problem(self, arguments: Mapping[str, Any]) -> str | None:
        """None if ``arguments`` fit the input schema, else one line naming the problem."""
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(arguments))
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        where = where.lstrip(".") or "arguments"
        return f"{where}: {error.message}"

    def listing(self, *, older_shapes: bool, redefined: Redefinitions | None = None) -> types.Tool:
        """The tool as ``tools/list`` shows it, with its definition as `redefined` changed it
        (``/_lab/tools``)."""
        changed = redefined.of(self.name) if redefined is not None else {}
        return types.Tool(
            name=self.name,
            description=changed.get("description", self.description),
            input_schema=changed.get("input_schema", self.input_schema),
            output_schema=output_schema(self.name, write=self.write, older=older_shapes),
            annotations=types.ToolAnnotations(
                read_only_hint=not self.write,
                destructive_hint=self.disruptive if self.write else None,
            ),
        )


class Redefinitions:
    """Tool definitions changed at run time (``POST /_lab/tools``), as a server that changes its
    tool list under a running client: only ``tools/list`` shows them; a call is still checked
    against the tool's own schema. `clear` restores every tool (``DELETE``, a reset)."""

    def __init__(self) -> None:
        self._changed: dict[str, dict[str, Any]] = {}

    def of(self, tool: str) -> Mapping[str, Any]:
        """What was changed of `tool` (``description``, ``input_schema``), empty when nothing."""
        return self._changed.get(tool, {})

    def change(self, data: Mapping[str, Any]) -> None:
        """Change one tool: ``{"tool": NAME, "input_schema"?: {...}, "description"?: "..."}``.

        Raises:
            ValueError: an unknown tool, nothing to change, a schema that is not a JSON
                Schema object, a description that is not text.
        """
        tool = data.get("tool")
        if not isinstance(tool, str) or tool not in _DESCRIPTIONS:
            raise ValueError(f"'tool' must name one of the lab's tools, not {tool!r}")
        unknown = set(data) - {"tool", "input_schema", "description"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} (known: tool, input_schema, description)")
        changed: dict[str, Any] = {}
        if "input_schema" in data:
            schema = data["input_schema"]
            if not isinstance(schema, dict):
                raise ValueError("'input_schema' must be a JSON object")
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.exceptions.SchemaError as exc:
                raise ValueError(f"'input_schema' is not a JSON Schema: {exc.message}") from exc
            changed["input_schema"] = schema
        if "description" in data:
            if not isinstance(data["description"], str):
                raise ValueError("'description' must be text")
            changed["description"] = data["description"]
        if not changed:
            raise ValueError("send 'input_schema', 'description' or both")
        self._changed[tool] = {**self._changed.get(tool, {}), **changed}

    def listing(self) -> dict[str, dict[str, Any]]:
        """Every changed tool and what was changed of it."""
        return {tool: dict(changed) for tool, changed in sorted(self._changed.items())}

    def clear(self) -> None:
        self._changed.clear()


def _build() -> Mapping[str, ToolDef]:
    handlers: dict[str, Callable[[Call], Any]] = {**READ_HANDLERS, **WRITE_HANDLERS}
    if set(handlers) != set(INPUT_SCHEMAS) or set(handlers) != set(_DESCRIPTIONS):
        raise RuntimeError("lab tool tables disagree")  # a programming error, caught by any test
    tools = {}
    for name, schema in INPUT_SCHEMAS.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        tools[name] = ToolDef(
            name=name,
            description=_DESCRIPTIONS[name],
            write=name in WRITE_HANDLERS,
            disruptive=name in DISRUPTIVE,
            input_schema=schema,
            handler=handlers[name],
            validator=jsonschema.Draft202012Validator(schema),
        )
    return MappingProxyType(tools)


TOOLS: Mapping[str, ToolDef] = _build()
TOOL_NAMES: frozenset[str] = frozenset(TOOLS)
WRITE_TOOLS: frozenset[str] = frozenset(n for n, t in TOOLS.items() if t.write)
READ_TOOLS: frozenset[str] = TOOL_NAMES - WRITE_TOOLS
