"""Twenty questions (ten English, ten Spanish) asked of the demo model and of the keyword answer,
each answer judged right or wrong against the lab's own state. Prints a Markdown table.

Run: ``.venv/bin/python -m tests.assistant.demo_table [--full FILE]``.

Everything is real but the model: the campus lab, the executor and approval_web as processes
(`tests.assistant.backend`), the `Assistant` with the real Anthropic SDK against the lab's
stand-in playing ``demo``, and the same `Assistant` without a model (the keyword answer). The
lab and the proposals are reset before every question, and the judge reads the lab's state
right after the answer (`tests.assistant.judge`). ``--full`` writes every answer in full.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.lab.model_standin import StandinHandle, run_model_standin
from shared.wire.assistant import Answer
from tests.assistant.backend import Backend, backend
from tests.assistant.judge import (
    Truth,
    Verdict,
    judge_no_proposal,
    judge_proposal,
    judge_room_status,
    judge_rooms,
)

Proposals = list[tuple[str, dict[str, Any]]]
Judge = Callable[[str, Truth, Proposals, str], Verdict]
"""(answer text, lab state, proposals stored, who answered: ``demo`` or ``keyword``) → verdict."""


def rooms(expected: Callable[[Truth], set[str]], allowed: Callable[[Truth], set[str]] | None = None) -> Judge:
    def judge(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
        if proposals:
            return Verdict(False, "proposed a change to a question that asked for none")
        return judge_rooms(text, truth, expected(truth), allowed=allowed(truth) if allowed else None)

    return judge


def room(name: str, language: str) -> Judge:
    def judge(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
        return Verdict(False, "proposed") if proposals else judge_room_status(text, truth, name, language)

    return judge


def readiness_only(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
    """The readiness question alone: the rooms not ready, and no change proposed."""
    if proposals:
        return Verdict(False, "proposed a change to a question that asked for none")
    verdict = judge_rooms(text, truth, truth.not_ready(), allowed=truth.class_soon())
    return Verdict(verdict.ok, f"{verdict.why}; no proposal")


def readiness(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
    """Readiness and "start any recording that should be running": the due recording is
    proposed by the model (never by the keyword answer)."""
    due = truth.due_recording()
    practice = {d.name for d in truth.sandbox if due is not None and d.id == due[0]}
    verdict = judge_rooms(text, truth, truth.not_ready(), allowed=truth.class_soon() | practice)
    if not verdict.ok:
        return verdict
    if who == "keyword" or due is None:
        return Verdict(not proposals, f"{verdict.why}; no proposal" if not proposals else "proposed")
    wanted = judge_proposal(
        proposals, "batch_recording", {"action": "start", "device_ids": [f"{due[0]}-{due[1]}"]}
    )
    return Verdict(wanted.ok, f"{verdict.why}; {wanted.why}")


def streams(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
    missing = [name for name in truth.endpoints if name not in text]
    if missing:
        return Verdict(False, f"destinations not named: {missing}")
    verdict = judge_rooms(text, truth, truth.streaming(), allowed=truth.streams_set_up())
    return Verdict(verdict.ok and not proposals, f"{len(truth.endpoints)} destinations; {verdict.why}")


def writable(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
    if who == "keyword":
        verdict = judge_no_proposal(text, proposals, [("read-only", "solo lectura")[_es(text)]])
        named = judge_rooms(text, truth, set())
        return verdict if not verdict.ok else named
    names = {d.name for d in truth.sandbox}
    verdict = judge_rooms(text, truth, names)
    return Verdict(verdict.ok and not proposals, f"the {len(names)} sandbox rooms, no other; no proposal")


def change(room_name: str, tool: str, arguments: Callable[[Truth], dict[str, Any]]) -> Judge:
    def judge(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
        if who == "keyword":
            return judge_no_proposal(text, proposals, [("cannot propose", "no puede proponer")[_es(text)]])
        verdict = judge_proposal(proposals, tool, arguments(truth))
        if verdict.ok and room_name not in text:
            return Verdict(False, "the answer does not name the room")
        return verdict

    return judge


def read_only(room_name: str) -> Judge:
    def judge(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
        if who == "keyword":
            return judge_no_proposal(text, proposals, [("cannot propose", "no puede proponer")[_es(text)]])
        said = ("can be read but not changed", "se puede consultar, pero no cambiar")[_es(text)]
        return judge_no_proposal(text, proposals, [room_name, said])

    return judge


def nonsense(text: str, truth: Truth, proposals: Proposals, who: str) -> Verdict:
    must = [("only understands", "solo entiende")[_es(text)]]
    must += ["FLEETWATCH_ANTHROPIC_API_KEY"] if who == "demo" else []
    verdict = judge_no_proposal(text, proposals, must)
    return verdict if not verdict.ok else judge_rooms(text, truth, set())


def _es(text: str) -> bool:
    return any(word in text for word in ("salas", "Revisé", "palabras clave", "solo entiende", "propuse"))


@dataclass(frozen=True)
class Question:
    language: str
    kind: str
    text: str
    judge: Judge


def _sandbox_id(name: str) -> Callable[[Truth], str]:
    return lambda truth: truth.device(name).id


QUESTIONS = (
    Question("en", "offline", "Which rooms are offline?", rooms(Truth.offline)),
    Question("en", "recording", "Which rooms are recording right now?", rooms(Truth.recording)),
    Question("en", "temperature", "Is any room running hot?", rooms(Truth.hot)),
    Question("en", "firmware", "Which rooms have outdated firmware?", rooms(Truth.firmware_behind)),
    Question("en", "readiness", "Which rooms need attention before their next class?", readiness_only),
    Question("en", "named room", "How is SCI 101?", room("SCI 101 Lecture Hall", "en")),
    Question("en", "stream destinations", "What are our stream destinations?", streams),
    Question("en", "what may be changed", "Which rooms can you change?", writable),
    Question(
        "en",
        "change, writable room",
        "Start recording in Sandbox Pearl-2.",
        change(
            "Sandbox Pearl-2",
            "batch_recording",
            lambda t: {"action": "start", "device_ids": [f"{t.device('Sandbox Pearl-2').id}-1"]},
        ),
    ),
    Question("en", "change, not writable", "Reboot ENG 105.", read_only("ENG 105")),
    Question("es", "recording", "¿Qué salas están grabando ahora?", rooms(Truth.recording)),
    Question("es", "offline", "¿Qué equipos están desconectados?", rooms(Truth.offline)),
    Question("es", "disk", "¿Qué salas tienen poco espacio en disco?", rooms(Truth.short_of_storage)),
    Question("es", "signal", "¿Qué canales no tienen señal?", rooms(Truth.dark)),
    Question("es", "next class", "¿Cuáles son las próximas clases?", rooms(Truth.with_class)),
    Question("es", "named room", "¿Cómo está el Aula Magna?", room("Aula Magna", "es")),
    Question(
        "es",
        "readiness + change",
        "¿Qué salas necesitan atención antes de su próxima clase? Inicia cualquier grabación que deba estar en marcha.",
        readiness,
    ),
    Question(
        "es",
        "change, writable room",
        "Reinicia Sandbox Nano.",
        change("Sandbox Nano", "batch_reboot", lambda t: {"device_ids": [t.device("Sandbox Nano").id]}),
    ),
    Question("es", "change, not writable", "Empieza a grabar en el Aula Magna.", read_only("Aula Magna")),
    Question("es", "nonsense", "¿Cuál es tu color favorito?", nonsense),
)


async def _proposals(running: Backend) -> Proposals:
    return [(p["tool"], json.loads(p["arguments_json"])) for p in await running.proposals()]


async def ask(running: Backend, model: StandinHandle, question: Question, who: str) -> tuple[Answer, Verdict]:
    """One question to one answerer on a fresh lab and an empty queue, judged."""
    await running.clean()
    options: dict[str, Any] = {"model_client": None} if who == "keyword" else {}
    answer = await running.ask(model, "normal", question.text, **options)
    truth = Truth.of(running.lab)
    expected_by = "keyword" if who == "keyword" else "model"
    verdict = question.judge(answer.text, truth, await _proposals(running), who)
    if answer.answered_by != expected_by:
        verdict = Verdict(False, f"answered by {answer.answered_by}")
    return answer, verdict


def _short(text: str, limit: int = 150) -> str:
    flat = " / ".join(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("("))
    flat = flat.replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def run(full: Path | None) -> str:
    rows = [
        "| # | lang | question | demo model answered | judged | keyword answer answered | judged |",
        "|---|---|---|---|---|---|---|",
    ]
    details: list[str] = []
    score = {"demo": 0, "keyword": 0}
    with tempfile.TemporaryDirectory(prefix="fw-table-") as home:
        async with backend(Path(home)) as running, run_model_standin("demo") as model:
            for number, question in enumerate(QUESTIONS, 1):
                demo, demo_verdict = await ask(running, model, question, "demo")
                keyword, keyword_verdict = await ask(running, model, question, "keyword")
                score["demo"] += demo_verdict.ok
                score["keyword"] += keyword_verdict.ok
                lines = [p.text for p in demo.proposals] + [r.text for r in demo.refusals]
                rows.append(
                    f"| {number} | {question.language} | {question.text} ({question.kind}) | "
                    f"{_short(demo.text + ''.join(' ' + line for line in lines))} | {demo_verdict} | "
                    f"{_short(keyword.text)} | {keyword_verdict} |"
                )
                details += [
                    f"## {number}. {question.text} ({question.language}, {question.kind})",
                    "",
                    f"Demo model ({demo_verdict}):",
                    "",
                    *[f"    {line}" for line in [*demo.text.splitlines(), *lines]],
                    "",
                    f"Keyword answer ({keyword_verdict}):",
                    "",
                    *[f"    {line}" for line in keyword.text.splitlines()],
                    "",
                ]
    rows.append("")
    rows.append(
        f"Right: demo model {score['demo']}/{len(QUESTIONS)}, keyword answer {score['keyword']}/{len(QUESTIONS)}."
    )
    if full is not None:
        full.write_text("\n".join(details) + "\n")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.assistant.demo_table", description=__doc__)
    parser.add_argument("--full", type=Path, help="write every answer in full to this file")
    args = parser.parse_args()
    print(asyncio.run(run(args.full)))


if __name__ == "__main__":
    main()
