"""The routes of the lab's Slack and Teams stand-ins and of ``/_lab/notices`` (see notices.py
for what each answers). Loopback peers only, like ``/_lab/*``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from services.lab.notices import (
    ADAPTIVE_CARD,
    DESTINATIONS,
    FAULT_KINDS,
    LAB_SLACK_BOT,
    SLACK_PATH,
    TEAMS_PATH,
    TEAMS_WEBHOOK_KEY,
    NoticeBoard,
    card_text,
)
from services.lab.oauth import is_loopback, loopback_refusal


def notice_routes(board: NoticeBoard, now_text: Callable[[], str]) -> list[Route]:
    """The stand-ins' routes and ``/_lab/notices`` (see the module docstring); `now_text` is
    the lab clock as UTC ISO text."""

    async def fault(destination: str) -> Response | None:
        board.attempts[destination] += 1
        kind = board.take_fault(destination)
        if kind == "hang":
            await anyio.sleep_forever()
        if kind == "error":
            return JSONResponse({"ok": False, "error": "internal_error"}, status_code=500)
        return None

    async def slack(request: Request) -> Response:
        method = request.path_params["method"]
        if method not in ("chat.postMessage", "chat.update"):
            return JSONResponse({"ok": False, "error": "unknown_method"})
        refused = await fault("slack")
        if refused is not None:
            return refused
        if request.headers.get("authorization", "") != f"Bearer {LAB_SLACK_BOT}":
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        raw = await request.body()
        try:
            if request.headers.get("content-type", "").startswith("application/json"):
                body = json.loads(raw or b"{}")
            else:
                body = {k: v[-1] for k, v in parse_qs(raw.decode("utf-8")).items()}
        except (ValueError, UnicodeDecodeError):
            return JSONResponse({"ok": False, "error": "invalid_json"})
        if not isinstance(body, dict):
            return JSONResponse({"ok": False, "error": "invalid_arguments"})
        channel, text = body.get("channel"), body.get("text")
        if not isinstance(channel, str) or not channel.strip():
            return JSONResponse({"ok": False, "error": "channel_not_found"})
        if not isinstance(text, str) and not body.get("blocks"):
            return JSONResponse({"ok": False, "error": "no_text"})
        at = now_text()
        if method == "chat.update":
            ts = body.get("ts")
            if not isinstance(ts, str) or not board.edit(ts, text if isinstance(text, str) else "", at, body):
                return JSONResponse({"ok": False, "error": "message_not_found"})
            return JSONResponse({"ok": True, "channel": "C0LABDEMO", "ts": ts, "text": text})
        ts = board.add("slack", text if isinstance(text, str) else "", at, body, channel=channel)["ts"]
        return JSONResponse(
            {"ok": True, "channel": "C0LABDEMO", "ts": ts, "message": {"text": text, "ts": ts}}
        )

    async def teams(request: Request) -> Response:
        if request.path_params["key"] != TEAMS_WEBHOOK_KEY:
            return JSONResponse({"error": "no such webhook"}, status_code=404)
        refused = await fault("teams")
        if refused is not None:
            return refused
        try:
            body = json.loads(await request.body() or b"null")
            card = body["attachments"][0]
            if card["contentType"] != ADAPTIVE_CARD or card["content"]["type"] != "AdaptiveCard":
                raise ValueError("not an Adaptive Card")
        except (ValueError, KeyError, IndexError, TypeError):
            return JSONResponse(
                {"error": "expected a message with an Adaptive Card attachment"}, status_code=400
            )
        board.add("teams", card_text(card["content"]), now_text(), body)
        return Response(status_code=202)

    async def listing(request: Request) -> Response:
        if request.method == "DELETE":
            board.clear()
        return JSONResponse({"notices": board.notices, "attempts": board.attempts})

    async def set_fault(request: Request) -> Response:
        try:
            data = json.loads(await request.body() or b"{}")
            destination, kind, count = data["destination"], data["kind"], int(data.get("count", 1))
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'send {"destination", "kind", "count"}'}, status_code=400)
        if destination not in DESTINATIONS or kind not in FAULT_KINDS or count < 1:
            return JSONResponse(
                {"error": f"destination in {DESTINATIONS}, kind in {FAULT_KINDS}, count >= 1"},
                status_code=400,
            )
        board.faults[destination] = (kind, count)
        return JSONResponse({"faults": {d: {"kind": k, "count": c} for d, (k, c) in board.faults.items()}})

    def guarded(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            if not is_loopback(request):
                return loopback_refusal()
            return await handler(request)

        return endpoint

    return [
        Route(SLACK_PATH + "{method}", guarded(slack), methods=["POST"]),
        Route(TEAMS_PATH + "{key}", guarded(teams), methods=["POST"]),
        Route("/_lab/notices", guarded(listing), methods=["GET", "DELETE"]),
        Route("/_lab/notices/faults", guarded(set_fault), methods=["POST"]),
    ]
