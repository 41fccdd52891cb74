"""The lab: a simulated Epiphan Edge MCP server for demos and tests.

It speaks the real MCP (the SDK's low-level server over streamable HTTP on 127.0.0.1), serves
the 35 tools of ``EPIPHAN.md`` with the shapes the real server sends, signs people in with real
OAuth endpoints, and keeps two teams (``normal`` and ``sandbox``) apart by token.

Layers (each may import only the ones above it)::

    faults.py  notices.py
                 the fault table (latency, error, in-band 401, dropped response, bad JSON, drift)
                 | what the Slack and Teams stand-ins received (the notice board)
    scenario.py  frozen scenario data loaded from YAML (with the faults it sets), and the fleet
                 generator
    state.py     the simulated world and its clock (devices, channels, events, streams)
    shapes.py    the world rendered in the real result shapes: every named shape of
                 `shared.epiphan.fleet_shapes` for the tools Fleetwatch parses (``--shape``)
    capture_scenario.py  a ``fleetwatch capture`` folder as a scenario (its shapes, its times)
    schemas.py   the tools' JSON input and output schemas and the ID patterns
    calls.py     what a tool handler gets (`Call`) and may raise
    reads.py  writes.py
                 the 20 read tools | the 15 write tools
    tools.py     the registry: name, schemas, read/write, handler
    lab.py       the simulator's root: tokens, calls, the write log
    oauth.py     the OAuth authorization server and the page where a person picks the team
    control.py  standins.py
                 the ``/_lab/*`` endpoints (state, write log, faults, clock, reset, tokens, tools)
                 | the Slack Web API and Teams webhook stand-ins, ``/_lab/notices``
    server.py    the ASGI app, serving it, ``run_lab``/``LabHandle`` for tests
    __main__.py  the command line (``python -m services.lab``, ``fleetwatch lab``)

Apart from the simulator, the model behind the real Anthropic SDK in demos and tests (each may
import only the ones above it)::

    model_scripts/    the scripted models (the demo model: a test double with its own words)
    model_standin.py  the Messages API stand-in that serves a script, as one of six server
                      profiles (Anthropic, Ollama, llama.cpp, vLLM, SGLang, LiteLLM)

What it may import of the product (an allow-list, the import contract ``lab-serves-only`` in
``pyproject.toml``): `shared.errors`, `shared.web.local_http` (the stand-in's loopback server),
the capture folder's format (`shared.epiphan.capture`, for a replayed capture) and the pure
readers of the shapes the lab serves (a replayed capture, the scripted demo model):
`shared.epiphan.fleet`, `shared.epiphan.attention`. Never the product's words (`shared.text`):
the demo model is a test double with scripted sentences of its own. Nothing that
holds a sign-in, a store, a socket, a setting or the policy, and no other service. The lab's
shapes are written apart from `shared.epiphan.fleet_shapes`; tests hold the two together.

The lab holds no real secret and talks to nobody: it listens on loopback only, and
``/_lab/*`` and the team-picking page answer loopback peers only.

Errors: `LabError` and `scenario.ScenarioError` (the tree is drawn in `shared.errors`).
"""

from __future__ import annotations

from shared.errors import Code, FleetwatchError


class LabError(FleetwatchError):
    """The lab was given something it cannot run (a bad setting, fault or argument)."""

    def __init__(self, message: str) -> None:
        super().__init__(Code.CONFIG_INVALID, message)
