"""The lab's OAuth 2 authorization server for the MCP sign-in, built on the SDK's auth routes.

Endpoints (the SDK's handlers, this provider behind them): ``/.well-known/oauth-authorization-
server`` (metadata; public clients with ``token_endpoint_auth_method: none`` allowed, RFC 9207
``iss`` in the redirect), ``/register`` (dynamic registration), ``/authorize`` (PKCE S256),
``/token`` (authorization code and refresh), ``/revoke``. The protected-resource metadata for
``/mcp`` is served by the server module.

``/authorize`` sends the browser to ``/authorize/team``, the page where a person picks the one
team the token will see (loopback peers only); the code, and every token made from it, belong
to that team. Access tokens live ``access_token_ttl_seconds`` of lab time.

Refresh tokens rotate: each refresh returns a new refresh token and the old one stops working.
Presenting an already-used refresh token is treated as theft (OAuth 2.1 reuse detection): it
fails and revokes the whole sign-in (every access and refresh token of that family), so two
processes refreshing the same token at once leave the sign-in dead. Revoking any token of a
family revokes the family.
"""

from __future__ import annotations

import html
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from services.lab.lab import Lab
from services.lab.scenario import TEAM_NAMES

_AUTH_SCHEME = "Bearer"
CODE_SECONDS = 300
PENDING_SECONDS = 600
LOOPBACK_PEERS = frozenset({"127.0.0.1", "::1"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def is_loopback(request: Request) -> bool:
    """True for a loopback peer that addressed the lab by a loopback name (rebinding guard)."""
    peer = request.client.host if request.client else ""
    host = request.headers.get("host", "")
    if not host.endswith("]"):
        host = host.rsplit(":", 1)[0]
    return peer in LOOPBACK_PEERS and host in LOOPBACK_HOSTS


def loopback_refusal() -> Response:
    return JSONResponse({"error": "the lab answers loopback clients only"}, status_code=403)


def loopback_only(
    handler: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """`handler` for loopback peers only (`is_loopback`); anyone else gets `loopback_refusal`."""

    async def endpoint(request: Request) -> Response:
        if not is_loopback(request):
            return loopback_refusal()
        return await handler(request)

    return endpoint


class LabAuthorizationCode(AuthorizationCode):
    team: str


class LabRefreshToken(RefreshToken):
    team: str
    family: str


class LabAccessToken(AccessToken):
    team: str


@dataclass
class _Pending:
    client: OAuthClientInformationFull
    params: AuthorizationParams
    made_at: float


@dataclass
class _Family:
    """One sign-in: its access tokens and its current refresh token."""

    team: str
    client_id: str
    scopes: list[str]
    access_tokens: list[str] = field(default_factory=list)
    refresh_token: str | None = None


class LabOAuthProvider:
    """`OAuthAuthorizationServerProvider` for the SDK's ``create_auth_routes``, plus the
    team-picking page (`page_routes`). Tokens go into the lab's `TokenBook`."""

    def __init__(self, lab: Lab, issuer: str) -> None:
        self.lab = lab
        self.issuer = issuer.rstrip("/")
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self._pending: dict[str, _Pending] = {}
        self._codes: dict[str, LabAuthorizationCode] = {}
        self._families: dict[str, _Family] = {}
        self._refresh_family: dict[str, str] = {}
        self._used_refresh: dict[str, str] = {}
        self._access_family: dict[str, str] = {}

    # --- the SDK's provider protocol -------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if client_info.client_id is None:
            raise ValueError("registration without a client_id")
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        request_id = secrets.token_urlsafe(24)
        self._pending[request_id] = _Pending(client, params, time.time())
        return f"{self.issuer}/authorize/team?request={request_id}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> LabAuthorizationCode | None:
        return self._codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: LabAuthorizationCode
    ) -> OAuthToken:
        self._codes.pop(authorization_code.code, None)
        family_id = secrets.token_urlsafe(12)
        self._families[family_id] = _Family(
            authorization_code.team, client.client_id or "", authorization_code.scopes
        )
        return self._issue(family_id)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> LabRefreshToken | None:
        used = self._used_refresh.get(refresh_token)
        if used is not None:
            self._revoke_family(used)
            return None
        family_id = self._refresh_family.get(refresh_token)
        if family_id is None:
            return None
        family = self._families[family_id]
        return LabRefreshToken(
            token=refresh_token,
            client_id=family.client_id,
            scopes=family.scopes,
            team=family.team,
            family=family_id,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: LabRefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self._refresh_family.pop(refresh_token.token, None)
        self._used_refresh[refresh_token.token] = refresh_token.family
        return self._issue(refresh_token.family)

    async def load_access_token(self, token: str) -> LabAccessToken | None:
        info = self.lab.tokens.check(token, self.lab.clock.now())
        if isinstance(info, str):
            return None
        return LabAccessToken(
            token=token, client_id=info.client_id, scopes=[], subject=info.team, team=info.team
        )

    async def revoke_token(self, token: LabAccessToken | LabRefreshToken) -> None:
        family = self._access_family.get(token.token) or self._refresh_family.get(token.token)
        if family is not None:
            self._revoke_family(family)
        else:
            self.lab.tokens.revoke(token.token)

    # --- issuing and revoking --------------------------------------------------------------

    def _issue(self, family_id: str) -> OAuthToken:
        family = self._families[family_id]
        ttl = self.lab.settings.access_token_ttl_seconds
        access = self.lab.tokens.issue(
            family.team, family.client_id, self.lab.clock.now() + timedelta(seconds=ttl)
        )
        refresh = secrets.token_urlsafe(32)
        family.access_tokens.append(access)
        family.refresh_token = refresh
        self._access_family[access] = family_id
        self._refresh_family[refresh] = family_id
        return OAuthToken(
            access_token=access,
            token_type=_AUTH_SCHEME,
            expires_in=ttl,
            refresh_token=refresh,
            scope=" ".join(family.scopes) or None,
        )

    def _revoke_family(self, family_id: str) -> None:
        family = self._families[family_id]
        for access in family.access_tokens:
            self.lab.tokens.revoke(access)
        if family.refresh_token is not None:
            self._refresh_family.pop(family.refresh_token, None)
            family.refresh_token = None

    # --- the team-picking page -------------------------------------------------------------

    def page_routes(self) -> list[Route]:
        """The team page, and ``/revoke``: the SDK's revocation handler requires a
        ``client_secret`` field even from a public client, which RFC 7009 does not."""
        return [
            Route("/authorize/team", self._page, methods=["GET", "POST"]),
            Route("/revoke", self._revoke, methods=["POST"]),
        ]

    async def _revoke(self, request: Request) -> Response:
        try:
            client = await ClientAuthenticator(self).authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse(
                {"error": "unauthorized_client", "error_description": exc.message}, status_code=401
            )
        token = str((await request.form()).get("token", ""))
        if not token:
            return JSONResponse(
                {"error": "invalid_request", "error_description": "token is required"}, status_code=400
            )
        found = await self.load_access_token(token) or await self.load_refresh_token(client, token)
        if found is not None and found.client_id == client.client_id:
            await self.revoke_token(found)
        return Response(status_code=200, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})

    async def _page(self, request: Request) -> Response:
        if not is_loopback(request):
            return loopback_refusal()
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            pending = self._live_pending(request_id)
            if pending is None:
                return HTMLResponse(_PAGE_GONE, status_code=400)
            return HTMLResponse(self._render(request_id, pending))
        form = await request.form()
        request_id, team = str(form.get("request", "")), str(form.get("team", ""))
        pending = self._live_pending(request_id)
        if pending is None:
            return HTMLResponse(_PAGE_GONE, status_code=400)
        del self._pending[request_id]
        params = pending.params
        if team not in TEAM_NAMES:
            target = construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state, iss=self.issuer
            )
            return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})
        code = secrets.token_urlsafe(32)
        self._codes[code] = LabAuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + CODE_SECONDS,
            client_id=pending.client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=team,
            team=team,
        )
        target = construct_redirect_uri(
            str(params.redirect_uri), code=code, state=params.state, iss=self.issuer
        )
        return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})

    def _live_pending(self, request_id: str) -> _Pending | None:
        pending = self._pending.get(request_id)
        if pending is None or time.time() - pending.made_at > PENDING_SECONDS:
            return None
        return pending

    def _render(self, request_id: str, pending: _Pending) -> str:
        client = html.escape(pending.client.client_name or pending.client.client_id or "An application")
        buttons = "\n".join(
            f'<p><button type="submit" name="team" value="{name}">{name}: team '
            f"{html.escape(team.team_id)} ({len(team.device_ids)} devices)</button></p>"
            for name, team in self.lab.world.teams.items()
        )
        return _PAGE.format(client=client, request=html.escape(request_id), buttons=buttons)


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Epiphan Edge (lab): choose a team</title></head>
<body>
<h1>Sign in to Epiphan Edge (lab)</h1>
<p><strong>{client}</strong> asks to act for one team. Choose the team it may use:</p>
<form method="post" action="/authorize/team">
<input type="hidden" name="request" value="{request}">
{buttons}
<p><button type="submit" name="team" value="">Cancel</button></p>
</form>
</body></html>
"""

_PAGE_GONE = "<!doctype html><p>This sign-in request is unknown or has expired. Start again.</p>"


def metadata_extras() -> dict[str, Any]:
    """What the lab's authorization-server metadata adds to the SDK's: public clients
    (``none``) and the RFC 9207 ``iss`` parameter in the authorization response."""
    return {
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "authorization_response_iss_parameter_supported": True,
    }
