"""JSON schemas of the 35 tools: the input schemas the lab enforces (``additionalProperties:
false`` everywhere) and the output schemas it declares.

ID patterns (``EPIPHAN.md``): a master ID is ``^[0-9a-f]{8,32}$``; a channel ID for
``batch_recording`` is ``<master>-N``; the two never accept each other. Inside a device a
channel is ``"1"``..``"999"``. Stream endpoint and preset IDs are UUIDs. Event IDs accept the
colon the live-shaped example carries (``abc123:1791484740``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

Schema = dict[str, Any]

MASTER_ID: Schema = {"type": "string", "pattern": "^[0-9a-f]{8,32}$", "description": "Master (device) ID"}
CHANNEL_ID: Schema = {
    "type": "string",
    "pattern": "^[0-9a-f]{8,32}-[1-9][0-9]{0,2}$",
    "description": "Channel ID: <master ID>-<channel number>",
}
CHANNEL_NUMBER: Schema = {"type": "string", "pattern": "^[1-9][0-9]{0,2}$", "description": "Channel number"}
UUID: Schema = {
    "type": "string",
    "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
}
EVENT_ID: Schema = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_:-]{0,127}$"}
UTC_TIME: Schema = {
    "type": "string",
    "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
    "description": "UTC time, YYYY-MM-DDTHH:MM:SSZ",
}
TEXT: Schema = {"type": "string", "minLength": 1, "maxLength": 200}
CMS_NAME: Schema = {
    "type": "string",
    "enum": ["epiphan", "panopto", "kaltura", "yuja", "opencast", "brightspace"],
}
PUBLISHER_TYPE: Schema = {"type": "string", "enum": ["rtmp", "srt", "rtsp", "rtp-udp", "ndi", "mpegts-udp"]}


def _obj(
    required: Mapping[str, Schema], optional: Mapping[str, Schema] | None = None, **extra: Any
) -> Schema:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
        **extra,
    }


def _list(item: Schema, max_items: int = 100) -> Schema:
    return {"type": "array", "items": item, "minItems": 1, "maxItems": max_items, "uniqueItems": True}


_NONE = _obj({})
_DEVICE = _obj({"device_id": MASTER_ID})
_DEVICES = _obj({"device_ids": _list(MASTER_ID)})
_CHANNEL = _obj({"device_id": MASTER_ID, "channel_id": CHANNEL_NUMBER})
_STREAM = _obj({"stream_id": UUID, "device_id": MASTER_ID, "channel_id": CHANNEL_NUMBER})
_EVENT = _obj({"event_id": EVENT_ID})
_EVENT_CHANNEL = _obj(
    {"channel_id": CHANNEL_NUMBER}, {"recording": {"type": "boolean"}, "streaming": {"type": "boolean"}}
)

INPUT_SCHEMAS: Mapping[str, Schema] = MappingProxyType(
    {
        # --- read --------------------------------------------------------------------------
        "get_devices_in_my_team": _NONE,
        "get_device_info": _DEVICE,
        "get_device_sources": _DEVICE,
        "get_system_status_for_devices": _DEVICES,
        "get_recorder_status_for_devices": _DEVICES,
        "get_storage_status_for_devices": _DEVICES,
        "get_channel_settings": _CHANNEL,
        "get_channel_image": _CHANNEL,
        "get_channel_audio_levels": _CHANNEL,
        "get_stream_endpoint": _obj({"endpoint_id": UUID}),
        "get_stream_endpoints": _NONE,
        "get_team_presets": _NONE,
        "get_cms_events_for_device": _DEVICE,
        "get_cms_events_for_devices": _DEVICES,
        "get_current_or_next_cms_event_for_device": _DEVICE,
        "get_current_or_next_cms_events_for_devices": _obj(
            {"until": UTC_TIME}, {"device_ids": _list(MASTER_ID)}
        ),
        "get_cms_names_for_devices": _DEVICES,
        "get_devices_by_cms": _obj({"cms": {"type": "string", "minLength": 1, "maxLength": 40}}),
        "kb_search": _obj({"query": {"type": "string", "minLength": 1, "maxLength": 500}}),
        "kb_fetch": _obj({"id": {"type": "string", "pattern": "^[a-z0-9-]{1,64}$"}}),
        # --- write -------------------------------------------------------------------------
        "batch_recording": _obj(
            {"action": {"type": "string", "enum": ["start", "stop"]}, "device_ids": _list(CHANNEL_ID)}
        ),
        "start_stream_endpoint": _STREAM,
        "stop_stream_endpoint": _STREAM,
        "create_cms_event": _obj(
            {"device_id": MASTER_ID, "title": TEXT, "start": UTC_TIME, "finish": UTC_TIME},
            {"channels": _list(_EVENT_CHANNEL, 10)},
        ),
        "update_cms_event": _obj(
            {"event_id": EVENT_ID},
            {"title": TEXT, "start": UTC_TIME, "finish": UTC_TIME},
            minProperties=2,
        ),
        "delete_cms_event": _EVENT,
        "cms_event_action": _obj(
            {
                "event_id": EVENT_ID,
                "action": {"type": "string", "enum": ["start", "stop", "pause", "resume", "extend"]},
            },
            {"minutes": {"type": "integer", "minimum": 1, "maximum": 240}},
        ),
        "confirm_cms_event_on_device": _obj({"device_id": MASTER_ID, "event_id": EVENT_ID}),
        "create_stream_endpoint": _obj(
            {
                "name": TEXT,
                "type": PUBLISHER_TYPE,
                "url": {"type": "string", "minLength": 1, "maxLength": 2000},
            },
            {"key": {"type": "string", "maxLength": 500}},
        ),
        "update_stream_endpoint": _obj(
            {"endpoint_id": UUID},
            {
                "name": TEXT,
                "url": {"type": "string", "minLength": 1, "maxLength": 2000},
                "key": {"type": "string"},
            },
            minProperties=2,
        ),
        "delete_stream_endpoint": _obj({"endpoint_id": UUID}),
        "apply_team_preset": _obj({"preset_id": UUID, "device_ids": _list(MASTER_ID)}),
        "switch_device_to_cms": _obj({"device_id": MASTER_ID, "cms": CMS_NAME}),
        "batch_reboot": _DEVICES,
        "batch_firmware_update": _DEVICES,
    }
)

# --- output schemas (declared; results may break them, see shapes.drift) ---------------------

_STR: Schema = {"type": "string"}
_STR_OR_NULL: Schema = {"type": ["string", "null"]}
_NUM_OR_NULL: Schema = {"type": ["number", "null"]}
_ARRAY: Schema = {"type": "array"}
_WARNING: Schema = {
    "type": "object",
    "required": ["id", "label", "message", "data"],
    "properties": {"id": _STR, "label": _STR, "message": _STR},
    "if": {"properties": {"id": {"const": "no_storage_detected"}}},
    "then": {"properties": {"data": {"type": "null"}}},
    "else": {"properties": {"data": {"type": "object"}}},
}
_DEVICE_OUT: Schema = {
    "type": "object",
    "required": ["Id", "Name", "Model", "Firmware", "Status", "StateTime", "Channels", "Warnings"],
    "properties": {
        **dict.fromkeys(("Id", "Name", "Model", "GroupId", "GroupName", "Firmware", "StateTime"), _STR),
        **dict.fromkeys(("IPAddress", "SerialNumber"), _STR),
        "Status": {"type": "string", "enum": ["online", "offline"]},
        "Channels": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["channel_id", "name", "recording_status"],
                "properties": {
                    "channel_id": _STR,
                    "name": _STR,
                    "recording_status": {
                        "type": "object",
                        "required": ["state"],
                        "properties": {"state": {"enum": ["stopped", "recording"]}},
                    },
                    "Publishers": {"type": "array", "items": {"type": "object"}},
                    "Warnings": {"type": "array", "items": _WARNING},
                },
            },
        },
        "Warnings": {"type": "array", "items": _WARNING},
    },
}
_EVENT_OUT: Schema = {
    "type": "object",
    "required": ["id", "title", "cms", "status", "start", "finish", "devices"],
    "properties": {
        "id": _STR,
        "title": _STR,
        "cms": _STR,
        "status": _STR,
        "confirmed": {"type": "boolean"},
        "start": {"type": ["string", "integer"]},
        "finish": {"type": ["string", "integer"]},
        "devices": {"type": "array", "items": {"type": "object", "required": ["device_id", "channels"]}},
    },
}
_EVENT_OR_NULL: Schema = {"anyOf": [{"type": "null"}, _EVENT_OUT]}
_ENDPOINT_OUT: Schema = {
    "type": "object",
    "required": ["id", "name", "type", "url"],
    "properties": {
        "id": _STR,
        "name": _STR,
        "type": _STR,
        "url": _STR,
        "key": _STR_OR_NULL,
        "LockByDevice": _STR_OR_NULL,
        "CurrentlyStreaming": {"type": "boolean"},
    },
}


def _out(**properties: Schema) -> Schema:
    return {"type": "object", "required": list(properties), "properties": properties}


WRITE_RESULT: Schema = {
    "type": "object",
    "additionalProperties": {"type": "string"},
    "description": "Map of target ID to error; {} when every target worked.",
}

_OUTPUT: Mapping[str, Schema] = MappingProxyType(
    {
        "get_devices_in_my_team": {
            **_out(devices={"type": "array", "items": _DEVICE_OUT}),
            "properties": {"devices": {"type": "array", "items": _DEVICE_OUT}, "team_id": _STR},
        },
        "get_device_info": _DEVICE_OUT,
        "get_device_sources": _out(device_id=_STR, sources=_ARRAY),
        "get_system_status_for_devices": _out(
            status={
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["device_id", "cpu_load_pct", "cpu_temp_c", "uptime_since"],
                    "properties": {
                        "device_id": _STR,
                        "cpu_load_pct": _NUM_OR_NULL,
                        "cpu_temp_c": _NUM_OR_NULL,
                        "uptime_since": _STR_OR_NULL,
                    },
                },
            }
        ),
        "get_recorder_status_for_devices": _out(
            devices={
                "type": "object",
                "additionalProperties": {
                    **_out(Name=_STR, Channels={"type": "object"}),
                    "properties": {
                        "Name": _STR,
                        "Channels": {
                            "type": "object",
                            "additionalProperties": _out(Name=_STR, RecordingStatus={"type": "object"}),
                        },
                    },
                },
            }
        ),
        "get_storage_status_for_devices": _out(storage=_ARRAY),
        "get_channel_settings": _out(device_id=_STR, channel_id=_STR, name=_STR, encoding={"type": "object"}),
        "get_channel_audio_levels": _out(
            device_id=_STR, channel_id=_STR, levels=_ARRAY, silent={"type": "boolean"}
        ),
        "get_stream_endpoint": _ENDPOINT_OUT,
        "get_stream_endpoints": _out(stream_endpoints={"type": "array", "items": _ENDPOINT_OUT}),
        "get_team_presets": _out(presets=_ARRAY),
        "get_cms_events_for_device": _out(device_id=_STR, events={"type": "array", "items": _EVENT_OUT}),
        "get_cms_events_for_devices": _out(events=_ARRAY),
        "get_current_or_next_cms_event_for_device": _out(device_id=_STR, event=_EVENT_OR_NULL),
        "get_current_or_next_cms_events_for_devices": _out(
            events={"type": "array", "items": _out(device_id=_STR, event=_EVENT_OR_NULL)}
        ),
        "get_cms_names_for_devices": _out(devices=_ARRAY),
        "get_devices_by_cms": _out(cms=_STR, devices=_ARRAY),
        "kb_search": {
            **_out(results=_ARRAY),
            "properties": {"results": _ARRAY, "low_confidence": {"type": "boolean"}},
        },
        "kb_fetch": _out(id=_STR, title=_STR, content=_STR, url=_STR),
    }
)

_OLDER_OUTPUT: Mapping[str, Schema] = MappingProxyType(
    {
        "get_system_status_for_devices": _out(
            status={"type": "object", "additionalProperties": {"type": "object"}}
        ),
        "get_recorder_status_for_devices": _out(
            devices={"type": "array", "items": _out(device_id=_STR, channels={"type": "object"})}
        ),
        "get_stream_endpoints": _out(endpoints={"type": "array", "items": _ENDPOINT_OUT}),
    }
)


def output_schema(tool: str, *, write: bool, older: bool) -> Schema | None:
    """The output schema the lab declares for ``tool`` (None for the picture tool)."""
    if write:
        return WRITE_RESULT
    if older and tool in _OLDER_OUTPUT:
        return _OLDER_OUTPUT[tool]
    return _OUTPUT.get(tool)
