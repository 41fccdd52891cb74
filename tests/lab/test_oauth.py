"""The MCP sign-in against the lab, with the SDK's own OAuth client where it fits."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from services.lab.server import LabHandle, build_app, make_lab, run_lab
from services.lab.state import LabClock
from tests.lab.helpers import data_of, open_session, text_of

START = datetime(2026, 9, 16, 13, 0, 0, tzinfo=UTC)
REDIRECT = "http://127.0.0.1:53682/callback"


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class TeamPicker:
    """Plays the person in the browser: follows the authorize URL to the lab's page, submits
    its form with a team, and hands the redirect's code back (never contacting REDIRECT)."""

    def __init__(self, team: str) -> None:
        self.team = team
        self.url: str | None = None
        self.pages: list[str] = []

    async def redirect_handler(self, url: str) -> None:
        self.url = url

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.url is not None
        async with httpx2.AsyncClient() as browser:
            to_page = await browser.get(self.url)
            assert to_page.status_code == 302
            page = await browser.get(to_page.headers["location"])
            self.pages.append(page.text)
            request_id = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
            action = re.search(r'<form method="post" action="([^"]+)"', page.text).group(1)
            back = await browser.post(
                str(page.url.join(action)), data={"request": request_id, "team": self.team}
            )
        assert back.status_code == 302
        location = back.headers["location"]
        assert location.startswith(REDIRECT)
        query = parse_qs(urlsplit(location).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])


def _metadata() -> OAuthClientMetadata:
    return OAuthClientMetadata(
        redirect_uris=[REDIRECT],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        client_name="Fleetwatch (test)",
    )


@pytest.fixture
async def challenge_lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus", anonymous="challenge", clock=LabClock(START, frozen=True)) as handle:
        yield handle


async def _sign_in(lab: LabHandle, team: str) -> tuple[MemoryStorage, TeamPicker, list[str]]:
    storage, picker = MemoryStorage(), TeamPicker(team)
    auth = OAuthClientProvider(
        lab.mcp_url, _metadata(), storage, picker.redirect_handler, picker.callback_handler
    )
    async with (
        httpx2.AsyncClient(auth=auth) as http,
        Client(streamable_http_client(lab.mcp_url, http_client=http)) as client,
    ):
        result = await client.call_tool("get_devices_in_my_team", {})
    return storage, picker, [d["Id"] for d in data_of(result)["devices"]]


@pytest.mark.parametrize("team", ["normal", "sandbox"])
async def test_challenge_mode_the_sdk_oauth_client_signs_in_and_the_token_sees_the_team_picked(
    challenge_lab: LabHandle, team: str
):
    storage, picker, device_ids = await _sign_in(challenge_lab, team)
    assert device_ids == list(challenge_lab.teams[team].device_ids)
    assert storage.client is not None and storage.client.token_endpoint_auth_method == "none"
    assert storage.tokens is not None and storage.tokens.refresh_token and storage.tokens.expires_in == 3600
    assert "Fleetwatch (test)" in picker.pages[0]
    assert challenge_lab.teams["normal"].team_id in picker.pages[0]


async def test_challenge_mode_no_token_gets_http_401_pointing_at_the_resource_metadata(
    challenge_lab: LabHandle,
):
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            challenge_lab.mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={"Accept": "application/json, text/event-stream"},
        )
        challenge = response.headers["www-authenticate"]
        metadata_url = re.search(r'resource_metadata="([^"]+)"', challenge).group(1)
        metadata = (await http.get(metadata_url)).json()
    assert response.status_code == 401
    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
    assert metadata["resource"] == challenge_lab.mcp_url
    assert metadata["authorization_servers"] == [challenge_lab.url]


async def test_challenge_mode_a_demo_token_still_works_directly(challenge_lab: LabHandle):
    async with open_session(challenge_lab.mcp_url, challenge_lab.teams["sandbox"].token) as session:
        assert len(data_of(await session.call_tool("get_devices_in_my_team", {}))["devices"]) == 4


async def test_challenge_mode_an_expired_sign_in_gets_http_401_again(challenge_lab: LabHandle):
    storage, _picker, _ids = await _sign_in(challenge_lab, "sandbox")
    challenge_lab.advance(3601)
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            challenge_lab.mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {storage.tokens.access_token}",
            },
        )
    assert response.status_code == 401


class _Flow:
    """The sign-in step by step over plain HTTP (registration, authorize, page, token)."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self.http = http
        self.client_id = ""

    async def register(self) -> None:
        response = await self.http.post(
            "/register", json=_metadata().model_dump(mode="json", exclude_none=True)
        )
        assert response.status_code == 201
        self.client_id = response.json()["client_id"]

    async def open_page(self, challenge: str, state: str = "s1") -> str:
        """Authorize and land on the team page; returns the page's request ID."""
        authorize = await self.http.get(
            "/authorize",
            params={
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": REDIRECT,
                "state": state,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            },
        )
        page = await self.http.get(authorize.headers["location"])
        return re.search(r'name="request" value="([^"]+)"', page.text).group(1)

    async def code(self, team: str) -> tuple[str, str]:
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        request_id = await self.open_page(challenge)
        back = await self.http.post("/authorize/team", data={"request": request_id, "team": team})
        query = parse_qs(urlsplit(back.headers["location"]).query)
        return query["code"][0], verifier

    async def token(self, **form: str) -> httpx2.Response:
        return await self.http.post("/token", data={"client_id": self.client_id, **form})

    async def sign_in(self, team: str) -> dict[str, Any]:
        """The whole sign-in for ``team``: the token response as JSON."""
        code, verifier = await self.code(team)
        response = await self.token(
            grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier=verifier
        )
        assert response.status_code == 200
        return response.json()


@pytest.fixture
async def flow(lab: LabHandle) -> AsyncIterator[_Flow]:
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        steps = _Flow(http)
        await steps.register()
        yield steps


async def _works(lab: LabHandle, token: str) -> bool:
    async with open_session(lab.mcp_url, token) as session:
        result = await session.call_tool("get_team_presets", {})
    if result.is_error:
        assert "401 Unauthorized" in text_of(result)
    return not result.is_error


async def test_admit_mode_the_endpoints_sign_in_step_by_step_with_pkce(lab: LabHandle, flow: _Flow):
    code, verifier = await flow.code("sandbox")
    wrong = await flow.token(
        grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier="x" * 43
    )
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    tokens = await flow.token(
        grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier=verifier
    )
    assert tokens.status_code == 200
    assert await _works(lab, tokens.json()["access_token"])
    again = await flow.token(
        grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier=verifier
    )
    assert again.status_code == 400, "a code is single-use"


async def test_refresh_tokens_rotate_and_the_old_one_fails(lab: LabHandle, flow: _Flow):
    first = await flow.sign_in("normal")
    second = await flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert second.status_code == 200
    assert second.json()["refresh_token"] != first["refresh_token"]
    assert await _works(lab, second.json()["access_token"])
    reused = await flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"


async def test_reusing_a_rotated_refresh_token_kills_the_whole_sign_in(lab: LabHandle, flow: _Flow):
    first = await flow.sign_in("normal")
    second = (await flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])).json()
    await flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert not await _works(lab, second["access_token"])
    dead = await flow.token(grant_type="refresh_token", refresh_token=second["refresh_token"])
    assert dead.status_code == 400


async def test_revoking_a_token_ends_the_sign_in(lab: LabHandle, flow: _Flow):
    tokens = await flow.sign_in("sandbox")
    revoked = await flow.http.post(
        "/revoke", data={"client_id": flow.client_id, "token": tokens["access_token"]}
    )
    assert revoked.status_code == 200
    assert not await _works(lab, tokens["access_token"])
    refresh = await flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert refresh.status_code == 400


async def test_an_access_token_expires_after_its_lifetime_of_lab_time(lab: LabHandle, flow: _Flow):
    tokens = await flow.sign_in("sandbox")
    lab.advance(tokens["expires_in"])
    assert not await _works(lab, tokens["access_token"])
    fresh = await flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert await _works(lab, fresh.json()["access_token"])


async def test_cancelling_on_the_team_page_redirects_with_access_denied(flow: _Flow):
    request_id = await flow.open_page("c" * 43, state="s9")
    back = await flow.http.post("/authorize/team", data={"request": request_id, "team": ""})
    query = parse_qs(urlsplit(back.headers["location"]).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["s9"]
    again = await flow.http.post("/authorize/team", data={"request": request_id, "team": "normal"})
    assert again.status_code == 400, "a request is single-use"


async def test_the_team_page_answers_loopback_clients_only():
    lab = make_lab("campus")
    app = build_app(lab, "http://127.0.0.1:8770")
    transport = httpx2.ASGITransport(app=app, client=("192.0.2.7", 40000))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8770") as http:
        assert (await http.get("/authorize/team", params={"request": "x"})).status_code == 403
        assert (
            await http.post("/authorize/team", data={"request": "x", "team": "normal"})
        ).status_code == 403


async def test_the_authorization_server_metadata_allows_public_clients_and_iss(lab: LabHandle):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        metadata = (await http.get("/.well-known/oauth-authorization-server")).json()
    assert metadata["issuer"] == lab.url
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert {"registration_endpoint", "revocation_endpoint", "token_endpoint"} <= set(metadata)
    assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token"]
