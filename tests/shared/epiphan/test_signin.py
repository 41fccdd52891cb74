"""Sign-in against the lab's real OAuth server: the MCP flow (loopback and paste), the fence
check of the sandbox sign-in, refresh with rotation across processes, dead sign-ins, logout."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import msgspec
import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.config import Settings, load_settings
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN, EpiphanError
from shared.epiphan.signin import (
    SignInError,
    TeamView,
    fresh_sign_in,
    logout,
    needs_refresh,
    oauth_sign_in,
    separation_problem,
    static_sign_in,
    store_sign_in,
    team_view,
)
from shared.epiphan.signin_callback import LoopbackCallback
from shared.epiphan.signin_oauth import AuthorizationRequest, code_from_redirect, discover, http_client
from shared.epiphan.slots import SignIn, read_slot, write_slot
from shared.errors import Code
from tests.deploy.person import Person, come_back

pytestmark = pytest.mark.asyncio(loop_scope="module")
READ = READ_TOOLS_OF_EPIPHAN


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


@pytest_asyncio.fixture(loop_scope="module")
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with http_client() as client:
        yield client


def settings_for(home: Path, lab: LabHandle, **extra: str) -> Settings:
    return load_settings({"FLEETWATCH_HOME": str(home), "FLEETWATCH_EPIPHAN_MCP_URL": lab.mcp_url, **extra})


async def sign_in(lab: LabHandle, http: httpx2.AsyncClient, team: str, *, paste: bool = False) -> SignIn:
    person = Person(team).pasting() if paste else Person(team)
    try:
        return await oauth_sign_in(
            lab.mcp_url,
            show_url=person.show,
            http=http,
            paste=person.paste if paste else None,
            timeout_seconds=30,
        )
    finally:
        await person.done()


async def logged_in(
    settings: Settings, lab: LabHandle, http: httpx2.AsyncClient, team: str, *, sandbox: bool
):
    new = await sign_in(lab, http, team)
    return await store_sign_in(settings, new, sandbox=sandbox, read_tools=READ, http=http)


async def still_works(sign_in: SignIn) -> bool:
    try:
        await team_view(sign_in, READ)
    except EpiphanError as exc:
        assert exc.code == Code.EPIPHAN_AUTH
        return False
    return True


def expired(path: Path) -> SignIn:
    """Make the slot's access token look expired (as after an hour); the slot as it was."""
    before = read_slot(path)
    write_slot(path, msgspec.structs.replace(before, expires_at=time.time() - 10))
    return before


# --- the flow ----------------------------------------------------------------------------------


async def test_login_runs_the_mcp_oauth_flow_and_the_token_sees_the_team_picked(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab)
    report = await logged_in(settings, lab, http, "normal", sandbox=False)
    stored = read_slot(settings.read_token_file)
    assert (report.team_id, report.device_count) == (
        lab.teams["normal"].team_id,
        len(lab.teams["normal"].device_ids),
    )
    assert stored.kind == "oauth" and stored.refresh_token and stored.client_id
    assert stored.token_endpoint == f"{lab.url}/token" and stored.revocation_endpoint == f"{lab.url}/revoke"
    assert 3500 < stored.expires_at - time.time() <= 3600
    assert (await team_view(stored, READ)).device_ids == frozenset(lab.teams["normal"].device_ids)
    assert oct(settings.read_token_file.stat().st_mode & 0o777) == "0o600"
    assert oct(settings.read_token_file.parent.stat().st_mode & 0o777) == "0o700"


async def test_paste_mode_signs_in_from_the_pasted_address_without_a_listener(lab, http):
    new = await sign_in(lab, http, "sandbox", paste=True)
    assert (await team_view(new, READ)).device_ids == frozenset(lab.teams["sandbox"].device_ids)


async def test_a_cancelled_sign_in_fails_and_stores_nothing(lab, http, tmp_path):
    with pytest.raises(SignInError) as caught:
        await sign_in(lab, http, "")
    assert caught.value.code == Code.SIGN_IN_FAILED and "access_denied" in caught.value.message


async def test_an_answer_with_another_state_or_issuer_is_refused(lab, http):
    auth = await discover(http, lab.mcp_url)
    request = AuthorizationRequest("x", "the-state", "v" * 43, "http://127.0.0.1:5/callback", None)
    good = f"http://127.0.0.1:5/callback?code=c&state=the-state&iss={lab.url}"
    assert code_from_redirect(good, request, auth) == "c"
    for bad in (
        good.replace("the-state", "other"),
        good.replace(lab.url, "http://evil.example"),
        good.replace("iss=", "x="),
        good.replace("127.0.0.1:5", "127.0.0.1:6"),
    ):
        with pytest.raises(SignInError):
            code_from_redirect(bad, request, auth)


async def test_the_loopback_listener_ignores_a_request_for_another_sign_in():
    async with LoopbackCallback() as callback:
        waiting = asyncio.create_task(callback.wait("right", timeout_seconds=10))
        await asyncio.sleep(0)
        assert await come_back(f"{callback.redirect_uri}?code=x&state=wrong") == 400
        assert await come_back(callback.redirect_uri.replace("/callback", "/other")) == 404
        async with httpx2.AsyncClient() as other:
            for method in ("POST", "HEAD"):  # only the browser's GET counts, even with the state
                sent = await other.request(method, f"{callback.redirect_uri}?code=z&state=right")
                assert sent.status_code == 405
        assert not waiting.done()
        assert await come_back(f"{callback.redirect_uri}?code=y&state=right") == 200
        assert (await waiting).endswith("code=y&state=right")


# --- the sandbox sign-in and the fence ---------------------------------------------------------


async def test_login_sandbox_keeps_a_sandbox_team_that_shares_no_device(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab, FLEETWATCH_WRITE_TEAM_ID=lab.teams["sandbox"].team_id)
    await logged_in(settings, lab, http, "normal", sandbox=False)
    report = await logged_in(settings, lab, http, "sandbox", sandbox=True)
    assert report.slot == settings.sandbox_token_file and report.team_id == lab.teams["sandbox"].team_id
    assert read_slot(settings.sandbox_token_file).kind == "oauth"


async def test_a_sandbox_sign_in_that_sees_the_normal_devices_is_refused_and_forgotten(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab)
    await logged_in(settings, lab, http, "normal", sandbox=False)
    new = await sign_in(lab, http, "normal")
    with pytest.raises(SignInError) as caught:
        await store_sign_in(settings, new, sandbox=True, read_tools=READ, http=http)
    assert caught.value.code == Code.SANDBOX_OVERLAPS
    assert not settings.sandbox_token_file.exists()
    assert not await still_works(new)  # revoked at the server
    assert await still_works(read_slot(settings.read_token_file))  # the normal sign-in is untouched


async def test_a_sandbox_sign_in_without_a_normal_one_to_compare_is_refused_and_forgotten(
    lab, http, tmp_path
):
    settings = settings_for(tmp_path, lab)
    new = await sign_in(lab, http, "sandbox")
    with pytest.raises(SignInError) as caught:
        await store_sign_in(settings, new, sandbox=True, read_tools=READ, http=http)
    assert caught.value.code == Code.NO_SIGN_IN
    assert not settings.sandbox_token_file.exists() and not await still_works(new)


async def test_a_sandbox_sign_in_of_another_team_than_the_configured_one_is_refused(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab, FLEETWATCH_WRITE_TEAM_ID="not-the-sandbox")
    await logged_in(settings, lab, http, "normal", sandbox=False)
    with pytest.raises(SignInError) as caught:
        await logged_in(settings, lab, http, "sandbox", sandbox=True)
    assert caught.value.code == Code.TEAM_MISMATCH and not settings.sandbox_token_file.exists()


@pytest.mark.parametrize(
    ("sandbox", "normal", "team", "code"),
    [
        (TeamView("s", frozenset()), TeamView("n", frozenset({"a"})), None, Code.SANDBOX_EMPTY),
        (TeamView("s", frozenset({"a", "b"})), TeamView("n", frozenset({"b"})), None, Code.SANDBOX_OVERLAPS),
        (TeamView("t", frozenset({"a"})), TeamView("t", frozenset({"b"})), None, Code.SANDBOX_OVERLAPS),
        (TeamView("s", frozenset({"a"})), TeamView("n", frozenset({"b"})), "other", Code.TEAM_MISMATCH),
        (TeamView("s", frozenset({"a"})), TeamView("n", frozenset({"b"})), "s", None),
        (TeamView(None, frozenset({"a"})), TeamView(None, frozenset({"b"})), "s", None),
    ],
)
async def test_a_sandbox_is_kept_only_with_devices_of_its_own(sandbox, normal, team, code):
    problem = separation_problem(sandbox, normal, team)
    assert (problem.code if problem else None) == code


async def test_a_static_token_file_is_stored_as_a_static_sign_in(lab, http, tmp_path):
    settings = settings_for(tmp_path / "home", lab)
    token_file = tmp_path / "token"
    token_file.write_text(lab.teams["normal"].token + "\n")
    token_file.chmod(0o640)
    with pytest.raises(SignInError):
        static_sign_in(token_file, lab.mcp_url)
    token_file.chmod(0o600)
    report = await store_sign_in(
        settings, static_sign_in(token_file, lab.mcp_url), sandbox=False, read_tools=READ, http=http
    )
    assert report.kind == "static" and read_slot(settings.read_token_file).refresh_token is None


# --- refresh -----------------------------------------------------------------------------------


async def test_an_expired_access_token_is_refreshed_and_the_refresh_token_rotates(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab)
    await logged_in(settings, lab, http, "normal", sandbox=False)
    before = expired(settings.read_token_file)
    after = await fresh_sign_in(settings.read_token_file, http=http)
    assert after.access_token != before.access_token and after.refresh_token != before.refresh_token
    assert read_slot(settings.read_token_file) == after
    assert await still_works(after)
    assert await fresh_sign_in(settings.read_token_file, http=http) == after  # fresh: no second refresh


async def test_only_an_oauth_sign_in_near_its_end_needs_a_refresh():
    oauth = SignIn("a", refresh_token="r", token_endpoint="t", client_id="c", expires_at=1000.0)
    assert needs_refresh(oauth, now=950.0) and not needs_refresh(oauth, now=900.0)
    assert not needs_refresh(msgspec.structs.replace(oauth, refresh_token=None), now=2000.0)
    assert not needs_refresh(SignIn("a", kind="static"), now=2000.0)


REFRESHER = """
import asyncio, sys
from pathlib import Path
from shared.epiphan.signin import fresh_sign_in
print(asyncio.run(fresh_sign_in(Path(sys.argv[1]))).access_token)
"""


async def test_processes_refreshing_at_once_refresh_once_and_share_the_new_token(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab)
    await logged_in(settings, lab, http, "normal", sandbox=False)
    before = expired(settings.read_token_file)
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", REFRESHER, str(settings.read_token_file), stdout=asyncio.subprocess.PIPE
        )
        for _ in range(2)
    ]
    outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in processes)), 60)
    tokens = {out.decode().strip() for out, _ in outputs}
    assert [p.returncode for p in processes] == [0, 0]
    assert len(tokens) == 1 and before.access_token not in tokens
    # Had two refreshed with the same refresh token, the lab would have revoked the sign-in.
    assert await still_works(read_slot(settings.read_token_file))
    assert read_slot(settings.read_token_file).access_token in tokens


async def test_a_refresh_refused_with_400_marks_the_sign_in_dead(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab)
    await logged_in(settings, lab, http, "normal", sandbox=False)
    spent = expired(settings.read_token_file)
    await fresh_sign_in(settings.read_token_file, http=http)  # rotates: spent's refresh token is used
    write_slot(settings.read_token_file, msgspec.structs.replace(spent, expires_at=time.time() - 10))
    with pytest.raises(SignInError) as caught:
        await fresh_sign_in(settings.read_token_file, http=http)
    assert caught.value.code == Code.SIGN_IN_DEAD and "HTTP 400" in caught.value.message
    dead = read_slot(settings.read_token_file)
    assert dead.dead and dead.refresh_token is None
    with pytest.raises(SignInError) as again:
        await fresh_sign_in(settings.read_token_file)
    assert again.value.code == Code.SIGN_IN_DEAD


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_a_refresh_answered_with_a_server_error_keeps_the_sign_in(tmp_path, status):
    slot = tmp_path / "tokens" / "read.json"
    original = SignIn(
        "old",
        server="http://127.0.0.1:1/mcp",
        refresh_token="r1",
        expires_at=time.time() - 5,
        token_endpoint="http://127.0.0.1:1/token",
        client_id="c",
    )
    write_slot(slot, original)
    seen = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.url.path)
        return httpx2.Response(status, json={"error": "temporarily_unavailable"})

    async with http_client(httpx2.MockTransport(answer)) as failing:
        with pytest.raises(SignInError) as caught:
            await fresh_sign_in(slot, http=failing)
    assert caught.value.code == Code.REFRESH_FAILED and seen == ["/token"]
    assert read_slot(slot) == original


# --- logout ------------------------------------------------------------------------------------


async def test_logout_revokes_at_the_server_and_deletes_the_slot(lab, http, tmp_path):
    settings = settings_for(tmp_path, lab)
    await logged_in(settings, lab, http, "normal", sandbox=False)
    stored = read_slot(settings.read_token_file)
    report = await logout(settings.read_token_file, http=http)
    assert (report.removed, report.revoked) == (True, True)
    assert not settings.read_token_file.exists() and not await still_works(stored)
    assert (await logout(settings.read_token_file, http=http)).removed is False


async def test_logout_of_a_lab_demo_sign_in_only_deletes_it(lab, http, tmp_path):
    slot = tmp_path / "tokens" / "sandbox.json"
    write_slot(slot, SignIn(lab.teams["sandbox"].token, server=lab.mcp_url, kind="lab"))
    report = await logout(slot, http=http)
    assert (report.removed, report.revoked) == (True, None) and not slot.exists()


async def test_login_works_the_same_against_a_server_that_answers_401_challenges(http, tmp_path):
    async with run_lab("campus", anonymous="challenge") as challenging:
        settings = settings_for(tmp_path, challenging)
        report = await logged_in(settings, challenging, http, "normal", sandbox=False)
        assert report.device_count == len(challenging.teams["normal"].device_ids)
        assert await still_works(read_slot(settings.read_token_file))
