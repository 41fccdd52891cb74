"""``fleetwatch login`` / ``logout`` as real processes against the lab: the person (the test)
picks the team on the lab's page; the browser comes back to the listener, or is pasted."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.config import load_settings
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN
from shared.epiphan.signin import oauth_sign_in, store_sign_in
from shared.epiphan.signin_oauth import http_client
from shared.epiphan.slots import read_slot
from tests.ctl.cli import error_code, error_message
from tests.deploy.person import Person, come_back, pick_team

pytestmark = pytest.mark.asyncio(loop_scope="module")
CLI_SECONDS = 60


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


def cli_env(home: Path, lab: LabHandle) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env.update(
        FLEETWATCH_HOME=str(home), FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url, FLEETWATCH_LOG_LEVEL="WARNING"
    )
    return env


def token_file(folder: Path, lab: LabHandle, mode: int = 0o600) -> Path:
    """A file holding the lab's normal team's token, with `mode`."""
    token = folder / "token"
    token.write_text(lab.teams["normal"].token)
    token.chmod(mode)
    return token


async def fleetwatch(
    env: dict[str, str], *args: str, team: str | None = None, paste: bool = False, stdin_ends: bool = False
):
    """Run ``fleetwatch ARGS``; when `team` is given, act as the person at the browser; with
    `stdin_ends`, its input ends at once (nothing will be pasted). Returns (exit status, stdout,
    stderr)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.ctl.main",
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL if stdin_ends else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    seen: list[str] = []
    async with asyncio.timeout(CLI_SECONDS):
        if team is not None:
            while not (line := (await process.stdout.readline()).decode()).startswith("  http"):
                assert line, f"no address printed: {seen}"
                seen.append(line)
            redirect = await pick_team(line.strip(), team)
            if paste:
                assert process.stdin is not None
                process.stdin.write(redirect.encode() + b"\n")
                await process.stdin.drain()
            else:
                assert await come_back(redirect) == 200
        out, err = await process.communicate()
    return process.returncode, "".join(seen) + out.decode(), err.decode()


async def test_login_prints_the_address_and_stores_the_sign_in_when_the_browser_comes_back(lab, tmp_path):
    env = cli_env(tmp_path, lab)
    status, out, err = await fleetwatch(env, "login", "--no-browser", team="normal")
    assert status == 0, err
    assert "pick the normal (not the sandbox) team" in out
    assert f"team {lab.teams['normal'].team_id}, {len(lab.teams['normal'].device_ids)} devices" in out
    assert read_slot(load_settings(env).read_token_file).kind == "oauth"


async def normal_signed_in(env: dict[str, str], lab: LabHandle) -> None:
    """The read sign-in, done in this process (the CLI's own flow is tested above)."""
    person = Person("normal")
    async with http_client() as http:
        new = await oauth_sign_in(lab.mcp_url, show_url=person.show, http=http, timeout_seconds=30)
        await person.done()
        await store_sign_in(
            load_settings(env), new, sandbox=False, read_tools=READ_TOOLS_OF_EPIPHAN, http=http
        )


async def test_login_sandbox_with_a_pasted_address_and_logout_revoking_it(lab, tmp_path):
    env = cli_env(tmp_path, lab)
    await normal_signed_in(env, lab)
    status, out, err = await fleetwatch(env, "login", "--sandbox", "--paste", team="sandbox", paste=True)
    assert status == 0, err
    assert "Paste the address" in out and f"team {lab.teams['sandbox'].team_id}" in out
    slot = load_settings(env).sandbox_token_file
    assert read_slot(slot).team_id == lab.teams["sandbox"].team_id
    status, out, err = await fleetwatch(env, "logout", "--sandbox")
    assert (status, err) == (0, "") and "Revoked at the server" in out and not slot.exists()


async def test_login_sandbox_picking_the_normal_team_is_refused_and_nothing_is_stored(lab, tmp_path):
    env = cli_env(tmp_path, lab)
    await normal_signed_in(env, lab)
    status, _out, err = await fleetwatch(env, "login", "--sandbox", "--no-browser", team="normal")
    assert status == 2 and error_code(err) == "sandbox_overlaps"
    assert not load_settings(env).sandbox_token_file.exists()


async def test_login_with_a_token_file_stores_a_static_sign_in(lab, tmp_path):
    env = cli_env(tmp_path / "home", lab)
    token = tmp_path / "token"
    token.write_text(lab.teams["normal"].token)
    token.chmod(0o600)
    status, out, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert status == 0, err
    assert "read sign-in, static" in out
    assert read_slot(load_settings(env).read_token_file).access_token == lab.teams["normal"].token


async def test_login_reports_a_tool_whose_definition_changed_and_still_signs_in(lab, tmp_path):
    env = cli_env(tmp_path / "home", lab)
    token = token_file(tmp_path, lab)
    lab.lab.redefined.change({"tool": "batch_recording", "description": "Record everything."})
    status, out, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert status == 0, err
    last = out.strip().splitlines()[-1]
    assert last.startswith(
        "Epiphan's tool list differs from the reviewed policy (batch_recording: description)"
    )
    assert "fleetwatch tools diff" in last
    env = {**env, "FLEETWATCH_LANGUAGE": "es"}
    status, out, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert status == 0 and "La lista de herramientas de Epiphan difiere" in out, (out, err)
    home = tmp_path / "home"  # the command it names keeps the language and the home
    assert f"vea `FLEETWATCH_HOME={home} fleetwatch tools diff --language es`." in out, out
    lab.lab.redefined.clear()
    status, out, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert status == 0 and "difiere" not in out, (out, err)


async def test_login_and_logout_speak_spanish_with_fleetwatch_language_es(lab, tmp_path):
    env = {**cli_env(tmp_path / "home", lab), "FLEETWATCH_LANGUAGE": "es"}
    token = token_file(tmp_path, lab)
    status, out, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert status == 0, err
    assert out.startswith("Sesión iniciada (sesión de lectura, token fijo): grupo "), out
    assert " dispositivos" in out and "Guardada en " in out and "Signed in" not in out
    slot = load_settings(env).read_token_file
    status, out, err = await fleetwatch(env, "logout")
    assert status == 0 and out.startswith(f"Se borró {slot}"), (out, err)
    status, out, _ = await fleetwatch(env, "logout", "--language", "es")
    assert status == 0 and out == f"No hay sesión iniciada en {slot}: no hay nada que hacer.\n"
    english = cli_env(tmp_path / "home", lab)
    status, out, _ = await fleetwatch(english, "logout")
    assert status == 0 and out == f"No sign-in in {slot}: nothing to do.\n"


async def test_sign_in_errors_are_said_in_spanish_with_paths_and_codes_as_they_are(lab, tmp_path):
    env = {**cli_env(tmp_path / "home", lab), "FLEETWATCH_LANGUAGE": "es"}
    token = token_file(tmp_path, lab, 0o644)
    status, _, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert (
        status == 2 and err == f"fleetwatch: {token}: modo 644; primero déjelo en 600 [sign_in_failed]\n"
    ), err
    token.write_text("\n")
    token.chmod(0o600)
    status, _, err = await fleetwatch(env, "login", "--token-file", str(token))
    assert status == 2 and err == f"fleetwatch: {token}: no contiene ningún token [sign_in_failed]\n", err
    # the person pastes nothing (stdin ends)
    status, out, err = await fleetwatch(env, "login", "--paste", stdin_ends=True)
    assert status == 2 and "Pegue la dirección" in out, (out, err)
    assert err == "fleetwatch: no se pegó ninguna dirección [sign_in_failed]\n", err
    status, _, err = await fleetwatch(cli_env(tmp_path / "home", lab), "login", "--paste", stdin_ends=True)
    assert status == 2 and err == "fleetwatch: no address was pasted [sign_in_failed]\n", err
    await normal_signed_in(env, lab)
    status, _out, err = await fleetwatch(env, "login", "--sandbox", "--no-browser", team="normal")
    assert (
        status == 2
        and error_code(err) == "sandbox_overlaps"
        and error_message(err).startswith("el inicio de sesión sandbox ve ")
    ), err
    assert "se rechazó y se olvidó" in err and "devices" not in err, err
