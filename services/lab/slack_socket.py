"""The lab's Slack Socket Mode stand-in: the Web API methods an app asked from Slack calls, a
websocket that sends envelopes as Slack does, and control endpoints (state: slack_board.py).

    POST /slack/api/apps.connections.open   app-level token (`LAB_SLACK_APP`) -> {"ok", "url"}: a
                                            websocket on the lab (a bot token: ``not_allowed_token_type``;
                                            `LAB_SLACK_APP_WITHOUT_SCOPE`: ``missing_scope``)
    GET|POST /slack/api/users.info          {"user": {"id", "team_id", "locale"}} (bot token)
    GET|POST /slack/api/usergroups.users.list   {"users": [...]} (a fault: ``missing_scope``)
    POST /slack/api/conversations.open      {"channel": {"id": "D…"}}: the DM with a member
    POST /slack/api/chat.postEphemeral      a notice, ``ephemeral`` true, for ``user``
    POST /_lab/slack/response/<n>           a slash command's ``response_url``: a notice
    POST /_lab/slack/ask                    {"user", "channel", "text", "team"?, "kind"?, "event_id"?,
                                            "envelope_id"?}: the envelope is sent on the newest open
                                            connection; answers once it is acked or after 3 s:
                                            {"envelope_id", "event_id", "kind", "acked", "ack_ms"}
                                            (409 when no app is connected)
    POST /_lab/slack/disconnect             a ``disconnect`` envelope on every open connection
    POST /_lab/slack/stall                  every open connection goes silent (no pong, nothing)
    POST /_lab/slack/faults                 {"usergroup_fails"?: bool, "not_in_channel"?: [IDs]}
    GET  /_lab/slack                        {"opened", "connections", "envelopes", "socket_url"}

The replies (``chat.postMessage`` in a thread, ``chat.postEphemeral``, a ``response_url``) are
notices in ``GET /_lab/notices`` (notices.py), with their ``thread``. The websocket is served by
aiohttp on its own loopback port (`serving_socket`): unlike the lab's ASGI server it can leave a
ping unanswered, which is what a stalled connection does. Loopback peers only, like ``/_lab/*``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from aiohttp import WSMsgType, web
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from services.lab.notices import LAB_SLACK_BOT, SLACK_PATH, NoticeBoard
from services.lab.oauth import loopback_only
from services.lab.slack_board import (
    LAB_SLACK_APP,
    LAB_SLACK_APP_WITHOUT_SCOPE,
    LAB_SLACK_TEAM,
    LAB_SLACK_USERGROUP,
    LAB_SLACK_USERGROUP_MEMBERS,
    LAB_SLACK_USERS,
    Connection,
    SlackAskBoard,
    envelope_for,
)

SOCKET_PATH = "/_lab/slack/socket"


async def _arguments(request: Request) -> dict[str, Any]:
    """A Web API call's arguments: the query, then a form or JSON body."""
    args: dict[str, Any] = dict(request.query_params)
    raw = await request.body()
    if not raw:
        return args
    if request.headers.get("content-type", "").startswith("application/json"):
        with contextlib.suppress(ValueError):
            body = json.loads(raw)
            if isinstance(body, dict):
                args |= body
        return args
    with contextlib.suppress(UnicodeDecodeError):
        args |= {k: v[-1] for k, v in parse_qs(raw.decode("utf-8")).items()}
    return args


def _token(request: Request) -> str:
    return request.headers.get("authorization", "").removeprefix("Bearer ")


def slack_socket_routes(
    board: SlackAskBoard, notices: NoticeBoard, base_url: str, now_text: Callable[[], str]
) -> list[Route]:
    """The stand-in's routes (see the module docstring)."""
    responses: dict[str, dict[str, Any]] = {}

    def fail(error: str, **extra: Any) -> Response:
        return JSONResponse({"ok": False, "error": error, **extra})

    async def connections_open(request: Request) -> Response:
        token = _token(request)
        if token.startswith(("xoxb-", "xoxp-")):
            return fail("not_allowed_token_type")
        if token == LAB_SLACK_APP_WITHOUT_SCOPE:
            return fail("missing_scope", needed="connections:write", provided="")
        if token != LAB_SLACK_APP:
            return fail("invalid_auth")
        if not board.socket_url:
            return fail("internal_error")
        return JSONResponse({"ok": True, "url": f"{board.socket_url}?ticket=lab-{board.next_number()}"})

    def bot_call(handler: Callable[[dict[str, Any]], Response]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            if _token(request) != LAB_SLACK_BOT:
                return fail("invalid_auth")
            return handler(await _arguments(request))

        return endpoint

    def users_info(args: dict[str, Any]) -> Response:
        user = str(args.get("user", ""))
        if user not in LAB_SLACK_USERS:
            return fail("user_not_found")
        locale = (
            {"locale": LAB_SLACK_USERS[user]}
            if str(args.get("include_locale")) in ("true", "1", "True")
            else {}
        )
        return JSONResponse(
            {"ok": True, "user": {"id": user, "team_id": LAB_SLACK_TEAM, "name": user.lower(), **locale}}
        )

    def usergroup_users(args: dict[str, Any]) -> Response:
        if board.usergroup_fails:
            return fail("missing_scope", needed="usergroups:read")
        if args.get("usergroup") != LAB_SLACK_USERGROUP:
            return fail("no_such_subteam")
        return JSONResponse({"ok": True, "users": list(LAB_SLACK_USERGROUP_MEMBERS)})

    def conversations_open(args: dict[str, Any]) -> Response:
        user = str(args.get("users", ""))
        if user not in LAB_SLACK_USERS:
            return fail("user_not_found")
        return JSONResponse({"ok": True, "channel": {"id": "D" + user[1:]}})

    def post_ephemeral(args: dict[str, Any]) -> Response:
        channel, user, text = args.get("channel"), args.get("user"), args.get("text")
        if not isinstance(channel, str) or not isinstance(user, str) or not isinstance(text, str):
            return fail("invalid_arguments")
        if channel in notices.not_in_channel:
            return fail("not_in_channel")
        notices.add("slack", text, now_text(), args, channel=channel, ephemeral=True, user=user)
        return JSONResponse({"ok": True, "message_ts": f"{len(notices.notices)}.000200"})

    async def response_url(request: Request) -> Response:
        sent = responses.get(request.path_params["number"])
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"error": "invalid_json"}, status_code=400)
        if sent is None or not isinstance(body, dict) or not isinstance(body.get("text"), str):
            return JSONResponse({"error": "no such response_url, or no text"}, status_code=404)
        ephemeral = body.get("response_type", "ephemeral") == "ephemeral"
        notices.add(
            "slack",
            body["text"],
            now_text(),
            body,
            channel=sent["channel"],
            ephemeral=ephemeral,
            user=sent["user"],
        )
        return Response("ok")

    async def ask(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
            if not all(isinstance(body.get(k), str) and body[k] for k in ("user", "channel", "text")):
                raise ValueError
        except (ValueError, AttributeError):
            return JSONResponse({"error": 'send {"user", "channel", "text", "team"?}'}, status_code=400)
        connection = board.live()
        if connection is None:
            return JSONResponse({"error": "no Socket Mode client is connected"}, status_code=409)
        number = board.next_number()
        envelope = envelope_for(body, number, f"{base_url}/_lab/slack/response/{number}")
        if isinstance(body.get("envelope_id"), str):
            envelope["envelope_id"] = body["envelope_id"]
        envelope_id = envelope["envelope_id"]
        record: dict[str, Any] = {
            "envelope_id": envelope_id,
            "event_id": envelope["payload"].get("event_id"),
            "kind": "slash" if envelope["type"] == "slash_commands" else envelope["payload"]["event"]["type"],
            "user": body["user"],
            "channel": body["channel"],
            "acked": None,
            "ack_ms": None,
        }
        responses[str(number)] = record
        board.envelopes.append(record)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        board.acks[envelope_id] = future
        started = time.monotonic()
        try:
            await connection.socket.send_json(envelope)
            async with asyncio.timeout(board.ack_seconds):
                ack = await future
            record |= {"acked": True, "ack_ms": round((time.monotonic() - started) * 1000, 1)}
            if "payload" in ack:
                record["ack_payload"] = ack["payload"]
        except (TimeoutError, ConnectionError):
            record["acked"] = False
        finally:
            board.acks.pop(envelope_id, None)
            board.signal()
        return JSONResponse(record)

    async def disconnect(request: Request) -> Response:
        sent = 0
        for connection in list(board.connections):
            if not connection.stalled:
                with contextlib.suppress(ConnectionError):
                    await connection.socket.send_json(
                        {"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "lab"}}
                    )
                    sent += 1
        return JSONResponse({"disconnects": sent})

    async def stall(request: Request) -> Response:
        for connection in board.connections:
            connection.stalled = True
        board.signal()
        return JSONResponse({"stalled": len(board.connections)})

    async def faults(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
            fails, channels = body.get("usergroup_fails"), body.get("not_in_channel")
            if fails is not None and not isinstance(fails, bool):
                raise ValueError
            if channels is not None and not (
                isinstance(channels, list) and all(isinstance(c, str) for c in channels)
            ):
                raise ValueError
        except (ValueError, AttributeError):
            return JSONResponse(
                {"error": 'send {"usergroup_fails"?: bool, "not_in_channel"?: [IDs]}'}, status_code=400
            )
        if fails is not None:
            board.usergroup_fails = fails
        if channels is not None:
            notices.not_in_channel.clear()
            notices.not_in_channel.update(channels)
        return JSONResponse(
            {"usergroup_fails": board.usergroup_fails, "not_in_channel": sorted(notices.not_in_channel)}
        )

    async def view(request: Request) -> Response:
        return JSONResponse(board.view())

    guarded = loopback_only
    api = SLACK_PATH
    return [
        Route(api + "apps.connections.open", guarded(connections_open), methods=["POST"]),
        Route(api + "users.info", guarded(bot_call(users_info)), methods=["GET", "POST"]),
        Route(api + "usergroups.users.list", guarded(bot_call(usergroup_users)), methods=["GET", "POST"]),
        Route(api + "conversations.open", guarded(bot_call(conversations_open)), methods=["POST"]),
        Route(api + "chat.postEphemeral", guarded(bot_call(post_ephemeral)), methods=["POST"]),
        Route("/_lab/slack/response/{number}", guarded(response_url), methods=["POST"]),
        Route("/_lab/slack/ask", guarded(ask), methods=["POST"]),
        Route("/_lab/slack/disconnect", guarded(disconnect), methods=["POST"]),
        Route("/_lab/slack/stall", guarded(stall), methods=["POST"]),
        Route("/_lab/slack/faults", guarded(faults), methods=["POST"]),
        Route("/_lab/slack", guarded(view), methods=["GET"]),
    ]


async def _socket(board: SlackAskBoard, request: web.Request) -> web.StreamResponse:
    """One Socket Mode connection: ``hello``, then acks in and pongs out until it is stalled."""
    socket = web.WebSocketResponse(autoping=False)
    await socket.prepare(request)
    connection = Connection(board.next_number(), socket)
    board.connections.append(connection)
    board.opened += 1
    board.signal()
    try:
        await socket.send_json(
            {
                "type": "hello",
                "num_connections": len(board.connections),
                "connection_info": {"app_id": "A0LABDEMO"},
            }
        )
        async for message in socket:
            if connection.stalled:
                continue
            if message.type == WSMsgType.PING:
                await socket.pong(message.data)
            elif message.type == WSMsgType.TEXT:
                _acked(board, message.data)
    finally:
        board.connections.remove(connection)
        board.signal()
    return socket


def _acked(board: SlackAskBoard, raw: str) -> None:
    with contextlib.suppress(ValueError):
        data = json.loads(raw)
        future = board.acks.get(data.get("envelope_id")) if isinstance(data, Mapping) else None
        if future is not None and not future.done():
            future.set_result(dict(data))


@contextlib.asynccontextmanager
async def serving_socket(board: SlackAskBoard) -> AsyncIterator[str]:
    """Serve the Socket Mode websocket on a free loopback port for the block; yields (and sets
    ``board.socket_url``) its ``ws://`` address. Open connections are closed at the end."""
    app = web.Application()

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.remote not in ("127.0.0.1", "::1"):
            raise web.HTTPForbidden()
        return await _socket(board, request)

    app.router.add_get(SOCKET_PATH, handler)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        board.socket_url = f"ws://{host}:{port}{SOCKET_PATH}"
        yield board.socket_url
    finally:
        for connection in list(board.connections):
            with contextlib.suppress(ConnectionError):
                await connection.socket.close()
        board.socket_url = ""
        await runner.cleanup()
