"""The assistant on a captured team with no account: the lab replays the committed campus
captures (``tests/fixtures/captures/``), the executor and approval_web run as processes, and the
demo model behind the real SDK reads, answers and proposes on the captured sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from services.lab.model_standin import StandinHandle, run_model_standin
from tests.assistant.backend import Backend, backend
from tests.assistant.judge import Truth, judge_rooms

pytestmark = pytest.mark.asyncio(loop_scope="module")
CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Backend, StandinHandle]]:
    captures = {"capture": CAPTURES / "campus", "capture_sandbox": CAPTURES / "campus-sandbox"}
    async with (
        backend(tmp_path_factory.mktemp("captured"), lab_options=captures) as stack,
        run_model_standin("demo") as model,
    ):
        yield stack, model


async def test_the_demo_model_answers_from_a_captured_team(running):
    stack, model = running
    await stack.clean()
    answer = await stack.ask(model, "normal", "which rooms are offline?")
    truth = Truth.of(stack.lab)
    verdict = judge_rooms(answer.text, truth, truth.offline())
    assert verdict.ok and truth.offline() == {"ENG 210", "LIB Room 2"}, (verdict, answer.text)


async def test_a_change_on_the_captured_sandbox_is_proposed_for_a_person_to_approve(running):
    stack, model = running
    await stack.clean()
    answer = await stack.ask(model, "normal", "start recording in Sandbox Classroom")
    (proposal,) = await stack.proposals()
    assert proposal["tool"] == "batch_recording" and proposal["status"] == "pending", answer.text
    assert [t["master_id"] for t in proposal["targets"]] == ["29088800004"]
    assert stack.lab.writes() == []
