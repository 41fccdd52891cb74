"""Named scripts for the model stand-in (`services.lab.model_standin`): ``demo`` (the demo
model), ``main_job`` (the demo's first, one-question script), ``refuse`` (always a refusal),
``echo`` (repeats the question).

``demo``: `demo_model`, a small model of its own that plays a real one honestly. From the
question and the tool results it is sent (inside the assistant's data blocks) it picks read
tools among those offered, reads, and answers in the question's language: offline rooms,
recording rooms, disk, temperature, firmware, signal, the next classes and readiness, one named
room, stream destinations, what may be changed. It proposes through ``propose_change`` only
when asked for a change in a room ``list_writable_devices`` lists (or for "any recording that
should be running": the one due next there), and says which rooms it may not change. A
readiness question alone is answered, not acted on. A question it cannot map gets the list of
what it understands.

``main_job``: whatever the question, read the fleet the way a careful model would, ask
``list_writable_devices`` which rooms a change may target, pick the one that is online, records
on no channel and whose class starts soonest within the hour, propose ``batch_recording``
``{"action": "start", "device_ids": ["<master>-<first channel>"]}`` and summarise.

With the campus lab both propose for "Sandbox Classroom" (29088800004, channel 1, a class 25
minutes after the lab starts) on the demo's question, and name the normal team's "ENG 101
Auditorium" (a class in 25 min, idle) as a room that can be read but not changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from services.lab.model_scripts.api import ModelRequest, Reply, Script, Text, say
from services.lab.model_scripts.demo_model import demo_model
from services.lab.model_scripts.main_job import choose_room, main_job

__all__ = ["SCRIPTS", "choose_room", "demo_model", "echo", "main_job", "refuse"]


def refuse(request: ModelRequest) -> Reply:
    """Always stops with a refusal."""
    return Reply((Text("I can't help with that."),), stop_reason="refusal")


def echo(request: ModelRequest) -> Reply:
    """Repeats the question."""
    return say(f"You asked: {request.question()[:200]}")


SCRIPTS: Mapping[str, Script] = MappingProxyType(
    {"demo": demo_model, "main_job": main_job, "refuse": refuse, "echo": echo}
)
"""The named scripts (``--script NAME``)."""
