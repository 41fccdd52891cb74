"""The demo model with everything real around it: the assistant as a process answering on its
socket (as ``fleetwatch ask`` reaches it), approval_web and the executor as processes, one
store, the campus lab. Answers are judged against the lab's state; the read tools an answer
relies on must be in that turn's audit row; changes go through the real intake and the
executor's fresh read of the sandbox team."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from services.lab.model_standin import StandinHandle, run_model_standin
from shared.epiphan.slots import SignIn, write_slot
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
from tests.assistant.backend import Backend, backend
from tests.assistant.judge import Truth, judge_rooms, rooms_named
from tests.procs import running_service

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEVICES = "get_devices_in_my_team"
RECORDER = "get_recorder_status_for_devices"
MUST_SHOW = [
    ("which rooms are offline?", Truth.offline, {DEVICES}),
    ("which rooms are recording right now?", Truth.recording, {DEVICES, RECORDER}),
    ("¿qué salas están grabando ahora?", Truth.recording, {DEVICES, RECORDER}),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Backend, StandinHandle]]:
    """The backend processes and the stand-in playing the demo model, for the whole module."""
    async with backend(tmp_path_factory.mktemp("demo_model")) as stack, run_model_standin("demo") as model:
        yield stack, model


@pytest.fixture
def model(running: tuple[Backend, StandinHandle]) -> StandinHandle:
    return running[1]


@pytest_asyncio.fixture(loop_scope="module")
async def clean(running: tuple[Backend, StandinHandle]) -> Backend:
    """A fresh lab, no proposals, no recorded model requests."""
    stack, model = running
    await stack.clean()
    model.standin.clear()
    return stack


def _assistant_env(running: Backend, model: StandinHandle | None) -> dict[str, str]:
    normal = running.lab.teams["normal"]
    write_slot(
        running.settings.read_token_file,
        SignIn(access_token=normal.token, server=running.lab.mcp_url, team_id=normal.team_id, kind="lab"),
    )
    if model is None:
        return dict(running.env)
    return {
        **running.env,
        "FLEETWATCH_ANTHROPIC_API_KEY": model.key,
        "FLEETWATCH_ANTHROPIC_BASE_URL": model.base_url,
        "FLEETWATCH_MODEL": "standin-model",
    }


async def _asks(running: Backend) -> list[dict]:
    return [d for actor, kind, d in await running.audit_kinds() if (actor, kind) == ("assistant", "ask")]


async def test_the_assistant_process_answers_the_must_show_questions_with_every_matching_room(clean, model):
    before = len(await _asks(clean))
    answers = []
    async with running_service(
        "services.assistant", _assistant_env(clean, model), log_name="demo"
    ) as assistant:
        for question, _, _ in MUST_SHOW:
            answers.append(
                await request(assistant.socket, Ask(question=question), Answer, timeout_seconds=60)
            )
    truth = Truth.of(clean.lab)
    rows = (await _asks(clean))[before:]
    assert len(rows) == len(MUST_SHOW)
    for (question, expected, tools), answer, row in zip(MUST_SHOW, answers, rows, strict=True):
        assert isinstance(answer, Answer) and answer.answered_by == "model", answer
        verdict = judge_rooms(answer.text, truth, expected(truth))
        assert verdict.ok, (question, verdict, answer.text)
        assert tools <= set(row["tools"]) and row["answered_by"] == "model" and row["proposal_ids"] == []
    assert answers[2].language == "es" and answers[2].text.startswith("Revisé")
    assert await clean.proposals() == [] and clean.lab.writes() == []


async def test_without_a_key_the_assistant_process_gives_the_keyword_answer_with_the_same_rooms(clean):
    async with running_service(
        "services.assistant", _assistant_env(clean, None), log_name="keyword"
    ) as assistant:
        answers = [
            await request(assistant.socket, Ask(question=q), Answer, timeout_seconds=60)
            for q, _, _ in MUST_SHOW
        ]
    truth = Truth.of(clean.lab)
    for (question, expected, _), answer in zip(MUST_SHOW, answers, strict=True):
        assert isinstance(answer, Answer) and answer.answered_by == "keyword", answer
        verdict = judge_rooms(answer.text, truth, expected(truth))
        assert verdict.ok, (question, verdict, answer.text)
    assert answers[2].text.endswith(
        "(Respuesta por palabras clave: leída de la flota ahora mismo, sin modelo; nunca propone un cambio.)"
    )


async def _stored(running: Backend) -> list[tuple[str, dict, list[str]]]:
    return [
        (p["tool"], json.loads(p["arguments_json"]), [t["master_id"] for t in p["targets"]])
        for p in await running.proposals()
    ]


async def test_a_change_on_a_practice_room_reaches_the_intake_and_the_executor_binds_it(clean, model):
    truth = Truth.of(clean.lab)
    pearl = truth.device("Sandbox Pearl-2").id
    answer = await clean.ask(model, "normal", "Start recording in Sandbox Pearl-2.")
    assert await _stored(clean) == [
        ("batch_recording", {"action": "start", "device_ids": [f"{pearl}-1"]}, [pearl])
    ]
    assert [p.state for p in answer.proposals] == ["waiting_for_approval"]
    assert clean.lab.writes() == []


async def test_a_recording_practice_room_gets_a_stop_but_never_a_reboot(clean, model):
    mini = Truth.of(clean.lab).device("Sandbox Pearl Mini")
    assert any(c.recording for c in mini.channels)
    reboot = await clean.ask(model, "normal", "Reboot Sandbox Pearl Mini")
    assert "Sandbox Pearl Mini is recording; a reboot would interrupt it" in reboot.text
    assert await _stored(clean) == []
    stop = await clean.ask(model, "normal", "Stop the recording in Sandbox Pearl Mini")
    assert await _stored(clean) == [
        ("batch_recording", {"action": "stop", "device_ids": [f"{mini.id}-1"]}, [mini.id])
    ]
    assert stop.text.startswith("I proposed stopping the recording in Sandbox Pearl Mini")


async def test_a_change_on_a_room_the_fence_does_not_cover_is_never_proposed(clean, model):
    answer = await clean.ask(model, "normal", "Reinicia ENG 105")
    assert answer.text.startswith("ENG 105 se puede consultar, pero no cambiar desde aquí")
    assert await _stored(clean) == [] and not answer.proposals


async def test_the_demo_questions_in_both_languages_propose_the_due_recording(clean, model):
    truth = Truth.of(clean.lab)
    due = truth.due_recording()
    assert due is not None
    for question in (
        "Which rooms need attention before their next class? Start any recording that should be running.",
        "¿Qué salas necesitan atención antes de su próxima clase? Inicia cualquier grabación que deba estar en marcha.",
    ):
        await clean.clean()
        answer = await clean.ask(model, "normal", question)
        assert await _stored(clean) == [
            ("batch_recording", {"action": "start", "device_ids": [f"{due[0]}-{due[1]}"]}, [due[0]])
        ]
        allowed = truth.class_soon() | {truth.device("Sandbox Classroom").name}
        assert judge_rooms(answer.text, truth, truth.not_ready(), allowed=allowed).ok, answer.text
        assert [p.state for p in answer.proposals] == ["waiting_for_approval"]


async def test_what_may_be_changed_names_the_practice_team_the_executor_read(clean, model):
    answer = await clean.ask(model, "normal", "¿Qué salas puedes cambiar?")
    truth = Truth.of(clean.lab)
    assert rooms_named(answer.text, truth.all_names) == {d.name for d in truth.sandbox}
    assert answer.text.startswith("Solo puedo proponer cambios para estas 4 salas de práctica")
    assert await _stored(clean) == []
