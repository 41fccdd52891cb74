"""The demo asked again, denied, paused, stopped and started again, as a newcomer would, under
real supervisord (``fleetwatch demo``; the lab's demo model behind the real SDK):

- asking the demo's question twice queues one proposal, and the second answer names it;
- three denials pause that change for the room: ``ask`` says why no card was made in words
  (``--json`` has the code), ``status`` and ``doctor`` show the pause with the room and the
  command that lifts it (``resume --denials TOOL ROOM`` is run in
  ``tests/ctl/test_commands_admin_socket.py``);
- ``doctor`` says the running assistant answers with the lab's demo model, though this shell
  sets no model key;
- after ``down``, a new ``demo`` starts from a clean queue (the pause left by the first is
  lifted, said and audited) and makes its card.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.ctl.commands_up import DEMO_QUESTION
from shared.text.change_words import SNAKE_CASE
from tests.e2e.demo import demo_env, fleetwatch

__all__ = ["demo_env"]  # the fixture

CLASSROOM = "29088800004"
"""The campus sandbox team's "Sandbox Classroom", the room the demo's question makes a card for."""


def run(env: dict[str, str], *args: str) -> str:
    done = fleetwatch(env, *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def ask_json(env: dict[str, str], question: str) -> dict[str, Any]:
    return json.loads(run(env, "ask", question, "--json"))


def pending(env: dict[str, str]) -> list[dict[str, Any]]:
    return json.loads(run(env, "pending", "list", "--json"))["items"]


def deny_more(env: dict[str, str], times: int) -> None:
    """`times` proposals of the demo's change, each denied by a person."""
    for _ in range(times):
        answer = ask_json(env, DEMO_QUESTION)
        assert len(answer["proposals"]) == 1, json.dumps(answer, indent=1)
        (line,) = answer["proposals"]
        assert line["state"] == "waiting_for_approval", answer
        run(env, "deny", line["proposal_id"])


@pytest.mark.timeout(420)  # two whole demos under supervisord, each stopped by ``down``
def test_the_demo_asked_twice_denied_paused_lifted_and_run_again_after_down(demo_env):
    env = demo_env
    first = run(env, "demo")
    assert "waiting for approval" in first and "Next: open http://127.0.0.1:" in first, first
    (card,) = pending(env)

    again = ask_json(env, DEMO_QUESTION)
    assert [(p["proposal_id"], p["state"]) for p in again["proposals"]] == [
        (card["proposal_id"], "already_waiting")
    ]
    assert again["answered_by"] == "demo_model" and again["refusals"] == []
    assert "already waiting for a person on the approval page" in again["text"]
    assert [p["proposal_id"] for p in pending(env)] == [card["proposal_id"]]

    model = {c["name"]: c for c in json.loads(run(env, "doctor", "--json"))["checks"]}["model"]
    assert "the lab's demo model" in model["message"] and "nothing leaves this machine" in model["message"]

    run(env, "deny", card["proposal_id"])
    deny_more(env, 2)
    paused = ask_json(env, DEMO_QUESTION)
    assert paused["proposals"] == [] and [r["code"] for r in paused["refusals"]] == ["denial_pause"]
    for text in [paused["text"], *(r["text"] for r in paused["refusals"])]:
        assert SNAKE_CASE.findall(text) == [], text
    assert paused["refusals"][0]["text"].startswith("Not proposed: start recording in “Sandbox Classroom”: ")

    status = run(env, "status")
    assert (
        f"Paused:       start or stop recording in “Sandbox Classroom” ({CLASSROOM}) is paused until "
        in status
    )
    assert f"fleetwatch resume --denials batch_recording {CLASSROOM}" in status  # after FLEETWATCH_HOME=...
    checks = json.loads(run(env, "doctor", "--json"))["checks"]
    assert [c["level"] for c in checks if c["name"] == "denial pause"] == ["WARN"]

    run(env, "down")

    second = run(env, "demo")
    assert "Lifted a denial pause left from an earlier demo: start or stop recording" in second, second
    assert "waiting for approval" in second and "No card was made" not in second
    (new_card,) = pending(env)
    assert new_card["proposal_id"] != card["proposal_id"] and new_card["targets"] == [CLASSROOM]
    rows = json.loads(run(env, "audit", "tail", "-n", "100", "--json"))["rows"]
    (lift,) = [r for r in rows if r["kind"] == "denial_lift"]
    assert (lift["actor"].split(":")[0], lift["detail"]["tool"], lift["detail"]["target"]) == (
        "demo",
        "batch_recording",
        CLASSROOM,
    )
