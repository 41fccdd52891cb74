"""Named scripts for the model stand-in (`services.lab.model_standin`): ``demo``, ``refuse``
(always a refusal), ``echo`` (repeats the question).

``demo``: the main job of the demo. It reads the fleet the way a careful model would, finds a
room whose class starts soonest (within the hour if any) and that is online and not recording,
proposes ``batch_recording`` ``{"action": "start", "device_ids": ["<master>-<first channel>"]}``
through ``propose_change``, then answers with a short summary in the question's language.

It is team-agnostic: it picks from whatever team the assistant's read sign-in shows. A proposal
passes the executor's fence only for a room on the sandbox team, and the two teams never share a
device, so the demo's proposal can be approved only when the read sign-in is placed on the
sandbox team (with the campus lab: "Sandbox Nano", channel 1, next class in 300 min). Reading the
normal team it picks "ENG 101 Auditorium" (class in 25 min) and the fence refuses the proposal
(``target_not_in_sandbox``): nothing is stored, nothing runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from services.lab.model_scripts.api import ModelRequest, Reply, Script, Text, say
from services.lab.model_scripts.demo import choose_room, demo

__all__ = ["SCRIPTS", "choose_room", "demo", "echo", "refuse"]


def refuse(request: ModelRequest) -> Reply:
    """Always stops with a refusal."""
    return Reply((Text("I can't help with that."),), stop_reason="refusal")


def echo(request: ModelRequest) -> Reply:
    """Repeats the question."""
    return say(f"You asked: {request.question()[:200]}")


SCRIPTS: Mapping[str, Script] = MappingProxyType({"demo": demo, "refuse": refuse, "echo": echo})
"""The named scripts (``--script NAME``)."""
