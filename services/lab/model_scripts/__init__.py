"""Named scripts for the model stand-in (`services.lab.model_standin`).

``demo``: the main job of the demo. It reads the fleet the way a careful model would, finds a
room whose class starts soonest (within the hour if any) and that is online and not recording,
proposes ``batch_recording`` ``{"action": "start", "device_ids": ["<master>-<first channel>"]}``
through ``propose_change``, then answers with a short summary in the question's language.

It is team-agnostic: it picks from whatever team the assistant's read sign-in shows. A proposal
passes the executor's fence only for a room on the sandbox team, so the demo proposes something
that can be approved only when the read sign-in sees the sandbox team's rooms (see the report
of issue 5); with the normal team it shows the fence refusing (``target_not_in_sandbox``).
"""

from __future__ import annotations

from services.lab.model_scripts.demo import choose_room, demo

__all__ = ["choose_room", "demo"]
