"""After the read sign-in's access token ends, the first question still answers from the fleet,
and ``fleetwatch fleet`` and ``doctor --live`` refresh as the services do: real processes (the
assistant, the CLI) against the lab, which ends tokens on its own clock and refuses them in-band.

Two ways a token ends: the slot says so (its ``expires_at``, this machine's clock), or Epiphan
does while this machine's clock still says it is valid (the lab's clock moved an hour on).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
import pytest_asyncio

from services.lab.server import LabHandle, run_lab
from shared.epiphan.signin import oauth_sign_in
from shared.epiphan.signin_oauth import http_client
from shared.epiphan.slots import SignIn, read_slot, write_slot
from shared.wire.assistant import Answer, Ask
from shared.wire.client import request
from tests.deploy.person import Person
from tests.procs import ServiceProcess, base_env, start_service

pytestmark = pytest.mark.asyncio(loop_scope="module")
TTL = 3600
"""The campus lab's access token life (lab time)."""


@dataclass
class Setup:
    lab: LabHandle
    env: dict[str, str]
    slot: Path
    assistant: ServiceProcess


async def oauth_read_sign_in(lab: LabHandle) -> SignIn:
    person = Person("normal")
    async with http_client() as http:
        try:
            return await oauth_sign_in(lab.mcp_url, show_url=person.show, http=http, timeout_seconds=30)
        finally:
            await person.done()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    """The lab, an OAuth read sign-in in the read slot, and the assistant (keyword answers: no
    model key) reading through it."""
    home = tmp_path_factory.mktemp("home")
    async with run_lab("campus") as lab:
        env = base_env(home, FLEETWATCH_EPIPHAN_MCP_URL=lab.mcp_url, FLEETWATCH_ASK_PORT="0")
        slot = home / "tokens" / "read.json"
        write_slot(slot, await oauth_read_sign_in(lab))
        assistant = await start_service("services.assistant", env)
        try:
            yield Setup(lab, env, slot, assistant)
        finally:
            await assistant.stop()


async def ask(setup: Setup, question: str) -> Answer:
    reply = await request(setup.assistant.socket, Ask(question=question), Answer, timeout_seconds=60)
    assert isinstance(reply, Answer), reply
    return reply


async def cli(setup: Setup, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.ctl.main",
        *args,
        env=setup.env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_the_first_question_after_epiphan_ended_the_token_answers_from_the_fleet(setup: Setup):
    warm = await ask(setup, "What's offline?")  # the assistant's connection is now warm
    assert warm.code is None and "rooms are offline" in warm.text
    before = read_slot(setup.slot)
    setup.lab.advance(TTL + 60)  # Epiphan's clock: ended; this machine's: valid for an hour
    assert before.expires_at is not None and before.expires_at > time.time()
    answer = await ask(setup, "What's offline?")
    assert answer.code is None and "rooms are offline" in answer.text, answer.text
    assert "could not read" not in answer.text
    assert read_slot(setup.slot).access_token != before.access_token


async def test_the_first_question_after_the_slot_says_the_token_ended_answers_from_the_fleet(setup: Setup):
    before = read_slot(setup.slot)
    write_slot(setup.slot, msgspec.structs.replace(before, expires_at=time.time() - 5))
    answer = await ask(setup, "¿Qué está desconectado?")
    assert answer.code is None and "desconectad" in answer.text, answer.text
    assert read_slot(setup.slot).access_token != before.access_token


async def test_fleet_refreshes_like_the_services(setup: Setup):
    before = read_slot(setup.slot)
    setup.lab.advance(TTL + 60)
    code, out, err = await cli(setup, "fleet", "--json")
    assert code == 0, err
    assert json.loads(out)["snapshot"]["devices"]
    assert read_slot(setup.slot).access_token != before.access_token


async def test_doctor_live_proves_the_read_sign_in_and_names_a_refusal_against_the_local_clock(setup: Setup):
    code, out, _ = await cli(setup, "doctor", "--live", "--json")
    live = {c["name"]: c for c in json.loads(out)["checks"]}["live read"]
    assert live["level"] == "OK" and "Epiphan accepted it" in live["message"], live
    token = setup.lab.issue_token("normal", ttl_seconds=60)  # a token that cannot refresh
    kept = read_slot(setup.slot)
    write_slot(
        setup.slot,
        SignIn(access_token=token, server=setup.lab.mcp_url, kind="lab", expires_at=time.time() + 3600),
    )
    try:
        setup.lab.advance(120)
        code, out, _ = await cli(setup, "doctor", "--live", "--json")
    finally:
        write_slot(setup.slot, kept)
    live = {c["name"]: c for c in json.loads(out)["checks"]}["live read"]
    assert code == 1 and live["level"] == "FAIL", live
    assert live["message"].startswith(
        "refused by Epiphan although this machine's clock says it is valid in"
    ), live
