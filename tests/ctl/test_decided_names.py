"""Issue 28, item 3: the room and the person on the outcome page come from the proposal's
recorded facts, whoever decided and whatever ended it. Item 8: the read-only commands read the
store while the services are stopped, and say so.

A change drafted with ``fleetwatch propose`` against the real executor and the campus lab
(the names are read at Prepare and recorded with the proposal), then ended by
``fleetwatch deny`` or by approval_web restarting between Approve and the executor's claim;
the real approval_web's page is read in English and in Spanish. Then approval_web stops and
``pending show``, ``audit tail``, ``audit verify`` and ``status`` read the store.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import aiohttp
import pytest
import pytest_asyncio

from services.assistant.watch.store import WatchStore
from services.assistant.watch.times import utc_text
from shared.store.approvals import approve
from shared.store.db import db_now
from shared.text.display import account_name
from tests.approval_web.helpers import SANDBOX_DEVICES, Backend, Stack, backend, reader, stack
from tests.ctl.cli import fleetwatch_async
from tests.support import free_port, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

MINI = SANDBOX_DEVICES[1]
"""The lab's "Sandbox Pearl Mini", recording on channel 1 ("Program")."""
ME = account_name(os.getuid())


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("names")) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def cli(shared: Backend) -> AsyncIterator[Stack]:
    """A running approval_web (its page on a port of its own) beside the module's executor."""
    async with stack(shared, FLEETWATCH_APPROVE_PORT=str(free_port())) as running:
        yield running


async def fleetwatch(s: Stack, *argv: str) -> tuple[int, str, str]:
    """``fleetwatch ARGV`` as an operator of `s` runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env |= {k: v for k, v in s.env.items() if k.startswith("FLEETWATCH_")}
    return await fleetwatch_async(env, *argv)


async def draft_stop(s: Stack) -> str:
    code, out, err = await fleetwatch(
        s,
        "propose",
        "batch_recording",
        "--arg",
        "action=stop",
        "--arg",
        f'device_ids=["{MINI}-1"]',
        "--reason",
        "the rehearsal is over",
        "--json",
    )
    assert code == 0, err
    return str(json.loads(out)["proposal_id"])


async def named_pages(s: Stack, proposal_id: str, who_en: str, who_es: str) -> tuple[str, str]:
    """The outcome page of `proposal_id` in English and in Spanish, each checked to name the
    room and its channel by name (never by device ID) and who decided (`who_en`, `who_es`)."""
    english, spanish = await outcome_page(s, proposal_id, "en"), await outcome_page(s, proposal_id, "es")
    assert "Stop recording: “Sandbox Pearl Mini”, channel 1 (“Program”)" in english and who_en in english
    assert "Detener grabación: «Sandbox Pearl Mini», canal 1 («Program»)" in spanish and who_es in spanish
    for text in (english, spanish):
        assert f"dispositivo {MINI}" not in text and f"device {MINI}" not in text
    return english, spanish


async def outcome_page(s: Stack, proposal_id: str, language: str) -> str:
    """The outcome page of `proposal_id` as a signed-in browser reads it in `language`."""
    origin = f"http://127.0.0.1:{s.settings.approve_port}"
    service = s.approval_web
    secret_file = s.settings.approve_secret_file
    await wait_until(secret_file.exists, what="the page's secret", process=service.process, log=service.log)
    secret = secret_file.read_text().strip()
    headers = {"Accept-Language": language}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), headers=headers) as http:
        login = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
        async with http.post(f"{origin}/login", data={"secret": secret}, headers=login) as signed:
            assert signed.status == 200, await signed.text()
        async with http.get(f"{origin}/outcome/{proposal_id}") as page:
            text = await page.text()
            assert page.status == 200, text
    return text


async def test_a_change_denied_from_the_command_line_keeps_its_room_and_says_who_in_words(
    cli: Stack,
) -> None:
    proposal_id = await draft_stop(cli)
    code, _, err = await fleetwatch(cli, "deny", proposal_id)
    assert code == 0, err
    english, spanish = await named_pages(
        cli,
        proposal_id,
        f"Denied from the command line by {ME}",
        f"Rechazado desde la línea de comandos por {ME}",
    )
    for text in (english, spanish):
        assert "uid" not in text and "operator" not in text
    cli.lab.state.devices[MINI].name = "Renamed since"  # the command names it as it was proposed
    code, out, err = await fleetwatch(cli, "pending", "show", proposal_id)
    assert code == 0 and out.startswith("Stop recording: “Sandbox Pearl Mini”, channel 1 (“Program”)"), (
        out + err
    )


async def test_a_change_ended_before_the_claim_keeps_its_room_and_its_approver(
    cli: Stack,
) -> None:
    proposal_id = await draft_stop(cli)
    async with reader(cli.settings) as conn:  # Approve as the page records it, the card's facts lost
        approved = await approve(
            conn,
            proposal_id=proposal_id,
            session_id="s-gone",
            card_hash="c" * 64,
            facts_hash="f" * 64,
            facts=None,
            shown_at=await db_now(conn),
            ttl_seconds=300,
            uid=os.getuid(),
        )
    assert approved.ok
    await cli.restart_approval_web()  # a stop before the claim: nothing can run it now
    english, spanish = await named_pages(
        cli,
        proposal_id,
        f"Approved on the approval page by {ME}",
        f"Aprobado en la página de aprobación por {ME}",
    )
    for text in (english, spanish):
        assert "approval_web" not in text and "another browser session" not in text


async def test_the_read_only_commands_read_the_store_while_the_services_are_stopped_and_say_so(
    cli: Stack,
) -> None:
    proposal_id = await draft_stop(cli)
    code, _, err = await fleetwatch(cli, "deny", proposal_id)
    assert code == 0, err
    await cli.approval_web.stop()
    db = str(cli.settings.db)
    said = {
        "en": f"The services are stopped; read from the store at {db}.",
        "es": f"Los servicios están detenidos; se leyó del almacén en {db}.",
    }
    for language in ("en", "es"):
        code, out, err = await fleetwatch(cli, "pending", "show", proposal_id, "--language", language)
        assert code == 0 and said[language] in err, out + err
        change = {
            "en": "Stop recording: “Sandbox Pearl Mini”",
            "es": "Detener grabación: «Sandbox Pearl Mini»",
        }
        assert out.startswith(change[language]), out
        code, out, err = await fleetwatch(cli, "audit", "tail", "-n", "5", "--language", language)
        assert code == 0 and said[language] in err and proposal_id in out, out + err
        code, out, err = await fleetwatch(cli, "status", "--language", language)
        assert code == 0 and said[language] in err, out + err
        executor = {
            "en": ("Executor:", "not asked: the services are stopped"),
            "es": ("Ejecutor:", "no se le preguntó: los servicios están detenidos"),
        }[language]
        line = next(x for x in out.splitlines() if x.startswith(executor[0]))
        assert line.split(None, 1)[1] == executor[1], out
    # walk item 7: on the lab, after ``down``, status judged the fence by this terminal's settings
    # ("NOT configured") beside "can propose changes"; the services run with up's demo environment
    lab_home = {
        k: v
        for k, v in cli.env.items()
        if k not in ("FLEETWATCH_WRITE_DEVICE_IDS", "FLEETWATCH_WRITE_TEAM_ID")
    }
    lab_home["FLEETWATCH_LAB_PORT"] = cli.env["FLEETWATCH_EPIPHAN_MCP_URL"].rsplit(":", 1)[1].split("/")[0]
    for language, fence in (("en", "configured"), ("es", "configurada")):
        code, out, err = await fleetwatch_async(lab_home, "status", "--language", language)
        assert code == 0 and said[language] in err, out + err
        (line,) = [line for line in out.splitlines() if line.startswith(("Fence:", "Cerca:"))]
        assert line.split(":", 1)[1].strip() == fence, out
    code, out, err = await fleetwatch(cli, "audit", "verify")
    assert code == 1 and said["en"] in err, out + err
    assert out.startswith("The audit chain holds (") and "but its MACs were not checked" in out, out
    assert "approval_web: not checked" in out and "BROKEN" not in out, out
    code, out, err = await fleetwatch(cli, "audit", "verify", "--language", "es")
    assert code == 1 and said["es"] in err and "pero sus MAC no se comprobaron" in out, out + err
    code, out, err = await fleetwatch(cli, "pending", "show", "p-000000000000")
    assert code == 2 and "proposal_not_found" in err, out + err
    async with reader(cli.settings) as conn:  # nothing was written: the last row is still the denial
        async with conn.execute("SELECT kind FROM audit ORDER BY seq DESC LIMIT 1") as cursor:
            assert [r[0] for r in await cursor.fetchall()] == ["denial"]


async def test_history_reads_the_watch_store_and_the_proposals_while_the_services_are_stopped(
    cli: Stack,
) -> None:
    proposal_id = await draft_stop(cli)
    code, _, err = await fleetwatch(cli, "deny", proposal_id)
    assert code == 0, err
    store = await WatchStore.connect(cli.settings.watch_db)  # what a running watch kept
    try:
        await store.set_note(
            utc_text(datetime.now(UTC)), MINI, "Sandbox Pearl Mini", "the lamp is dim", os.getuid()
        )
    finally:
        await store.close()
    await cli.approval_web.stop()
    watch_db = cli.settings.watch_db
    for language, said, words in (
        (
            "en",
            f"The services are stopped; read from the store at {watch_db}.",
            "Stop recording: “Sandbox Pearl Mini”",
        ),
        ("es", f"Los servicios están detenidos; se leyó del almacén en {watch_db}.", "Detener"),
    ):
        code, out, err = await fleetwatch(cli, "history", "--language", language)
        assert code == 0 and said in err, out + err
        assert "the lamp is dim" in out and words in out and "could not be read" not in out, out
