"""The Messages-API stand-in, driven by the real Anthropic SDK (and raw HTTP for the wire form)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from datetime import UTC, datetime

import anthropic
import httpx2
import pytest

from services.lab import LabError
from services.lab.model_scripts import demo_model
from services.lab.model_scripts.demo_model import choose_room
from services.lab.model_scripts.demo_reads import as_device
from services.lab.model_standin import (
    PROFILES,
    ModelRequest,
    Reply,
    Text,
    ToolUse,
    call,
    json_in,
    run_model_standin,
    say,
)

TOOLS = [
    {
        "name": "get_devices_in_my_team",
        "description": "list",
        "input_schema": {"type": "object", "properties": {}},
    },
    {
        "name": "propose_change",
        "description": "propose",
        "input_schema": {"type": "object", "properties": {}},
        "cache_control": {"type": "ephemeral"},
    },
]
SYSTEM = [{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}]
QUESTION = [{"role": "user", "content": "What needs attention?"}]


@contextlib.asynccontextmanager
async def _client(handle, *, key=None, timeout=10.0):
    async with anthropic.AsyncAnthropic(
        api_key=key or handle.key, base_url=handle.base_url, max_retries=0, timeout=timeout
    ) as client:
        yield client


def _tool_reply(request: ModelRequest) -> Reply:
    return Reply(
        (
            Text("Looking."),
            ToolUse("propose_change", {"tool": "batch_recording", "arguments": {"a": [1, "x" * 80]}}),
        )
    )


async def test_a_json_answer_carries_text_tool_use_stop_reason_and_usage():
    async with run_model_standin(_tool_reply) as handle, _client(handle) as client:
        message = await client.messages.create(
            model="m", max_tokens=100, system=SYSTEM, tools=TOOLS, messages=QUESTION
        )
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"tool": "batch_recording", "arguments": {"a": [1, "x" * 80]}}
    assert message.stop_reason == "tool_use"
    assert message.usage.cache_creation_input_tokens > 0 and message.usage.output_tokens > 0
    assert len(handle.requests) == 1 and handle.requests[0].question() == "What needs attention?"


async def test_a_stream_has_the_real_event_sequence_and_the_sdk_rebuilds_the_tool_input():
    async with run_model_standin(_tool_reply) as handle, _client(handle) as client:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                f"{handle.base_url}/v1/messages",
                headers={"Authorization": f"Bearer {handle.key}", "anthropic-version": "2023-06-01"},
                json={"model": "m", "max_tokens": 10, "messages": QUESTION, "stream": True},
            )
        events = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
        async with client.messages.stream(
            model="m", max_tokens=100, tools=TOOLS, messages=QUESTION
        ) as stream:
            message = await stream.get_final_message()
    assert events[0] == "message_start" and events[-2:] == ["message_delta", "message_stop"]
    assert events.count("content_block_start") == 2 == events.count("content_block_stop")
    assert response.text.count('"input_json_delta"') > 2
    assert message.content[1].input == {"tool": "batch_recording", "arguments": {"a": [1, "x" * 80]}}
    assert message.content[1].to_dict()["type"] == "tool_use"


async def test_a_wrong_key_is_refused_with_401():
    async with run_model_standin("echo", key="right") as handle, _client(handle, key="wrong") as client:
        with pytest.raises(anthropic.AuthenticationError):
            await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
        assert handle.requests == []


async def test_the_sdk_sends_the_key_as_a_bearer_token():
    async with run_model_standin("echo", key="sk-test") as handle, _client(handle) as client:
        message = await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
    assert message.content[0].text == "You asked: What needs attention?"


@pytest.mark.parametrize(
    ("fault", "error"),
    [("http_500", anthropic.InternalServerError), ("overloaded", anthropic.APIStatusError)],
)
async def test_http_faults_reach_the_sdk_as_status_errors(fault, error):
    async with run_model_standin("echo") as handle, _client(handle) as client:
        handle.set_fault(fault)
        with pytest.raises(error) as raised:
            await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
        assert raised.value.status_code == (500 if fault == "http_500" else 529)
        answer = await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
    assert answer.content[0].text.startswith("You asked")


async def test_a_slow_answer_times_out_in_the_sdk():
    async with run_model_standin("echo") as handle, _client(handle, timeout=0.2) as client:
        handle.set_fault("slow", seconds=0.8)
        with pytest.raises(anthropic.APITimeoutError):
            await client.messages.create(model="m", max_tokens=10, messages=QUESTION)


async def test_an_error_event_inside_a_stream_raises_in_the_sdk():
    async with run_model_standin("echo") as handle, _client(handle) as client:
        handle.set_fault("stream_error")
        with pytest.raises(anthropic.APIStatusError):
            async with client.messages.stream(model="m", max_tokens=10, messages=QUESTION) as stream:
                await stream.get_final_message()


async def test_the_refuse_script_stops_with_a_refusal():
    async with run_model_standin("refuse") as handle, _client(handle) as client:
        message = await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
    assert message.stop_reason == "refusal"


async def test_the_same_cached_prefix_is_read_from_the_cache_and_a_changed_one_is_written_again():
    async with run_model_standin("echo") as handle, _client(handle) as client:
        first = await client.messages.create(
            model="m", max_tokens=10, system=SYSTEM, tools=TOOLS, messages=QUESTION
        )
        second = await client.messages.create(
            model="m", max_tokens=10, system=SYSTEM, tools=TOOLS, messages=QUESTION
        )
        changed = [{**SYSTEM[0], "text": "You are a test!"}]
        third = await client.messages.create(
            model="m", max_tokens=10, system=changed, tools=TOOLS, messages=QUESTION
        )
        plain = await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
    assert first.usage.cache_creation_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    assert third.usage.cache_creation_input_tokens > 0
    assert plain.usage.cache_creation_input_tokens == plain.usage.cache_read_input_tokens == 0


async def test_an_unknown_script_or_fault_is_refused():
    with pytest.raises(LabError):
        async with run_model_standin("no-such-script"):
            pass
    async with run_model_standin("echo") as handle:
        with pytest.raises(LabError):
            handle.set_fault("explode")


OFFERED = (
    "get_devices_in_my_team",
    "list_writable_devices",
    "propose_change",
    "get_current_or_next_cms_events_for_devices",
)


def _request(*messages: dict, offered: tuple[str, ...] = OFFERED) -> ModelRequest:
    body = {"messages": list(messages), "tools": [{"name": n} for n in offered]}
    return ModelRequest(seq=1, body=body, raw=json.dumps(body).encode())


def _result(tool_id: str, name: str, data: object) -> list[dict]:
    block = f'<fleet_data source="{name}">\n{json.dumps(data)}\n</fleet_data>'
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": block}]},
    ]


def _uses(reply: Reply) -> list[ToolUse]:
    return [b for b in reply.content if isinstance(b, ToolUse)]


def _text(reply: Reply) -> str:
    assert not _uses(reply)
    return "".join(b.text for b in reply.content if isinstance(b, Text))


NOW = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)
EVENTS_TOOL = "get_current_or_next_cms_events_for_devices"
FIRST = {
    "role": "user",
    "content": "Operator's question (language: es; now: 2026-09-16T13:00:00Z).\n\n¿Algo?",
}
DEVICES = {
    "devices": [
        {
            "Id": "19012340101",
            "Name": "Busy Hall",
            "Status": "online",
            "Channels": [{"channel_id": "1", "recording_status": {"state": "recording"}}],
        },
        {"Id": "19012340102", "Name": "Idle Hall", "Status": "online", "Channels": [{"channel_id": "1"}]},
        {"Id": "19012340103", "Name": "Down Hall", "Status": "offline", "Channels": []},
    ]
}


def _event(event_id: str, start: str) -> dict:
    return {"id": event_id, "title": "Class", "start": start, "finish": "2026-09-16T15:00:00Z"}


EVENTS = {
    "events": [
        {"device_id": "19012340101", "event": _event("e1", "2026-09-16T13:10:00Z")},
        {"device_id": "19012340102", "event": _event("e2", "2026-09-16T13:20:00Z")},
    ]
}


def _writable(device_id: str, *, online: bool = True, recording: object = False, start: str | None) -> dict:
    return {
        "device_id": device_id,
        "name": f"Room {device_id[-1]}",
        "model": "Pearl Mini",
        "online": online,
        "channels": [{"channel_id": "2", "name": "Lecture", "recording": recording}],
        "next_event": None
        if start is None
        else {"event_id": "e", "title": "t", "start": start, "finish": None},
    }


WRITABLE = {
    "devices": [
        _writable("29088800001", recording=True, start="2026-09-16T13:05:00.000Z"),
        _writable("29088800002", online=False, start="2026-09-16T13:06:00.000Z"),
        _writable("29088800003", recording=None, start="2026-09-16T13:07:00.000Z"),
        _writable("29088800004", start="2026-09-16T12:50:00.000Z"),
        _writable("29088800005", start="2026-09-16T13:40:00.000Z"),
        _writable("29088800006", start="2026-09-16T13:30:00.000Z"),
        _writable("29088800007", start="2026-09-16T14:30:00.000Z"),
        _writable("29088800008", start=None),
    ],
    "read_at": "2026-09-16T13:00:00.000Z",
    "note": "Only these devices can be changed.",
}


def _due(language: str) -> dict:
    question = {
        "en": "Start any recording that should be running.",
        "es": "Inicia cualquier grabación que deba estar en marcha.",
    }
    header = f"Operator's question (language: {language}; now: 2026-09-16T13:00:00Z)."
    return {"role": "user", "content": f"{header}\n\n{question[language]}"}


def test_a_due_recording_is_read_for_then_proposed_in_the_soonest_idle_practice_room():
    step1 = demo_model(_request(_due("es")))
    assert [u.name for u in _uses(step1)] == ["get_devices_in_my_team", "list_writable_devices"]
    so_far = [_due("es"), *_result("t1", "get_devices_in_my_team", DEVICES)]
    so_far += _result("t2", "list_writable_devices", WRITABLE)
    (events_call,) = _uses(demo_model(_request(*so_far, offered=(*OFFERED, EVENTS_TOOL))))
    assert events_call.input == {
        "device_ids": ["19012340101", "19012340102", "19012340103"],
        "until": "2026-09-17T13:00:00Z",
    }
    so_far += _result("t3", events_call.name, EVENTS)
    (propose,) = _uses(demo_model(_request(*so_far)))
    assert propose.input["tool"] == "batch_recording"
    assert propose.input["arguments"] == {"action": "start", "device_ids": ["29088800006-2"]}
    assert "30 min" in propose.input["reason"]
    done = _text(demo_model(_request(*so_far, *_result("t4", "propose_change", {"proposal_id": "p_1"}))))
    assert "Room 6" in done and "30 min" in done
    assert "Busy Hall" in done and "Idle Hall" in done and "Down Hall" not in done
    refused = demo_model(
        _request(*so_far, *_result("t4", "propose_change", {"error": {"code": "queue_full"}}))
    )
    assert "Room 6" in _text(refused)


def test_a_due_recording_proposes_nothing_when_no_practice_room_qualifies_or_proposals_are_off():
    so_far = [
        _due("en"),
        *_result("t1", "get_devices_in_my_team", DEVICES),
        *_result("t3", "get_current_or_next_cms_events_for_devices", EVENTS),
    ]
    none = {**WRITABLE, "devices": [d for d in WRITABLE["devices"] if d["device_id"][-1] not in "56"]}
    nothing = demo_model(_request(*so_far, *_result("t2", "list_writable_devices", none)))
    assert "Room 5" not in _text(nothing) and "Room 6" not in _text(nothing)
    failed = _result("t2", "list_writable_devices", {"error": {"code": "no_sign_in", "message": "x"}})
    assert "Room 6" not in _text(demo_model(_request(*so_far, *failed)))
    off = _text(demo_model(_request(*so_far, offered=("get_devices_in_my_team", EVENTS_TOOL))))
    assert "Idle Hall" in off and "Room 6" not in off


def test_choose_room_takes_the_soonest_online_idle_room_within_the_hour_only():
    rooms = [as_device(d) for d in WRITABLE["devices"]]
    chosen = choose_room(rooms, NOW)
    assert chosen is not None and chosen[0].id == "29088800006"
    assert choose_room([rooms[4]], NOW) == rooms[4]
    assert choose_room(rooms, datetime(2026, 9, 16, 14, 45, tzinfo=UTC)) is None
    assert choose_room([rooms[0], rooms[1], rooms[2], rooms[6], rooms[7]], NOW) is None


async def _raw(handle, path: str, *, headers: dict, body: dict | None = None) -> httpx2.Response:
    async with httpx2.AsyncClient() as http:
        return await http.post(f"{handle.base_url}{path}", headers=headers, json=body or {})


BODY = {"model": "m", "max_tokens": 10, "messages": QUESTION}
VERSION = {"anthropic-version": "2023-06-01"}


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_each_profile_checks_the_key_the_version_tool_choice_and_count_tokens_as_its_server_does(
    profile,
):
    served = PROFILES[profile]
    async with run_model_standin("echo", key="right", profile=profile) as handle:
        key = {"x-api-key": "right"}
        wrong = await _raw(handle, "/v1/messages", headers={"x-api-key": "wrong", **VERSION}, body=BODY)
        versionless = await _raw(handle, "/v1/messages", headers=key, body=BODY)
        choice = {**BODY, "tool_choice": {"type": "auto"}}
        chosen = await _raw(handle, "/v1/messages", headers={**key, **VERSION}, body=choice)
        counted = await _raw(handle, "/v1/messages/count_tokens", headers={**key, **VERSION}, body=BODY)
    assert wrong.status_code == (401 if served.checks_key else 200)
    assert versionless.status_code == (400 if served.checks_version else 200)
    assert chosen.status_code == (200 if served.tool_choice else 400)
    assert counted.status_code == (200 if served.count_tokens else 404)
    assert (profile == "anthropic") == all((served.checks_key, served.checks_version, served.count_tokens))


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_each_profile_serves_the_same_answer_in_its_own_wire_form(profile):
    served = PROFILES[profile]
    two = Reply((Text("Looking."), ToolUse("a", {"x": "y" * 60}), ToolUse("b", {})))
    async with run_model_standin(lambda request: two, profile=profile) as handle, _client(handle) as client:
        async with client.messages.stream(model="m", max_tokens=10, tools=TOOLS, messages=QUESTION) as stream:
            try:
                message = await stream.get_final_message()
            except ValueError:  # the SDK could not parse the dropped fragments
                message = None
    if served.tool_json == "dropped":
        assert message is None or message.content[-2].input != {"x": "y" * 60}
        return
    assert message is not None
    kinds = [b.type for b in message.content]
    assert message.stop_reason == (
        "end_turn" if served.end_turn or served.tool_json == "as_text" else "tool_use"
    )
    assert (kinds[0] == "text" and message.content[0].text == "") == served.empty_text
    uses = [b for b in message.content if b.type == "tool_use"]
    if served.tool_json == "as_text":
        assert uses == [] and '"arguments"' in "".join(b.text for b in message.content if b.type == "text")
    elif served.parallel == "merged":
        # the SDK's tolerant parser keeps the first object of the run-together JSON: the merge
        # does not show in the blocks, only in the streamed fragments (the assistant checks those)
        assert len(uses) == 1 and uses[0].name == "a"
    elif served.parallel == "same_id":
        assert len(uses) == 2 and uses[0].id == uses[1].id
    else:
        assert [(u.name, u.input) for u in uses] == [("a", {"x": "y" * 60}), ("b", {})]
        assert uses[0].id != uses[1].id


async def test_the_profile_is_chosen_and_told_on_the_lab_model_route():
    async with run_model_standin("echo") as handle, httpx2.AsyncClient() as http:
        told = (await http.get(f"{handle.base_url}/_lab/model")).json()
        chosen = await http.post(f"{handle.base_url}/_lab/model", json={"profile": "vllm"})
        unknown = await http.post(f"{handle.base_url}/_lab/model", json={"profile": "nope"})
    assert told == {"profile": "anthropic", "profiles": list(PROFILES)}
    assert chosen.json()["profile"] == "vllm" == handle.standin.profile.name
    assert unknown.status_code == 400 and handle.standin.profile.name == "vllm"


def test_json_in_finds_the_document_inside_a_block_and_say_and_call_build_replies():
    assert json_in('<fleet_data source="x">\n{"a": [1]}\n</fleet_data>') == {"a": [1]}
    assert json_in("no json here") is None
    assert say("hi").content == (Text("hi"),)
    assert call("t", {"a": 1}, text="x").content == (Text("x"), ToolUse("t", {"a": 1}))


async def test_the_command_line_serves_a_named_script_until_stopped():
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.lab.model_standin",
        "--script",
        "echo",
        "--port",
        "0",
        "--key",
        "k",
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        base_url = line.split(" at ")[1].split(" ")[0]
        async with anthropic.AsyncAnthropic(
            api_key="k", base_url=base_url, max_retries=0, timeout=10
        ) as client:
            message = await client.messages.create(model="m", max_tokens=10, messages=QUESTION)
        assert message.content[0].text == "You asked: What needs attention?"
    finally:
        proc.terminate()
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(proc.wait(), 10)


def _first(question: str, language: str = "en") -> dict:
    header = f"Operator's question (language: {language}; now: 2026-09-16T13:00:00Z; lead window: 30 min)."
    return {"role": "user", "content": f"{header}\n\n{question}"}


def test_the_demo_model_calls_only_tools_it_was_offered():
    offered = ("get_devices_in_my_team",)
    step1 = demo_model(_request(_first("What are our stream destinations?"), offered=offered))
    assert [u.name for u in _uses(step1)] == ["get_devices_in_my_team"]
    so_far = [
        _first("which rooms are recording right now?"),
        *_result("t1", "get_devices_in_my_team", DEVICES),
    ]
    answer = _text(demo_model(_request(*so_far, offered=offered)))
    assert "Busy Hall" in answer and "Idle Hall" not in answer
    change = _text(demo_model(_request(_first("Reboot Idle Hall"), *so_far[1:], offered=offered)))
    assert change.startswith("Proposals are off here")


def test_the_demo_model_says_when_the_data_block_left_rooms_out():
    cut = {"devices": [*DEVICES["devices"], {"…": "40 more items not shown"}]}
    so_far = [
        _first("¿Qué equipos están desconectados?", "es"),
        *_result("t1", "get_devices_in_my_team", cut),
    ]
    offered = (*OFFERED, "get_current_or_next_cms_events_for_devices")
    (events,) = _uses(demo_model(_request(*so_far, offered=offered)))
    assert events.input == {"device_ids": ["19012340103"], "until": "2026-09-17T13:00:00Z"}
    so_far += _result("t2", events.name, {"events": [{"device_id": "19012340103", "event": None}]})
    answer = _text(demo_model(_request(*so_far, offered=offered)))
    assert "Solo se me mostró una parte de la flota" in answer and "- Down Hall: desconectada" in answer
