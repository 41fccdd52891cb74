"""Sign-in: getting, checking, refreshing and giving back the two Epiphan sign-ins.

There are two sign-ins, each in its own slot (`shared.epiphan.slots`): the **read** sign-in (the
assistant's; ``fleetwatch login``) and the **sandbox** sign-in (the executor's only;
``fleetwatch login --sandbox``). The fence rests on them seeing different devices, so a new
sandbox sign-in is refused, and forgotten (revoked at the server when it offers revocation,
never stored), when it sees no device or any device the read sign-in sees (`store_sign_in`).

- `oauth_sign_in`: the MCP OAuth flow (`shared.epiphan.signin_oauth`) with the browser coming back to a
  loopback listener (`shared.epiphan.signin_callback`) or, on a headless box, a pasted redirect URL.
- `static_sign_in`: a bearer token read from a file (headless hosts without a browser).
- `fresh_sign_in`: the slot's sign-in, refreshed first when its access token is (nearly)
  expired (the slot's ``expires_at``, on this machine's clock). `refresh_refused`: refreshed
  now because Epiphan refused the token in-band although that clock said it was valid. Refresh tokens rotate, so refreshing holds the slot's inter-process lock: one process
  refreshes, the others wait, re-read the slot and use the new token. A refresh refused with
  400/401 marks the slot **dead** (``sign_in_dead``; sign in again); a 5xx or a network error
  does not (``refresh_failed``).
- `logout`: revoke at the server when it offers revocation, then delete the slot.

Errors: `SignInError` (see `shared.epiphan.signin_oauth`), `shared.epiphan.slots.SlotError`, and
`shared.epiphan.read_client.EpiphanError` when the device list cannot be read.
"""

from __future__ import annotations

import asyncio
import stat
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2
import msgspec
from mcp.shared.auth import OAuthToken

from shared.config import Settings
from shared.epiphan.fleet import parse_devices
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.epiphan.signin_callback import LoopbackCallback, paste_redirect_uri
from shared.epiphan.signin_oauth import (
    AuthServer,
    SignInError,
    authorization_request,
    client_metadata,
    code_from_redirect,
    discover,
    exchange_code,
    http_client,
    refresh_tokens,
    register,
    revoke_token,
)
from shared.epiphan.slots import SignIn, SlotError, locked_slot, read_slot, remove_slot, write_slot
from shared.errors import N_, Code, FleetwatchError
from shared.policy.definitions import ToolReport

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy

__all__ = [
    "LoginReport",
    "LogoutReport",
    "ShowUrl",
    "SignInError",
    "TeamView",
    "fresh_sign_in",
    "logout",
    "needs_refresh",
    "refresh_refused",
    "oauth_sign_in",
    "separation_problem",
    "static_sign_in",
    "store_sign_in",
    "team_view",
]

REFRESH_MARGIN_SECONDS = 60.0
"""Refresh an access token this many seconds before its ``expires_at``."""
SIGN_IN_TIMEOUT_SECONDS = 600.0
"""How long `oauth_sign_in` waits for the person to finish in the browser."""
DEVICE_READ_TIMEOUT_SECONDS = 30.0

ShowUrl = Callable[[str], Awaitable[None]]
ReadLine = Callable[[], Awaitable[str]]


@dataclass(frozen=True)
class TeamView:
    """What one sign-in sees: its team ID (when Epiphan sends one) and its master IDs; with
    pins, Epiphan's tool list against the reviewed policy (`shared.policy.definitions`)."""

    team_id: str | None
    device_ids: frozenset[str]
    tools: ToolReport | None = None


@dataclass(frozen=True)
class LoginReport:
    """A stored sign-in: which slot, what it sees, when its access token ends (epoch s)."""

    slot: Path
    kind: str
    team_id: str | None
    device_count: int
    expires_at: float | None
    tools_changed: tuple[str, ...] = ()
    """The tools whose definition at Epiphan is not the reviewed one, as seen at sign-in
    (``tool: what differs``, English): reported, never a reason to refuse the sign-in."""


@dataclass(frozen=True)
class LogoutReport:
    """``removed``: there was a slot and it is gone. ``revoked``: the server confirmed the
    revocation (True), did not (False), or offers none / nothing to revoke (None)."""

    slot: Path
    removed: bool
    revoked: bool | None


# --- getting a sign-in --------------------------------------------------------------------


def _sign_in_of(token: OAuthToken, auth: AuthServer, client_id: str, now: float) -> SignIn:
    return SignIn(
        access_token=token.access_token,
        server=auth.server_url,
        refresh_token=token.refresh_token,
        expires_at=None if token.expires_in is None else now + token.expires_in,
        kind="oauth",
        client_id=client_id,
        token_endpoint=auth.token_endpoint,
        revocation_endpoint=auth.revocation_endpoint,
        issuer=auth.issuer,
        resource=auth.resource,
        scope=token.scope,
    )


async def oauth_sign_in(
    server_url: str,
    *,
    show_url: ShowUrl,
    http: httpx2.AsyncClient,
    paste: ReadLine | None = None,
    timeout_seconds: float = SIGN_IN_TIMEOUT_SECONDS,
) -> SignIn:
    """Run the MCP OAuth flow against `server_url` and return the new sign-in (not stored).

    `show_url` is given the authorize URL (print it, open a browser). Without `paste`, the
    browser comes back to a loopback listener on 127.0.0.1; with it, `paste()` returns the
    redirect URL the person copied from the browser's address bar.

    Raises:
        SignInError: ``sign_in_failed`` for any failed step, or when nobody finished within
            `timeout_seconds`.
    """
    auth = await discover(http, server_url)
    try:
        if paste is None:
            async with LoopbackCallback() as callback:
                metadata = client_metadata(callback.redirect_uri, auth)
                client = await register(http, auth, metadata)
                request = authorization_request(auth, client, metadata)
                await show_url(request.url)
                redirect = await callback.wait(request.state, timeout_seconds)
        else:
            metadata = client_metadata(paste_redirect_uri(), auth)
            client = await register(http, auth, metadata)
            request = authorization_request(auth, client, metadata)
            await show_url(request.url)
            async with asyncio.timeout(timeout_seconds):
                redirect = await paste()
    except TimeoutError as exc:
        raise SignInError.said(
            Code.SIGN_IN_FAILED,
            N_("nobody finished the sign-in page within %(seconds)s s"),
            seconds=f"{timeout_seconds:.0f}",
        ) from exc
    code = code_from_redirect(redirect, request, auth)
    token = await exchange_code(http, auth, client, request, code)
    return _sign_in_of(token, auth, client.client_id, time.time())


def static_sign_in(token_file: Path, server_url: str) -> SignIn:
    """A sign-in from a file holding a bearer token (first line). It cannot refresh.

    Raises:
        SignInError: ``sign_in_failed`` when the file cannot be read, is empty, or can be read
            by group or others (a token lying around readable is already leaked).
    """
    try:
        info = token_file.stat()
        text = token_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise SignInError.said(
            Code.SIGN_IN_FAILED, N_("%(file)s: cannot read (%(why)s)"), file=token_file, why=exc.strerror
        ) from exc
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise SignInError.said(
            Code.SIGN_IN_FAILED,
            N_("%(file)s: mode %(mode)s; make it 600 first"),
            file=token_file,
            mode=f"{stat.S_IMODE(info.st_mode):o}",
        )
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not token:
        raise SignInError.said(Code.SIGN_IN_FAILED, N_("%(file)s: holds no token"), file=token_file)
    return SignIn(access_token=token, server=server_url, kind="static")


# --- checking and storing -----------------------------------------------------------------


async def team_view(
    sign_in: SignIn, read_tools: frozenset[str], *, pins: ToolPolicy | None = None
) -> TeamView:
    """The team ID and device IDs `sign_in` sees (one guarded ``get_devices_in_my_team``), and
    with `pins` the server's tool list compared with them (taken on the session first).

    Raises:
        EpiphanError: the read failed (e.g. ``epiphan_auth`` for a token the server refuses).
    """
    connection = McpConnection(
        sign_in.server, sign_in.access_token, timeout_seconds=DEVICE_READ_TIMEOUT_SECONDS
    )
    async with EpiphanReadClient(connection, read_tools, pins=pins) as client:
        tools = await client.tool_report() if pins is not None else None
        team_id, devices = parse_devices(await client.call("get_devices_in_my_team"))
    return TeamView(team_id=team_id, device_ids=frozenset(d.id for d in devices), tools=tools)


def separation_problem(
    sandbox: TeamView, normal: TeamView, write_team_id: str | None = None
) -> SignInError | None:
    """Why a sandbox sign-in may not be kept, or None. Pure.

    Refused: no device (``sandbox_empty``); any device the normal sign-in sees, or the same
    team ID (``sandbox_overlaps``); a team ID other than ``FLEETWATCH_WRITE_TEAM_ID`` when both
    are known (``team_mismatch``).
    """
    if not sandbox.device_ids:
        return SignInError.said(
            Code.SANDBOX_EMPTY,
            N_("the sandbox sign-in sees no devices; pick the sandbox team on the sign-in page"),
        )
    shared_ids = sandbox.device_ids & normal.device_ids
    same_team = sandbox.team_id is not None and sandbox.team_id == normal.team_id
    if shared_ids or same_team:
        return SignInError.said(
            Code.SANDBOX_OVERLAPS,
            N_(
                "the sandbox sign-in sees %(n)s of the normal sign-in's devices (the same team); it was "
                "refused and forgotten. Sign in with the separate sandbox team."
            )
            if same_team
            else N_(
                "the sandbox sign-in sees %(n)s of the normal sign-in's devices; it was refused and "
                "forgotten. Sign in with the separate sandbox team."
            ),
            n=len(shared_ids),
        )
    if write_team_id is not None and sandbox.team_id is not None and sandbox.team_id != write_team_id:
        return SignInError.said(
            Code.TEAM_MISMATCH,
            N_("the sandbox sign-in's team %(team)s is not FLEETWATCH_WRITE_TEAM_ID (%(write_team)s)"),
            team=sandbox.team_id,
            write_team=write_team_id,
        )
    return None


async def _forget(sign_in: SignIn, http: httpx2.AsyncClient) -> bool | None:
    """Revoke a sign-in at its server (refresh token first: it revokes the whole family)."""
    if sign_in.kind != "oauth" or not sign_in.revocation_endpoint or not sign_in.client_id:
        return None
    results = [
        await revoke_token(
            http, endpoint=sign_in.revocation_endpoint, client_id=sign_in.client_id, token=token, hint=hint
        )
        for token, hint in ((sign_in.refresh_token, "refresh_token"), (sign_in.access_token, "access_token"))
        if token
    ]
    return all(results) if results else None


async def store_sign_in(
    settings: Settings,
    sign_in: SignIn,
    *,
    sandbox: bool,
    read_tools: frozenset[str],
    http: httpx2.AsyncClient,
    pins: ToolPolicy | None = None,
) -> LoginReport:
    """Check a new sign-in and store it in its slot (read or sandbox), under the slot's lock.

    The new sign-in must read its device list. A sandbox sign-in is also checked against the
    read sign-in (`separation_problem`): it needs a read sign-in to compare with. Whatever is
    refused is revoked at the server (when it offers revocation) and never stored. With `pins`,
    the server's tool list is compared with the reviewed policy and what differs is reported
    (``tools_changed``), never refused for.

    Raises:
        SignInError: ``sandbox_empty``, ``sandbox_overlaps``, ``team_mismatch``, ``no_sign_in``
            (no read sign-in to check a sandbox against), or a refresh error of the read slot.
        EpiphanError: the new sign-in cannot read its devices.
        SlotError: the slot is unsafe.
    """
    try:
        view = await team_view(sign_in, read_tools, pins=pins)
        if sandbox:
            try:
                normal = await fresh_sign_in(settings.read_token_file, http=http)
            except SlotError as exc:
                if exc.code != Code.NO_SIGN_IN:
                    raise
                raise SignInError.said(
                    Code.NO_SIGN_IN,
                    N_(
                        "sign in the normal account first (fleetwatch login): the sandbox is checked against it"
                    ),
                ) from exc
            problem = separation_problem(view, await team_view(normal, read_tools), settings.write_team_id)
            if problem is not None:
                raise problem
    except FleetwatchError:
        await _forget(sign_in, http)
        raise
    path = settings.sandbox_token_file if sandbox else settings.read_token_file
    stored = msgspec.structs.replace(sign_in, team_id=view.team_id or sign_in.team_id)
    async with locked_slot(path):
        write_slot(path, stored)
    changed = tuple(d.describe() for d in view.tools.differences) if view.tools is not None else ()
    return LoginReport(path, stored.kind, stored.team_id, len(view.device_ids), stored.expires_at, changed)


# --- refreshing ---------------------------------------------------------------------------


def needs_refresh(sign_in: SignIn, now: float, margin_seconds: float = REFRESH_MARGIN_SECONDS) -> bool:
    """True when the access token ends within `margin_seconds` of `now` (epoch s) and the
    sign-in can refresh (an OAuth sign-in with a refresh token). Pure."""
    return (
        can_refresh(sign_in) and sign_in.expires_at is not None and sign_in.expires_at - margin_seconds <= now
    )


def _dead(path: Path, sign_in: SignIn) -> SignInError:
    reason = sign_in.dead_reason or N_("a refresh was refused")
    return SignInError.said(
        Code.SIGN_IN_DEAD, N_("%(path)s: the sign-in is dead (%(why)s); sign in again"), path=path, why=reason
    )


def can_refresh(sign_in: SignIn) -> bool:
    """True for an OAuth sign-in that holds what a refresh needs. Pure."""
    return bool(sign_in.refresh_token and sign_in.token_endpoint and sign_in.client_id)


async def _refresh_locked(
    path: Path, seen: SignIn, http: httpx2.AsyncClient, margin: float, *, force: bool = False
) -> SignIn:
    current = read_slot(path)
    if current.dead:
        raise _dead(path, current)
    if current.refresh_token != seen.refresh_token or current.access_token != seen.access_token:
        return current  # another process refreshed while this one waited for the lock
    if not force and not needs_refresh(current, time.time(), margin):
        return current
    assert current.refresh_token and current.token_endpoint and current.client_id  # needs_refresh
    try:
        token = await refresh_tokens(
            http,
            token_endpoint=current.token_endpoint,
            client_id=current.client_id,
            refresh_token=current.refresh_token,
            resource=current.resource,
        )
    except SignInError as exc:
        if exc.code == Code.SIGN_IN_DEAD:
            write_slot(
                path, msgspec.structs.replace(current, dead=True, dead_reason=exc.message, refresh_token=None)
            )
        raise
    now = time.time()
    fresh = msgspec.structs.replace(
        current,
        access_token=token.access_token,
        refresh_token=token.refresh_token or current.refresh_token,
        expires_at=None if token.expires_in is None else now + token.expires_in,
        scope=token.scope or current.scope,
    )
    write_slot(path, fresh)
    return fresh


async def fresh_sign_in(
    path: Path, *, http: httpx2.AsyncClient | None = None, margin_seconds: float = REFRESH_MARGIN_SECONDS
) -> SignIn:
    """The sign-in in slot `path`, refreshed first if its access token ends within
    `margin_seconds`. Safe across processes: the refresh runs under the slot's lock, and a
    process that waited for the lock uses what the other one stored.

    Raises:
        SlotError: ``no_sign_in`` or an unsafe slot; ``sign_in_busy`` when another process held
            the lock past its bound.
        SignInError: ``sign_in_dead`` (marked in the slot) or ``refresh_failed`` (kept).
    """
    seen = read_slot(path)
    if seen.dead:
        raise _dead(path, seen)
    if not needs_refresh(seen, time.time(), margin_seconds):
        return seen
    async with locked_slot(path):
        if http is not None:
            return await _refresh_locked(path, seen, http, margin_seconds)
        async with http_client() as own:
            return await _refresh_locked(path, seen, own, margin_seconds)


async def refresh_refused(
    path: Path, refused_token: str, *, http: httpx2.AsyncClient | None = None
) -> SignIn | None:
    """Epiphan refused `refused_token` in-band (its clock disagrees with the slot's
    ``expires_at``, or the token was revoked): refresh the slot's sign-in now, once, under the
    slot's lock. When another process already stored a newer token, that one is returned
    without refreshing. None when the sign-in cannot refresh (a static or lab token): the
    refusal stands.

    Raises:
        SlotError: as `fresh_sign_in`.
        SignInError: ``sign_in_dead`` (a refused refresh; marked in the slot) or
            ``refresh_failed``.
    """
    seen = read_slot(path)
    if seen.dead:
        raise _dead(path, seen)
    if seen.access_token != refused_token:
        return seen
    if not can_refresh(seen):
        return None
    async with locked_slot(path):
        if http is not None:
            return await _refresh_locked(path, seen, http, 0.0, force=True)
        async with http_client() as own:
            return await _refresh_locked(path, seen, own, 0.0, force=True)


# --- giving back --------------------------------------------------------------------------


async def logout(path: Path, *, http: httpx2.AsyncClient) -> LogoutReport:
    """Revoke the slot's sign-in at the server (when it offers revocation) and delete the slot.

    The slot is deleted even when the server does not confirm (``revoked=False``): the token
    may then stay valid at the server until it expires.

    Raises:
        SlotError: an unsafe slot (it is left in place), or ``sign_in_busy``.
    """
    async with locked_slot(path):
        try:
            sign_in = read_slot(path)
        except SlotError as exc:
            if exc.code == Code.NO_SIGN_IN:
                return LogoutReport(path, removed=False, revoked=None)
            raise
        revoked = await _forget(sign_in, http)
        removed = remove_slot(path)
    return LogoutReport(path, removed=removed, revoked=revoked)
