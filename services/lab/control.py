"""The lab's control endpoints, ``/_lab/*``, for tests and demos (loopback peers only).

    GET  /_lab/state    {"scenario", "url", "mcp_url", "teams": [{name, team_id, token,
                        device_ids}], "now", "settings": {anonymous, expose_team_id, older_shapes, shapes,
                        verbatim}}  (shapes: tool → named shape answered in; verbatim: team →
                        tools answered with a capture's unreadable answer as it was)
    GET  /_lab/writes   {"writes": [{seq, tool, arguments, team, at, result}], "rejected": [...]}
    GET|POST|DELETE /_lab/faults   list / add {"tool", "kind", "seconds"?, "count"?, "team"?, "after"?} /
                        clear -> {"faults": [...], "held": [{tool, team}]}
    POST /_lab/release  the calls waiting in a ``hold`` fault go on -> {"released": N}
    POST /_lab/clock    {"advance_seconds": N} or {"set": "<UTC ISO>"} -> {"now"}
    POST /_lab/reset    the scenario's first state; write log and faults cleared -> {"ok", "now"}
    POST /_lab/tokens   {"team", "ttl_seconds"?} -> {"token"} (a bearer token of lab time)
    GET|POST|DELETE /_lab/tools  list / change {"tool", "input_schema"?, "description"?} (what
                        ``tools/list`` shows from now on) / restore every tool -> {"changed":
                        {tool: {input_schema?, description?}}}

A refused request gets ``{"error": "<one line>"}`` with 400 (bad body) or 403 (not loopback).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from services.lab import LabError
from services.lab.faults import parse_fault
from services.lab.lab import Lab
from services.lab.oauth import is_loopback, loopback_refusal
from services.lab.scenario import TEAM_NAMES
from services.lab.tools import TOOL_NAMES


def _json_error(message: str, status: int = 400) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def control_routes(lab: Lab, base_url: str) -> list[Route]:
    """The ``/_lab/*`` routes for ``lab`` served at ``base_url`` (see the module docstring)."""

    def now_text() -> str:
        return lab.clock.now().isoformat().replace("+00:00", "Z")

    async def body(request: Request) -> dict[str, Any]:
        try:
            data = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            raise LabError(f"body is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise LabError("body must be a JSON object")
        return data

    async def state(request: Request) -> Response:
        settings = lab.settings
        return JSONResponse(
            {
                "scenario": lab.scenario.name,
                "url": base_url,
                "mcp_url": f"{base_url}/mcp",
                "teams": lab.teams_view(),
                "now": now_text(),
                "settings": {
                    "anonymous": settings.anonymous,
                    "expose_team_id": settings.expose_team_id,
                    "older_shapes": settings.older_shapes,
                    "shapes": settings.shape_map(),
                    "verbatim": {team: sorted(tools) for team, tools in settings.verbatim.items() if tools},
                },
            }
        )

    async def writes(request: Request) -> Response:
        return JSONResponse({"writes": lab.writes, "rejected": lab.rejected})

    async def faults(request: Request) -> Response:
        if request.method == "POST":
            lab.set_fault(parse_fault(await request.body(), TOOL_NAMES, frozenset(TEAM_NAMES)))
        elif request.method == "DELETE":
            lab.faults.clear()
        return JSONResponse({"faults": lab.faults.listing(), "held": list(lab.held)})

    async def release(request: Request) -> Response:
        return JSONResponse({"released": lab.release()})

    async def clock(request: Request) -> Response:
        data = await body(request)
        if isinstance(data.get("advance_seconds"), int | float) and not isinstance(
            data["advance_seconds"], bool
        ):
            lab.clock.advance(float(data["advance_seconds"]))
        elif isinstance(data.get("set"), str):
            try:
                when = datetime.fromisoformat(data["set"])
            except ValueError as exc:
                raise LabError(f"'set' is not an ISO time: {exc}") from exc
            if when.tzinfo is None:
                raise LabError("'set' needs a UTC offset (e.g. ...Z)")
            lab.clock.set(when)
        else:
            raise LabError('send {"advance_seconds": N} or {"set": "<UTC ISO>"}')
        return JSONResponse({"now": now_text()})

    async def reset(request: Request) -> Response:
        lab.reset()
        return JSONResponse({"ok": True, "now": now_text()})

    async def tokens(request: Request) -> Response:
        data = await body(request)
        ttl = data.get("ttl_seconds")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int | float)):
            raise LabError("'ttl_seconds' must be a number")
        try:
            token = lab.issue_token(str(data.get("team")), ttl)
        except ValueError as exc:
            raise LabError(str(exc)) from exc
        return JSONResponse({"token": token})

    async def tools(request: Request) -> Response:
        if request.method == "POST":
            try:
                lab.redefined.change(await body(request))
            except ValueError as exc:
                raise LabError(str(exc)) from exc
        elif request.method == "DELETE":
            lab.redefined.clear()
        return JSONResponse({"changed": lab.redefined.listing()})

    def guarded(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            if not is_loopback(request):
                return loopback_refusal()
            try:
                return await handler(request)
            except LabError as exc:
                return _json_error(exc.message)

        return endpoint

    return [
        Route("/_lab/state", guarded(state), methods=["GET"]),
        Route("/_lab/writes", guarded(writes), methods=["GET"]),
        Route("/_lab/faults", guarded(faults), methods=["GET", "POST", "DELETE"]),
        Route("/_lab/release", guarded(release), methods=["POST"]),
        Route("/_lab/clock", guarded(clock), methods=["POST"]),
        Route("/_lab/reset", guarded(reset), methods=["POST"]),
        Route("/_lab/tokens", guarded(tokens), methods=["POST"]),
        Route("/_lab/tools", guarded(tools), methods=["GET", "POST", "DELETE"]),
    ]
