"""Named scripts for the model stand-in (`services.lab.model_standin`): ``demo``, ``refuse``
(always a refusal), ``echo`` (repeats the question).

``demo``: the main job of the demo. It reads the fleet the way a careful model would (the read
sign-in's team and its next classes, for the operator's picture), then asks
``list_writable_devices`` which rooms a change may target (the sandbox team, read afresh by the
executor through the sandbox sign-in), picks the one that is online, records on no channel and
whose class starts soonest within the hour, proposes ``batch_recording``
``{"action": "start", "device_ids": ["<master>-<first channel>"]}`` through ``propose_change``,
and answers with a short summary in the question's language. When no writable room qualifies
it says so and proposes nothing: the other rooms can be read but not changed.

With the campus lab that room is "Sandbox Classroom" (29088800004, channel 1, a class 25 minutes
after the lab starts); the normal team's "ENG 101 Auditorium" (a class in 25 min, idle) is named
in the summary as a room that can be read but not changed.
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
