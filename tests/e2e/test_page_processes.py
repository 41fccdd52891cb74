"""The page in the real approval_web process, with the real executor and the lab: Approve
writes once, however many times it is pressed at once; the secret file lives only while the
page runs; neither page starts while another user holds its port on [::1]."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import ClientSession, CookieJar

from shared.config import load_settings
from tests.approval_web.page.helpers import forms_of
from tests.e2e.stack import IDLE, running_stack
from tests.other_uid import needs_root, other_user, squatting
from tests.procs import base_env


async def test_twenty_concurrent_approves_of_one_card_write_once(tmp_path: Path) -> None:
    async with running_stack(tmp_path / "home") as stack:
        proposal_id = await stack.propose("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
        secret_file = stack.settings.approve_secret_file
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
        assert stack.secret not in stack.approval_web.log_text()
        origin = stack.url.rstrip("/")
        headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
        async with ClientSession(base_url=origin, cookie_jar=CookieJar(unsafe=True)) as browser:
            login = await browser.post(
                "/login", data={"secret": stack.secret}, headers=headers, allow_redirects=False
            )
            assert login.status == 303
            card = await (await browser.get("/")).text()
            assert "Sandbox Pearl-2" in card and "Program" in card and f"{IDLE}-1" in card
            form = forms_of(card).forms["/approve"]
            assert form["proposal_id"] == proposal_id

            async def press() -> tuple[int, str]:
                response = await browser.post("/approve", data=form, headers=headers, allow_redirects=False)
                return response.status, await response.text()

            answers = await asyncio.gather(*(press() for _ in range(20)))
            done = [text for status, text in answers if status == 303]
            refused = [text for status, text in answers if status == 409 and "Nothing ran" in text]
            assert (len(done), len(refused)) == (1, 19)
            outcome = await (await browser.get(f"/outcome/{proposal_id}")).text()
        assert "Done: Epiphan accepted the change." in outcome
        writes = stack.writes()
        assert [(w["tool"], w["arguments"]) for w in writes] == [
            ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})
        ]
        assert "Epiphan shows the change" in outcome
    assert not secret_file.exists()  # deleted at the clean stop


@needs_root
@pytest.mark.parametrize(
    ("module", "args", "port_setting"),
    [
        ("services.approval_web", (), "FLEETWATCH_APPROVE_PORT"),
        ("services.assistant", ("--page",), "FLEETWATCH_ASK_PORT"),
    ],
)
async def test_a_page_does_not_start_while_another_user_holds_its_ipv6_loopback_port_and_names_it(
    tmp_path: Path, module: str, args: tuple[str, ...], port_setting: str
) -> None:
    """Issue 24 #2: a user in no Fleetwatch group listens on [::1]:PORT before the page starts.
    The process stops with ``socket_in_use`` naming the address and that user, and nothing
    serves a secret."""
    user = other_user()
    with squatting("::1") as port:
        env = base_env(tmp_path / "home", FLEETWATCH_WRITE_DEVICE_IDS=IDLE, **{port_setting: str(port)})
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", module, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    said = f"cannot listen on [::1]:{port}: it is taken by uid {user.pw_uid} ({user.pw_name})"
    assert said in done.stderr and done.stderr.rstrip().endswith("[socket_in_use]"), done.stderr
    settings = load_settings(env)
    assert not settings.approve_secret_file.exists() and not settings.ask_secret_file.exists()
