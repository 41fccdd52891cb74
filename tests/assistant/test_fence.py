"""propose_change refusals end to end: the real SDK and stand-in, the assistant in this process,
approval_web and the executor as real processes over the real sockets, the lab. Schema
refusals stop in the assistant (nothing reaches approval.sock); fence and queue refusals come
back from the intake and the executor's fresh sandbox read. Nothing is ever written."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from services.assistant.manifest import TOOL_OPERATIONS, TOOL_PREFIX, capabilities
from services.lab.model_standin import Reply, StandinHandle, ToolUse, run_model_standin, say
from shared.config import REPO_POLICY_DIR
from shared.epiphan.slots import SignIn, write_slot
from shared.policy.loader import load_policies
from shared.store.db import open_store, verify_audit
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
from shared.wire.protocol import Capabilities, ErrorReply, GetCapabilities
from tests.assistant.backend import Backend, backend
from tests.assistant.helpers import error_codes, result_payloads, sequence
from tests.procs import running_service

pytestmark = pytest.mark.asyncio(loop_scope="module")

POLICY, TOOL_POLICY = load_policies(REPO_POLICY_DIR)
DEVICES = "get_devices_in_my_team"
SBX1, SBX2, SBX3, SBX4 = "29088800001", "29088800002", "29088800003", "29088800004"
ENG101 = "19012340201"
PROPOSE_CODES = next(op.codes for op in TOOL_OPERATIONS if op.name == f"{TOOL_PREFIX}propose_change")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("assistant_fence")) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model(shared: Backend) -> AsyncIterator[StandinHandle]:
    async with run_model_standin("echo") as handle:
        yield handle


@pytest_asyncio.fixture(loop_scope="module")
async def clean(shared: Backend, model: StandinHandle) -> Backend:
    await shared.clean()
    model.standin.clear()
    return shared


async def _ask(shared: Backend, model: StandinHandle, team: str, question: str, *replies: Reply):
    """Ask one question with the read sign-in on `team` and a scripted model; the answer."""
    model.set_script(sequence(*replies, say("done")))
    return await shared.ask(model, team, question)


def _propose(tool: str, arguments: object, reason: str = "the class starts soon") -> Reply:
    return Reply((ToolUse("propose_change", {"tool": tool, "arguments": arguments, "reason": reason}),))


LIST = Reply((ToolUse(DEVICES, {}),))
WRITABLE = Reply((ToolUse("list_writable_devices", {}),))
SCHEMA_REFUSALS = [
    (
        "not proposable",
        "create_stream_endpoint",
        {"name": "x", "type": "rtmp", "url": "rtmp://h/a"},
        "not_proposable",
    ),
    ("a read tool", "get_device_info", {"device_id": SBX1}, "not_proposable"),
    ("pending schema review", "update_cms_event", {"event_id": "e1", "title": "x"}, "schema_not_reviewed"),
    ("bad action", "batch_recording", {"action": "pause", "device_ids": [f"{SBX1}-1"]}, "invalid_arguments"),
    ("missing field", "batch_recording", {"device_ids": [f"{SBX1}-1"]}, "invalid_arguments"),
    ("extra field", "batch_reboot", {"device_ids": [SBX1], "force": True}, "invalid_arguments"),
    ("name instead of ID", "batch_reboot", {"device_ids": ["Sandbox Pearl-2"]}, "invalid_arguments"),
    (
        "master ID for a channel",
        "batch_recording",
        {"action": "start", "device_ids": [SBX1]},
        "invalid_arguments",
    ),
    ("channel ID for a master", "batch_firmware_update", {"device_ids": [f"{SBX1}-1"]}, "invalid_arguments"),
    ("trailing whitespace", "batch_reboot", {"device_ids": [f"{SBX1} "]}, "invalid_arguments"),
    ("over max targets", "batch_reboot", {"device_ids": [SBX1, SBX3]}, "too_many_targets"),
    ("hidden character", "batch_reboot", {"device_ids": [f"{SBX1}\u200b"]}, "hidden_character"),
    ("never resolved in this session", "batch_reboot", {"device_ids": ["29088800999"]}, "fsm_blocked"),
]


@pytest.mark.parametrize(
    ("case", "tool", "arguments", "code"), SCHEMA_REFUSALS, ids=[c[0] for c in SCHEMA_REFUSALS]
)
async def test_a_schema_refusal_stops_in_the_assistant_and_never_reaches_approval_sock(
    clean, model, case, tool, arguments, code
):
    kinds_before = await clean.audit_kinds()
    answer = await _ask(clean, model, "sandbox", "Do it", LIST, _propose(tool, arguments))
    assert error_codes(model.requests) == [code] and code in PROPOSE_CODES
    assert answer.proposals == () and await clean.proposals() == []
    added = (await clean.audit_kinds())[len(kinds_before) :]
    # approval_web saw no proposal: only the question's own record (counts), which it writes
    assert [(actor, kind) for actor, kind, _ in added] == [("assistant", "ask")]
    assert added[0][2]["codes"] == {code: 1} and added[0][2]["proposal_ids"] == []
    assert clean.lab.writes() == []


async def test_a_room_not_on_the_sandbox_team_is_refused_by_the_fence(clean, model):
    answer = await _ask(
        clean,
        model,
        "normal",
        "Record ENG 101",
        LIST,
        _propose("batch_recording", {"action": "start", "device_ids": ["19012340201-1"]}),
    )
    assert error_codes(model.requests) == ["target_not_in_sandbox"]
    assert answer.proposals == () and await clean.proposals() == []
    refusals = [d for actor, kind, d in await clean.audit_kinds() if kind == "refusal"]
    assert [r["code"] for r in refusals][-1:] == ["target_not_in_sandbox"]
    assert clean.lab.writes() == []


async def test_a_channel_the_device_does_not_have_is_refused_after_a_fresh_sandbox_read(clean, model):
    answer = await _ask(
        clean,
        model,
        "sandbox",
        "Record",
        LIST,
        _propose("batch_recording", {"action": "start", "device_ids": [f"{SBX3}-2"]}),
    )
    assert error_codes(model.requests) == ["channel_not_found"]
    assert answer.proposals == () and await clean.proposals() == [] and clean.lab.writes() == []


async def test_a_full_queue_refuses_the_fourth_proposal(clean, model):
    first = await _ask(
        clean,
        model,
        "sandbox",
        "Start recording everywhere",
        LIST,
        *[
            _propose("batch_recording", {"action": "start", "device_ids": [f"{d}-1"]})
            for d in (SBX1, SBX2, SBX3)
        ],
    )
    assert [p.state for p in first.proposals] == ["waiting_for_approval"] * 3, error_codes(model.requests)
    second = await _ask(
        clean,
        model,
        "sandbox",
        "And the classroom",
        LIST,
        _propose("batch_recording", {"action": "start", "device_ids": [f"{SBX4}-1"]}),
    )
    assert error_codes(model.requests[-2:]) == ["queue_full"]
    assert second.proposals == () and len(await clean.proposals()) == 3 and clean.lab.writes() == []
    assert [(r.code, r.text) for r in second.refusals] == [
        (
            "queue_full",
            "Not proposed: start recording in “Sandbox Classroom”: the queue already holds 3 proposals; "
            "approve or deny one on the approval page first.",
        )
    ]


async def test_an_accepted_proposal_is_stored_pending_and_its_line_is_read_back_from_the_store(clean, model):
    answer = await _ask(
        clean,
        model,
        "sandbox",
        "Record the Nano",
        LIST,
        _propose("batch_recording", {"action": "start", "device_ids": [f"{SBX3}-1"]}),
    )
    store = await open_store(clean.settings.db)
    try:
        verification = await verify_audit(store)
    finally:
        await store.close()
    assert len(answer.proposals) == 1, error_codes(model.requests)
    (line,) = answer.proposals
    (stored,) = await clean.proposals()
    assert line.proposal_id == stored["id"] and line.state == "waiting_for_approval"
    assert (
        stored["status"] == "pending"
        and stored["proposed_by"] == "assistant"
        and stored["session_turn"].startswith("t_")
    )
    assert [t["master_id"] for t in stored["targets"]] == [SBX3]
    assert verification.ok
    asks = [d for actor, kind, d in await clean.audit_kinds() if (actor, kind) == ("assistant", "ask")]
    assert asks[-1]["proposal_ids"] == [stored["id"]]
    assert clean.lab.writes() == []


async def test_a_model_failure_after_a_proposal_expires_it_in_the_store(clean, model):
    def then_fail(request):
        model.set_fault("http_500")
        return _propose("batch_recording", {"action": "start", "device_ids": [f"{SBX1}-1"]})

    answer = await _ask(clean, model, "sandbox", "Record", LIST, then_fail)
    assert len(await clean.proposals()) == 1, error_codes(model.requests)
    (stored,) = await clean.proposals()
    assert stored["status"] == "expired"
    assert answer.answered_by == "keyword" and [p.state for p in answer.proposals] == ["expired"]


async def test_a_target_first_seen_in_list_writable_devices_passes_the_gate_and_is_stored(clean, model):
    answer = await _ask(
        clean,
        model,
        "normal",
        "Record the sandbox classroom",
        WRITABLE,
        _propose("batch_recording", {"action": "start", "device_ids": [f"{SBX4}-1"]}),
    )
    assert error_codes(model.requests) == []
    listing = next(p for r in model.requests for p in result_payloads(r) if "devices" in p)
    assert [d["device_id"] for d in listing["devices"]] == [SBX1, SBX2, SBX3, SBX4]
    assert "can be read but not changed" in listing["note"]
    (stored,) = await clean.proposals()
    assert [line.proposal_id for line in answer.proposals] == [stored["id"]]
    assert stored["status"] == "pending" and [t["master_id"] for t in stored["targets"]] == [SBX4]
    assert clean.lab.writes() == []


async def test_a_normal_team_room_is_never_resolved_by_the_writable_list_and_is_refused_by_the_fence(
    clean, model
):
    record_eng101 = _propose("batch_recording", {"action": "start", "device_ids": [f"{ENG101}-1"]})
    await _ask(clean, model, "normal", "Record ENG 101", WRITABLE, record_eng101)
    assert error_codes(model.requests) == ["fsm_blocked"]
    await _ask(clean, model, "normal", "Record ENG 101", WRITABLE, LIST, record_eng101)
    assert error_codes(model.requests[-2:]) == ["target_not_in_sandbox"]
    assert await clean.proposals() == [] and clean.lab.writes() == []


async def test_the_assistant_process_answers_over_its_socket_and_the_demo_proposal_is_stored(clean, model):
    normal = clean.lab.teams["normal"]
    model.set_script("demo")
    env = {
        **clean.env,
        "FLEETWATCH_ANTHROPIC_API_KEY": model.key,
        "FLEETWATCH_ANTHROPIC_BASE_URL": model.base_url,
        "FLEETWATCH_MODEL": "standin-model",
    }
    write_slot(
        clean.settings.read_token_file,
        SignIn(access_token=normal.token, server=clean.lab.mcp_url, team_id=normal.team_id, kind="lab"),
    )
    async with running_service("services.assistant", env) as assistant:
        manifest = await request(assistant.socket, GetCapabilities(), Capabilities, timeout_seconds=10)
        answer = await request(
            assistant.socket,
            Ask(question="Which room needs a recording started?"),
            Answer,
            timeout_seconds=60,
        )
        refused = await request(
            assistant.socket, Ask(question="Hola", language="fr"), Answer, timeout_seconds=10
        )
    assert manifest == capabilities()
    assert isinstance(refused, ErrorReply) and refused.code == "invalid_message"
    assert isinstance(answer, Answer) and answer.answered_by == "model", answer
    assert len(answer.proposals) == 1, (answer, error_codes(model.requests), assistant.log_text())
    (stored,) = await clean.proposals()
    assert json.loads(stored["arguments_json"]) == {"action": "start", "device_ids": [f"{SBX4}-1"]}
    assert "Sandbox Classroom" in answer.text and "ENG 101 Auditorium" in answer.text
    assert [(p.proposal_id, p.state) for p in answer.proposals] == [(stored["id"], "waiting_for_approval")]
    asks = [d for actor, kind, d in await clean.audit_kinds() if (actor, kind) == ("assistant", "ask")]
    assert asks[-1]["proposal_ids"] == [stored["id"]] and asks[-1]["question_chars"] == len(
        "Which room needs a recording started?"
    )
    assert clean.lab.writes() == []
