"""``fleetwatch ask``: a real process talking to a real assistant.sock (served here, with a fake
assistant behind it: the socket and the command are what is tested)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from services.assistant.server import assistant_side
from services.assistant.service import AskedBy
from shared.config import load_settings
from shared.wire.assistant import Answer, NoteLine, ProposalLine
from tests.ctl.cli import error_code, error_message, fleetwatch_async
from tests.procs import base_env


@dataclass
class FakeAssistant:
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    askers: list[AskedBy | None] = field(default_factory=list)

    async def ask(
        self, question: str, language: str | None = None, *, asked_by: AskedBy | None = None
    ) -> Answer:
        self.asked.append((question, language))
        self.askers.append(asked_by)
        line = ProposalLine(
            proposal_id="p_1", state="waiting_for_approval", text="Proposal p_1 (batch_recording): waiting."
        )
        return Answer(
            text="Fix first:\n- Room \x1b[31mRED\u202e: offline\n- Lab\rINFO approved=true\u2028- p_9 ran ok\u2029.",
            language=language or "en",
            answered_by="model",
            proposals=(line,),
            notes=(NoteLine(device_id="19012340204", text="«ENG 210»: Switch port dead\u202e"),),
        )


async def test_ask_prints_the_answer_with_hidden_characters_shown_and_the_proposal_lines(tmp_path: Path):
    env = base_env(tmp_path / "home")
    fake = FakeAssistant()
    async with assistant_side(load_settings(env), fake):
        # The ask family's one real-process run: the console script as a shell sees it.
        code, out, _ = await fleetwatch_async(
            env, "ask", "¿Qué necesita atención?", "--language", "es", real_process=True
        )
        json_code, json_out, _ = await fleetwatch_async(env, "ask", "What needs attention?", "--json")
    assert code == 0 and json_code == 0
    assert fake.asked == [("¿Qué necesita atención?", "es"), ("What needs attention?", None)]
    assert fake.askers == [AskedBy(uid=os.getuid())] * 2  # who asked: the kernel's uid of the caller
    assert out.split("\n") == [
        "Palabras del asistente (Fleetwatch no las comprobó):",
        "│ Fix first:",
        "│ - Room ⟦U+001B⟧[31mRED⟦U+202E⟧: offline",
        # A name's CR, U+2028 and U+2029 split it, and each piece is quoted as the model's.
        "│ - Lab",
        "│ INFO approved=true",
        "│ - p_9 ran ok",
        "│ .",
        "",
        "Lo que Fleetwatch registró (no son palabras del asistente):",
        "- Proposal p_1 (batch_recording): waiting.",
        "",
        "Notas de las salas (palabras de los operadores):",  # the rooms' notes, apart
        "- «ENG 210»: Switch port dead⟦U+202E⟧",
        "",
        "Respondió el modelo.",  # who answered, as the ask page says it
        "",
    ]
    assert "\x1b" not in out and "\u202e" not in out
    assert json.loads(json_out)["proposals"][0]["state"] == "waiting_for_approval"


async def test_ask_without_a_running_assistant_says_so_and_exits_2(tmp_path: Path):
    code, out, err = await fleetwatch_async(base_env(tmp_path / "home"), "ask", "What needs attention?")
    assert code == 2 and out == ""
    assert error_code(err) == "service_unavailable" and error_message(err).startswith(
        "Fleetwatch is not running here (FLEETWATCH_HOME="
    )
    assert "fleetwatch up` (the assistant is not running" in err


async def test_a_refused_question_exits_2_with_the_code(tmp_path: Path):
    env = base_env(tmp_path / "home")
    async with assistant_side(load_settings(env), FakeAssistant()):
        code, _, err = await fleetwatch_async(env, "ask", "   ")
    assert code == 2 and error_code(err) == "invalid_message"
