"""Named scripts for the model stand-in (`services.lab.model_standin`): ``demo`` (the demo
model), ``refuse`` (always a refusal), ``echo`` (repeats the question), ``obey_words`` (writes
what hostile names tell it to: the product's headings, fake proposal lines, every line
separator, the names it read; `obeying_words`).

``demo``: `demo_model`, a test double with scripted answers: from the question (a few patterns
of its own, `demo_words`) and the tool results it is sent (inside the assistant's data blocks)
it picks read tools among those offered, reads, and answers in the question's language with one
line per room the topic selects. It proposes through ``propose_change`` only when asked for a
change in a room ``list_writable_devices`` lists (or for "any recording that should be
running": the one due next there). It imports nothing of the product's words (`shared.text`).

With the campus lab it proposes for "Sandbox Classroom" (29088800004, channel 1, a class 25
minutes after the lab starts) on the demo's question, and names the normal team's rooms with a
class within the hour as rooms that can be read but not changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from services.lab.model_scripts.api import ModelRequest, Reply, Script, Text, say
from services.lab.model_scripts.demo_model import demo_model
from services.lab.model_scripts.obeying_words import obey_words

__all__ = ["SCRIPTS", "demo_model", "echo", "obey_words", "refuse"]


def refuse(request: ModelRequest) -> Reply:
    """Always stops with a refusal."""
    return Reply((Text("I can't help with that."),), stop_reason="refusal")


def echo(request: ModelRequest) -> Reply:
    """Repeats the question."""
    return say(f"You asked: {request.question()[:200]}")


SCRIPTS: Mapping[str, Script] = MappingProxyType(
    {"demo": demo_model, "refuse": refuse, "echo": echo, "obey_words": obey_words}
)
"""The named scripts (``--script NAME``)."""
