"""The twenty questions of `tests.assistant.demo_table` asked of the demo model under the lab's
server profiles (`services.lab.model_standin.PROFILES`), everything real but the model: the
campus lab, the executor and approval_web as processes, the real intake. All twenty under every
profile (about half a second a profile): under ``anthropic`` and ``ollama`` (every deviation of
it survivable) each answer is judged right against the lab; under the others each answer is
judged right, or, where the profile's deviation made the demo model's tool call malformed, the
turn failed closed: ``model_bad_tool_call``, said in words, and no proposal stored."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from services.lab.model_standin import PROFILES, StandinHandle, run_model_standin
from shared.errors import Code
from tests.assistant.backend import Backend, backend
from tests.assistant.demo_table import QUESTIONS, ask

pytestmark = pytest.mark.asyncio(loop_scope="module")

SURVIVED = frozenset({"anthropic", "ollama"})
"""Profiles whose every deviation the assistant survives: every answer must be right."""
WORDS = ("tool call came malformed", "llegó mal formada")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Backend, StandinHandle]]:
    async with backend(tmp_path_factory.mktemp("demo_table")) as stack, run_model_standin("demo") as model:
        yield stack, model


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_the_demo_table_under_a_server_profile(running, profile):
    stack, model = running
    model.set_profile(profile)
    try:
        wrong = []
        for question in QUESTIONS:
            answer, verdict = await ask(stack, model, question, "demo")
            closed = answer.code == Code.MODEL_BAD_TOOL_CALL and any(w in answer.text for w in WORDS)
            if closed and profile not in SURVIVED:
                assert await stack.proposals() == [] and answer.proposals == (), (profile, question.text)
            elif not verdict.ok:
                wrong.append((question.text, str(verdict), answer.text[:300]))
    finally:
        model.set_profile("anthropic")
    assert wrong == [], wrong
