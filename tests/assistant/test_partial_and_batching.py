"""The assistant on a partial view and on a fleet beyond Epiphan's per-call limit.

A read that fails (or comes back in no known shape) leaves the rest of the answer standing and
is named in it ("events: could not be read: …"), for the keyword answer and for the demo model
behind the real SDK; a question about what could not be read is answered with only that. With
250 devices every per-device read goes out in calls of at most 100 IDs: the keyword answer's
snapshot, the demo model's reads, and a model that asks for all 250 at once (the assistant
splits the call and merges the answers into one data block)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.lab.model_scripts.api import Reply, ToolUse, say
from services.lab.model_standin import run_model_standin
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from tests.assistant.conftest import START
from tests.assistant.helpers import blocks_in, model_client, sequence
from tests.assistant.judge import Truth, judge_rooms, rooms_named

RECORDER = "get_recorder_status_for_devices"
EVENTS = "get_current_or_next_cms_events_for_devices"
SYSTEM = "get_system_status_for_devices"


@pytest.mark.parametrize("fault", ["malformed_json", "error"])
async def test_the_demo_model_answers_offline_rooms_and_names_the_events_it_could_not_read(
    lab, standin, make_assistant, fault
):
    lab.set_fault(EVENTS, fault)
    answer = await make_assistant().ask("which devices are offline?")
    truth = Truth.of(lab)
    verdict = judge_rooms(answer.text, truth, truth.offline())
    assert verdict.ok, (verdict, answer.text)
    assert answer.answered_by == "model" and EVENTS in answer.text  # the read it could not make
    assert "the device list" not in answer.text


async def test_the_demo_model_says_what_it_could_not_read_instead_of_no_room_is_hot(
    lab, standin, make_assistant
):
    lab.set_fault(SYSTEM, "error")
    answer = await make_assistant().ask("¿Qué equipos están muy calientes?")
    assert SYSTEM in answer.text  # the read it could not make, and no "no room is hot"
    assert rooms_named(answer.text, Truth.of(lab).all_names) == set() and "ninguna" not in answer.text


@pytest.fixture
async def big_lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus", clock=LabClock(START, frozen=True), devices=250) as handle:
        yield handle


@pytest.fixture
async def big_reader(big_lab, policies) -> AsyncIterator[EpiphanReadClient]:
    connection = McpConnection(big_lab.mcp_url, big_lab.teams["normal"].token)
    async with EpiphanReadClient(connection, policies[1].model_read_tools) as client:
        yield client


def per_device_calls_over_100(lab: LabHandle) -> list[dict]:
    return [r for r in lab.rejected() if len(r["arguments"].get("device_ids") or ()) > 100]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("which devices are offline?", Truth.offline),
        ("which rooms are recording right now?", Truth.recording),
    ],
)
@pytest.mark.parametrize("with_model", [False, True])
async def test_at_250_devices_every_answer_covers_every_room_in_calls_of_at_most_100(
    big_lab, big_reader, standin, client, make_assistant, question, expected, with_model
):
    assistant = make_assistant(reader=big_reader, model_client=client if with_model else None)
    answer = await assistant.ask(question)
    truth = Truth.of(big_lab)
    assert len(truth.normal) == 250 and expected(truth)
    if with_model:  # the model is shown the first 60 rooms of a data block, and says so
        assert rooms_named(answer.text, truth.all_names) <= expected(truth) and "only part" in answer.text
    elif len(expected(truth)) <= 20:  # the keyword answer lists up to 20 rooms by name
        verdict = judge_rooms(answer.text, truth, expected(truth))
        assert verdict.ok, (verdict, answer.text)
    else:
        assert f"{len(expected(truth))} rooms" in answer.text, answer.text
    assert answer.answered_by == ("model" if with_model else "keyword")
    assert per_device_calls_over_100(big_lab) == [] and big_lab.rejected() == []
    assert "could not be read" not in answer.text


async def recorder_block_for_all(lab: LabHandle, reader: EpiphanReadClient, make_assistant) -> dict:
    """Ask with a model that reads the recorder status of every device in one call; the data
    block it got back."""
    ids = list(lab.teams["normal"].device_ids)
    async with run_model_standin("echo") as model:
        model.set_script(sequence(Reply((ToolUse(RECORDER, {"device_ids": ids}),)), say("done")))
        async with model_client(model) as sdk:
            await make_assistant(reader=reader, model_client=sdk).ask("which rooms are recording?")
        (result,) = model.requests[1].tool_results()
    (block,) = blocks_in(result.text)
    return block


async def test_a_model_asking_for_250_devices_at_once_gets_one_merged_block(
    big_lab, big_reader, make_assistant
):
    ids = list(big_lab.teams["normal"].device_ids)
    block = await recorder_block_for_all(big_lab, big_reader, make_assistant)
    shown = [k for k in block["devices"] if k != "…"]  # a data block shows the first 60 entries
    assert shown == ids[:60] and block["devices"]["…"] == "190 more entries not shown"
    assert big_lab.rejected() == [] and "could_not_read" not in block


async def test_a_batched_read_with_a_failed_call_tells_the_model_which_devices_are_missing(
    big_lab, big_reader, make_assistant
):
    big_lab.set_fault(RECORDER, "error", count=1)
    block = await recorder_block_for_all(big_lab, big_reader, make_assistant)
    (missing,) = block["could_not_read"]
    assert missing["code"] == "epiphan_tool_error" and missing["devices"] == 100
    assert block["result"]["devices"]["…"] == "90 more entries not shown"
