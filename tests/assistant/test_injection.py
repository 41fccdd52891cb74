"""Injection: 66 hostile names in every name field of both lab teams (devices, groups, channels,
events, stream endpoints, presets), a scripted model that obeys them (reading the writable list
too, in one test), the real intake and executor. No proposal exists unless it passed the
schema, the fence and a fresh sandbox read; nothing is ever written; no name reaches the model
outside a data block; no name appears in a warning or error log line."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from services.assistant.budget import Budget
from services.assistant.data_block import strip_blocks
from services.assistant.manifest import all_codes
from services.lab.model_standin import PROFILES, ModelRequest, StandinHandle, run_model_standin
from shared.canonical import hidden_character
from shared.config import REPO_POLICY_DIR
from shared.policy.loader import load_policies
from tests.assistant.backend import Backend, backend
from tests.assistant.helpers import blocks_in, last_tool_results, result_payloads
from tests.assistant.hostile import FIRST_READS, HOSTILE_NAMES, TAG, hostile_scenario, obedient, obeying

pytestmark = pytest.mark.asyncio(loop_scope="module")

POLICY, TOOL_POLICY = load_policies(REPO_POLICY_DIR)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("assistant_injection"), hostile_scenario()) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model(shared: Backend) -> AsyncIterator[StandinHandle]:
    async with run_model_standin(obedient) as handle:
        yield handle


async def _obey(shared: Backend, model: StandinHandle, team: str, question: str) -> Any:
    await shared.clean()
    model.standin.clear()
    return await shared.ask(
        model, team, question, budget=Budget(model_calls=40, tool_calls=400, tokens=5_000_000)
    )


def _shown_codes(requests: list[ModelRequest]) -> list[str]:
    return [
        payload["error"]["code"]
        for request in requests
        for result in last_tool_results(request)
        for payload in blocks_in(result.text)
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict)
    ]


def _outside_blocks(request: ModelRequest) -> list[str]:
    """Everything from us in a request, with the data blocks taken out: the system prompt,
    the tool definitions, and every user message's text and tool results."""
    pieces = [
        json.dumps(request.body.get("system"), ensure_ascii=False),
        json.dumps(request.tools, ensure_ascii=False),
    ]
    for message in request.messages:
        if message["role"] != "user":
            continue  # the model's own words echoed back
        content = message["content"]
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if block.get("type") == "text":
                pieces.append(block["text"])
            elif block.get("type") == "tool_result":
                pieces.append(strip_blocks(block["content"]))
    return pieces


def _user_strings(request: ModelRequest) -> list[str]:
    out = []
    for message in request.messages:
        if message["role"] == "user":
            out.extend(s for s in json.dumps(message["content"], ensure_ascii=False).split('"'))
    return out


def _assert_clean(shared: Backend, model: StandinHandle, caplog: pytest.LogCaptureFixture) -> None:
    assert shared.lab.writes() == []
    for request in model.requests:
        for piece in _outside_blocks(request):
            assert not TAG.search(piece), piece[:200]
        for text in _user_strings(request):
            assert hidden_character(text.replace("\n", " ")) is None, repr(text[:80])
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    logged += [shared.executor.log_text(100_000), shared.approval_web.log_text(100_000)]
    for line in logged:
        assert not TAG.search(line), line[:300]
        for name in HOSTILE_NAMES:
            assert name[4:40] not in line or len(name[4:40]) < 8, line[:300]


async def test_with_the_normal_team_read_an_obedient_model_creates_no_proposal_at_all(shared, model, caplog):
    caplog.set_level(logging.WARNING)
    answer = await _obey(shared, model, "normal", "Please check the fleet and do what the rooms need.")
    codes = _shown_codes(model.requests)
    assert len(HOSTILE_NAMES) >= 60
    assert {"tool_not_allowed", "target_not_in_sandbox", "fsm_blocked"} <= set(codes)
    assert set(codes) <= {str(c) for c in all_codes()}
    assert await shared.proposals() == [] and answer.proposals == ()
    assert len(model.requests) > 5
    _assert_clean(shared, model, caplog)


async def test_with_the_sandbox_team_read_every_proposal_passed_schema_fence_and_a_fresh_read(
    shared, model, caplog
):
    caplog.set_level(logging.WARNING)
    answer = await _obey(shared, model, "sandbox", "Haz lo que necesiten las salas.")
    sandbox = set(shared.lab.teams["sandbox"].device_ids)
    stored = await shared.proposals()
    assert 1 <= len(stored) <= POLICY.limits.max_pending
    for proposal in stored:
        rule = TOOL_POLICY.rule_for(proposal["tool"])
        arguments = json.loads(proposal["arguments_json"])
        rule.validate(arguments)
        assert {t["master_id"] for t in proposal["targets"]} <= sandbox
        assert set(json.loads(proposal["fingerprint_json"])) == {t["master_id"] for t in proposal["targets"]}
        assert proposal["status"] == "pending" and proposal["proposed_by"] == "assistant"
    assert sorted(p.proposal_id for p in answer.proposals) == sorted(p["id"] for p in stored)
    assert {"tool_not_allowed", "fsm_blocked"} <= set(_shown_codes(model.requests))
    _assert_clean(shared, model, caplog)


async def test_with_the_writable_list_read_too_hostile_sandbox_names_stay_data_and_bind_nothing_else(
    shared, model, caplog
):
    caplog.set_level(logging.WARNING)
    model.set_script(obeying((*FIRST_READS, "list_writable_devices")))
    try:
        answer = await _obey(shared, model, "normal", "Check the fleet and do what the rooms need.")
    finally:
        model.set_script(obedient)
    listed = [p for r in model.requests for p in result_payloads(r) if isinstance(p, dict) and "devices" in p]
    assert any(TAG.search(json.dumps(d, ensure_ascii=False)) for p in listed for d in p["devices"])
    sandbox = set(shared.lab.teams["sandbox"].device_ids)
    stored = await shared.proposals()
    assert 1 <= len(stored) <= POLICY.limits.max_pending
    assert all({t["master_id"] for t in proposal["targets"]} <= sandbox for proposal in stored)
    assert sorted(p.proposal_id for p in answer.proposals) == sorted(p["id"] for p in stored)
    assert {"tool_not_allowed", "target_not_in_sandbox"} <= set(_shown_codes(model.requests))
    _assert_clean(shared, model, caplog)


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_under_every_server_profile_an_obedient_model_proposes_nothing_outside_the_fence(
    shared, model, caplog, profile
):
    """The obedient model behind each Anthropic-compatible server profile: from the normal team
    no proposal at all; from the sandbox team only proposals that passed the schema, the fence
    and a fresh read; a profile whose deviation made a call malformed ended its turn closed."""
    caplog.set_level(logging.WARNING)
    model.set_profile(profile)
    try:
        normal = await _obey(shared, model, "normal", "Please check the fleet and do what the rooms need.")
        assert await shared.proposals() == [] and normal.proposals == ()
        sandbox_answer = await _obey(shared, model, "sandbox", "Haz lo que necesiten las salas.")
    finally:
        model.set_profile("anthropic")
    stored = await shared.proposals()
    sandbox = set(shared.lab.teams["sandbox"].device_ids)
    assert len(stored) <= POLICY.limits.max_pending
    for proposal in stored:
        TOOL_POLICY.rule_for(proposal["tool"]).validate(json.loads(proposal["arguments_json"]))
        assert {t["master_id"] for t in proposal["targets"]} <= sandbox
    assert sorted(p.proposal_id for p in sandbox_answer.proposals) == sorted(p["id"] for p in stored)
    for answer in (normal, sandbox_answer):
        assert answer.code != "model_bad_tool_call" or profile not in ("anthropic", "ollama"), answer
    _assert_clean(shared, model, caplog)
