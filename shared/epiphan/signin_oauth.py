"""The MCP OAuth sign-in, one step per function, built on the MCP SDK's own helpers.

Why not the SDK's `OAuthClientProvider` as is: it starts its flow on an HTTP 401, and Epiphan
(like the lab by default) admits anonymous sessions and reports a missing sign-in inside tool
results (EPIPHAN.md). So `fleetwatch login` runs the same steps itself, with the SDK's
functions from ``mcp.client.auth.utils`` (discovery URLs, metadata parsing, issuer checks,
registration request and response) and its `PKCEParameters`:

1. `discover`: protected-resource metadata (RFC 9728, path-based then root), then the
   authorization server's metadata (RFC 8414 / OIDC fallbacks), issuer checked.
2. `register`: dynamic client registration (RFC 7591) as a public client,
   ``token_endpoint_auth_method: none``, grant types ``authorization_code`` + ``refresh_token``,
   redirect ``http://127.0.0.1:<port>/callback``.
3. `authorization_request`: the authorize URL with PKCE (S256), ``state`` and ``resource``.
4. `code_from_redirect`: the code from the redirect URL (state and RFC 9207 ``iss`` checked).
5. `exchange_code`, `refresh_tokens`, `revoke_token`: the token and revocation endpoints.

Every function takes the HTTP client (an ``httpx2.AsyncClient``) from its caller, so a test can
hand in a transport that answers 5xx. Errors: `SignInError` with ``sign_in_failed`` (a step
failed), ``sign_in_dead`` (a refresh refused with 400/401: Epiphan's rotating refresh tokens make
that final), ``refresh_failed`` (5xx, 429 or unreachable: try again later).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from mcp.client.auth import OAuthFlowError, PKCEParameters
from mcp.client.auth.oauth2 import check_registration_usable
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_client_registration_request,
    create_oauth_metadata_request,
    get_client_metadata_scopes,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    handle_registration_response,
    issuers_match,
    validate_authorization_response_iss,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import AnyUrl, ValidationError

from shared.errors import N_, Code, FleetwatchError

CLIENT_NAME = "Fleetwatch"
PUBLIC_CLIENT = "none"
"""``token_endpoint_auth_method`` of a public client: no client secret (the CLI cannot keep one)."""
GRANT_TYPES = ["authorization_code", "refresh_token"]
HTTP_TIMEOUT_SECONDS = 20.0
"""Bound on each OAuth HTTP request (seconds)."""


class SignInError(FleetwatchError):
    """A sign-in step failed or a stored sign-in cannot be used.

    Codes: ``sign_in_failed``, ``sign_in_dead``, ``refresh_failed``, ``sandbox_empty``,
    ``sandbox_overlaps``, ``team_mismatch``, ``no_sign_in``; the message says what to do.
    """


@dataclass(frozen=True)
class AuthServer:
    """What discovery found for one MCP server."""

    server_url: str
    resource: str
    metadata: OAuthMetadata
    resource_metadata: ProtectedResourceMetadata | None

    @property
    def issuer(self) -> str:
        return str(self.metadata.issuer)

    @property
    def token_endpoint(self) -> str:
        return str(self.metadata.token_endpoint)

    @property
    def revocation_endpoint(self) -> str | None:
        endpoint = self.metadata.revocation_endpoint
        return None if endpoint is None else str(endpoint)


@dataclass(frozen=True)
class AuthorizationRequest:
    """One authorization attempt: the URL the person opens, and what checks the answer."""

    url: str
    state: str
    code_verifier: str
    redirect_uri: str
    scope: str | None


def http_client(transport: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncClient:
    """The HTTP client the sign-in uses: bounded, no redirects followed."""
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(HTTP_TIMEOUT_SECONDS), follow_redirects=False, transport=transport
    )


STEPS = (N_("discovery"), N_("registration"), N_("authorization"), N_("token exchange"))
"""The sign-in's steps, as a failure names them."""


def _failed(step: str, detail: str) -> SignInError:
    return SignInError.said(
        Code.SIGN_IN_FAILED, N_("sign-in failed at %(step)s: %(detail)s"), step=step, detail=detail
    )


async def _send(http: httpx2.AsyncClient, request: httpx2.Request, step: str) -> httpx2.Response:
    try:
        return await http.send(request)
    except httpx2.HTTPError as exc:
        raise SignInError.said(
            Code.SIGN_IN_FAILED,
            N_("sign-in failed at %(step)s: %(error)s talking to %(host)s"),
            step=step,
            error=type(exc).__name__,
            host=request.url.host,
        ) from exc


async def discover(http: httpx2.AsyncClient, server_url: str) -> AuthServer:
    """Find the authorization server of an MCP server (RFC 9728, then RFC 8414).

    Raises:
        SignInError: ``sign_in_failed`` when no usable metadata is found, the protected
            resource names another server, or the issuer does not match.
    """
    resource = resource_url_from_server_url(server_url)
    prm: ProtectedResourceMetadata | None = None
    for url in build_protected_resource_metadata_discovery_urls(None, server_url):
        response = await _send(http, create_oauth_metadata_request(url), "discovery")
        prm = await handle_protected_resource_response(response)
        if prm is not None:
            break
    auth_server_url: str | None = None
    if prm is not None:
        if not check_resource_allowed(requested_resource=resource, configured_resource=str(prm.resource)):
            raise _failed("discovery", f"the server describes resource {prm.resource}, not {resource}")
        resource = str(prm.resource)
        auth_server_url = str(prm.authorization_servers[0])
    metadata: OAuthMetadata | None = None
    for url in build_oauth_authorization_server_metadata_discovery_urls(auth_server_url, server_url):
        ok, found = await handle_auth_metadata_response(
            await _send(http, create_oauth_metadata_request(url), "discovery")
        )
        if not ok:
            break
        if found is not None:
            metadata = found
            break
    if metadata is None:
        raise _failed("discovery", f"no OAuth authorization-server metadata for {server_url}")
    parts = urlsplit(server_url)
    expected_issuer = auth_server_url or f"{parts.scheme}://{parts.netloc}"
    if not issuers_match(str(metadata.issuer), expected_issuer):
        raise _failed("discovery", f"the metadata names issuer {metadata.issuer}, not {expected_issuer}")
    return AuthServer(server_url, resource, metadata, prm)


def client_metadata(redirect_uri: str, auth: AuthServer) -> OAuthClientMetadata:
    """The registration request: a public client with a loopback redirect."""
    metadata = OAuthClientMetadata(
        redirect_uris=[AnyUrl(redirect_uri)],
        token_endpoint_auth_method=PUBLIC_CLIENT,
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        client_name=CLIENT_NAME,
    )
    metadata.scope = get_client_metadata_scopes(None, auth.resource_metadata, auth.metadata, GRANT_TYPES)
    return metadata


async def register(
    http: httpx2.AsyncClient, auth: AuthServer, metadata: OAuthClientMetadata
) -> OAuthClientInformationFull:
    """Dynamic client registration.

    Raises:
        SignInError: ``sign_in_failed`` when the server refuses or registers an unusable client.
    """
    base = f"{urlsplit(auth.server_url).scheme}://{urlsplit(auth.server_url).netloc}"
    request = create_client_registration_request(auth.metadata, metadata, base)
    try:
        client = await handle_registration_response(await _send(http, request, "registration"))
        check_registration_usable(client)
    except OAuthFlowError as exc:
        raise _failed("registration", str(exc)) from exc
    return client


def authorization_request(
    auth: AuthServer, client: OAuthClientInformationFull, metadata: OAuthClientMetadata
) -> AuthorizationRequest:
    """The authorize URL (PKCE S256, a fresh ``state``, RFC 8707 ``resource``)."""
    pkce = PKCEParameters.generate()
    state = secrets.token_urlsafe(32)
    redirect_uri = str((metadata.redirect_uris or [""])[0])
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce.code_challenge,
        "code_challenge_method": "S256",
        "resource": auth.resource,
    }
    if metadata.scope:
        params["scope"] = metadata.scope
    url = f"{auth.metadata.authorization_endpoint}?{urlencode(params)}"
    return AuthorizationRequest(url, state, pkce.code_verifier, redirect_uri, metadata.scope)


def code_from_redirect(redirect_url: str, request: AuthorizationRequest, auth: AuthServer) -> str:
    """The authorization code in the URL the browser was sent back to.

    Raises:
        SignInError: ``sign_in_failed`` for an ``error`` answer (e.g. the person cancelled), a
            URL that is not this request's redirect, a wrong ``state``, a wrong ``iss``, or no
            code.
    """
    parts = urlsplit(redirect_url.strip())
    expected = urlsplit(request.redirect_uri)
    if (parts.scheme, parts.netloc, parts.path) != (expected.scheme, expected.netloc, expected.path):
        raise _failed("authorization", N_("that is not the redirect URL of this sign-in"))
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    if not secrets.compare_digest(query.get("state", ""), request.state):
        raise _failed("authorization", N_("the answer's state does not match this sign-in"))
    if "error" in query:
        raise _failed("authorization", f"the server answered {query['error']!r} (cancelled or refused)")
    try:
        validate_authorization_response_iss(query.get("iss"), auth.metadata)
    except OAuthFlowError as exc:
        raise _failed("authorization", str(exc)) from exc
    code = query.get("code", "")
    if not code:
        raise _failed("authorization", N_("the answer holds no authorization code"))
    return code


async def _token_response(response: httpx2.Response, step: str) -> OAuthToken:
    try:
        return OAuthToken.model_validate_json(await response.aread())
    except ValidationError as exc:
        raise _failed(step, N_("the token response is not a valid OAuth token")) from exc


def _error_of(response: httpx2.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("error", "")) if isinstance(body, dict) else ""


async def exchange_code(
    http: httpx2.AsyncClient,
    auth: AuthServer,
    client: OAuthClientInformationFull,
    request: AuthorizationRequest,
    code: str,
) -> OAuthToken:
    """Trade the code (with the PKCE verifier) for tokens.

    Raises:
        SignInError: ``sign_in_failed`` when the token endpoint refuses.
    """
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": request.redirect_uri,
        "client_id": client.client_id,
        "code_verifier": request.code_verifier,
        "resource": auth.resource,
    }
    response = await _send(http, httpx2.Request("POST", auth.token_endpoint, data=data), "token exchange")
    if response.status_code not in (200, 201):
        raise _failed("token exchange", f"HTTP {response.status_code} {_error_of(response)}".strip())
    token = await _token_response(response, "token exchange")
    if token.scope is None:
        token.scope = request.scope
    return token


async def refresh_tokens(
    http: httpx2.AsyncClient,
    *,
    token_endpoint: str,
    client_id: str,
    refresh_token: str,
    resource: str | None,
) -> OAuthToken:
    """One refresh. Refresh tokens rotate (EPIPHAN.md): the caller stores the new one at once.

    Raises:
        SignInError: ``sign_in_dead`` when the server answers 400 or 401 (the refresh token is
            spent or revoked); ``refresh_failed`` for any other status or a network error (the
            sign-in may still be good).
    """
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    if resource:
        data["resource"] = resource
    try:
        response = await http.send(httpx2.Request("POST", token_endpoint, data=data))
    except httpx2.HTTPError as exc:
        raise SignInError(Code.REFRESH_FAILED, f"refresh: {type(exc).__name__}; the sign-in is kept") from exc
    if response.status_code in (400, 401):
        error = _error_of(response) or "refused"
        raise SignInError(
            Code.SIGN_IN_DEAD,
            f"the server refused the refresh (HTTP {response.status_code} {error}): sign in again",
        )
    if response.status_code != 200:
        raise SignInError(
            Code.REFRESH_FAILED, f"refresh: HTTP {response.status_code} from the server; the sign-in is kept"
        )
    try:
        return OAuthToken.model_validate_json(await response.aread())
    except ValidationError as exc:
        raise SignInError(Code.REFRESH_FAILED, "refresh: the answer is not a valid OAuth token") from exc


async def revoke_token(
    http: httpx2.AsyncClient, *, endpoint: str, client_id: str, token: str, hint: str
) -> bool:
    """RFC 7009 revocation as a public client. True when the server confirmed (HTTP 200).

    Never raises for an HTTP answer; a network error counts as not confirmed.
    """
    data = {"token": token, "token_type_hint": hint, "client_id": client_id}
    try:
        response = await http.send(httpx2.Request("POST", endpoint, data=data))
    except httpx2.HTTPError:
        return False
    return response.status_code == 200
