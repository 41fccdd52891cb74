"""The write client: one call, never retried, and what each kind of answer means. Against the
lab over HTTP (the same MCP client the executor uses), plus the pure reading of results."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from services.executor import ExecutorError
from services.executor.write_client import WriteClient, interpret
from services.lab.server import LabHandle, run_lab
from shared.epiphan.mcp_session import McpConnection, RawToolResult
from shared.epiphan.read_client import is_plan_error_text
from shared.errors import Code, FleetwatchError
from tests.executor.harness import IDLE

IN_MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")
START = {"action": "start", "device_ids": [f"{IDLE}-1"]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


@pytest_asyncio.fixture(loop_scope="module")
async def lab(module_lab: LabHandle) -> LabHandle:
    module_lab.reset()
    return module_lab


async def write(
    lab: LabHandle, tool: str = "batch_recording", arguments: dict | None = None, *, timeout: float = 5
):
    async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token, timeout_seconds=timeout) as connection:
        return await WriteClient(connection).write_once(tool, arguments or START)


@IN_MODULE_LOOP
async def test_an_empty_map_is_ok(lab: LabHandle) -> None:
    outcome = await write(lab)
    assert (outcome.outcome, outcome.detail) == ("ok", {})
    assert len(lab.writes()) == 1


@IN_MODULE_LOOP
async def test_a_per_device_map_is_an_error_with_the_map(lab: LabHandle) -> None:
    outcome = await write(lab, arguments={"action": "start", "device_ids": [f"{IDLE}-9"]})
    assert (outcome.outcome, outcome.detail) == ("error", {f"{IDLE}-9": "channel not found"})


@IN_MODULE_LOOP
@pytest.mark.parametrize("fault", ["error", "auth_401", "malformed_json", "drop_response"])
async def test_an_answer_that_is_not_a_map_of_errors_is_unknown(lab: LabHandle, fault: str) -> None:
    lab.set_fault("batch_recording", fault)
    outcome = await write(lab, timeout=1)
    assert outcome.outcome == "unknown" and outcome.message
    calls = len(lab.writes()) + len(lab.rejected())
    assert calls == 1  # one call reached the lab, and only one


@IN_MODULE_LOOP
async def test_a_write_client_sends_one_write_in_its_life(lab: LabHandle) -> None:
    async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token, timeout_seconds=5) as connection:
        client = WriteClient(connection)
        assert (await client.write_once("batch_recording", START)).outcome == "ok"
        with pytest.raises(ExecutorError) as again:
            await client.write_once("batch_recording", START)
        assert again.value.code == Code.INTERNAL_ERROR
        with pytest.raises(ExecutorError):
            await WriteClient(connection).write_once("get_devices_in_my_team", {})
    assert len(lab.writes()) == 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (RawToolResult("t", False, {}, "{}"), "ok"),
        (RawToolResult("t", False, None, "{}"), "ok"),
        (RawToolResult("t", False, {"a": "busy"}, ""), "error"),
        (RawToolResult("t", False, {"a": {"nested": 1}}, ""), "unknown"),
        (RawToolResult("t", False, None, "[]"), "unknown"),
        (RawToolResult("t", False, None, "Done."), "unknown"),
        (RawToolResult("t", True, None, "401 Unauthorized: invalid_token"), "unknown"),
        (RawToolResult("t", True, None, "{}"), "unknown"),
    ],
)
def test_reading_a_write_result(raw: RawToolResult, expected: str) -> None:
    assert interpret(raw).outcome == expected


PLAN_TEXTS = (
    "403 Forbidden: this action requires an Epiphan Edge Premium plan; your team's plan allows viewing only.",
    "PERMISSION_DENIED: device control is not included in your plan. Upgrade to Premium.",
    "Your subscription does not allow this action",
    "PLAN_REQUIRED",
    '{"error": "plan_required", "message": "Write access needs a higher plan"}',
    "FEATURE_NOT_IN_PLAN: batch_recording",
    "Forbidden: upgrade required",
)
NOT_PLAN_TEXTS = (
    "FORBIDDEN",
    "403 Forbidden",
    "401 Unauthorized: invalid_token",
    "device offline",
    "firmware is up to date",
    "event not found",
    "500 Internal Server Error: the device service did not answer (simulated).",
)


@pytest.mark.parametrize("text", NOT_PLAN_TEXTS)
def test_other_errors_are_never_read_as_a_plan_refusal(text: str) -> None:
    assert not is_plan_error_text(text)


@pytest.mark.parametrize("text", PLAN_TEXTS)
def test_a_write_refused_for_the_plan_is_refused_with_its_own_code(text: str) -> None:
    outcome = interpret(RawToolResult("t", True, None, text))
    assert (outcome.outcome, outcome.code) == ("refused", Code.PLAN_REQUIRED), outcome
    assert "Premium" in outcome.message and "nothing ran" in outcome.message.lower()


def test_a_per_target_map_of_plan_refusals_is_the_plan_refusal_too() -> None:
    raw = RawToolResult(
        "t", False, {"a-1": "Requires Epiphan Edge Premium plan", "a-2": "requires a Premium plan"}, ""
    )
    assert (interpret(raw).outcome, interpret(raw).code) == ("refused", Code.PLAN_REQUIRED)


def test_a_map_where_only_some_targets_name_the_plan_stays_an_error() -> None:
    raw = RawToolResult(
        "t", False, {"a-1": "Requires Epiphan Edge Premium plan", "a-2": "device offline"}, ""
    )
    assert (interpret(raw).outcome, interpret(raw).code) == ("error", None)


@pytest.mark.parametrize("text", ["FORBIDDEN", "401 Unauthorized: invalid_token"])
def test_a_dead_sign_in_in_a_write_result_is_unknown_not_a_plan_refusal(text: str) -> None:
    outcome = interpret(RawToolResult("t", True, None, text))
    assert (outcome.outcome, outcome.code) == ("unknown", None)
    assert "sign-in" in outcome.message


@IN_MODULE_LOOP
async def test_a_team_without_the_plan_is_refused_the_write_and_still_reads(lab: LabHandle) -> None:
    lab.set_fault("*", "plan_required")
    async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token, timeout_seconds=5) as connection:
        outcome = await WriteClient(connection).write_once("batch_recording", START)
        read = await connection.call("get_devices_in_my_team")
    assert (outcome.outcome, outcome.code) == ("refused", Code.PLAN_REQUIRED)
    assert not read.is_error and lab.writes() == []
    assert not lab.state.devices[IDLE].channel("1").recording


def test_an_error_map_is_redacted() -> None:
    raw = RawToolResult("t", False, {"a": "failed with Bearer abcdefghijklmnop123"}, "")
    outcome = interpret(raw)
    assert outcome.outcome == "error" and "abcdefghijklmnop123" not in outcome.detail["a"]


@IN_MODULE_LOOP
async def test_a_write_never_reopens_a_session_that_closed_after_the_reads(lab: LabHandle) -> None:
    lab.set_fault("get_devices_in_my_team", "drop_response", count=1)
    async with McpConnection(lab.mcp_url, lab.teams["sandbox"].token, timeout_seconds=1) as connection:
        with pytest.raises(FleetwatchError) as lost:
            await connection.call("get_devices_in_my_team")  # the read is lost: the session closes
        assert lost.value.code == Code.EPIPHAN_TIMEOUT
        outcome = await WriteClient(connection).write_once("batch_recording", START)
    assert outcome.outcome == "unknown"
    assert lab.writes() == [] and [tool for tool, _ in lab.calls()] == ["get_devices_in_my_team"]
