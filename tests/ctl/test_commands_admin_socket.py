"""``fleetwatch`` admin commands end to end: ``main`` called in-process (in a thread: it runs
its own event loop) against a real approval_web and a real executor over their sockets, with
the campus lab as Epiphan."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from services.ctl.main import main
from tests.approval_web.helpers import SANDBOX_DEVICES, Backend, Stack, backend, reader, stack
from tests.ctl.cli import error_code, error_message, sign_in_home

pytestmark = pytest.mark.asyncio(loop_scope="module")

A, B, C = SANDBOX_DEVICES


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    async with backend(tmp_path_factory.mktemp("ctl")) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def cli(shared: Backend, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Stack]:
    """A running approval_web, and this process's ``FLEETWATCH_*`` set to its environment."""
    async with stack(shared) as running:
        for key in [k for k in os.environ if k.startswith("FLEETWATCH_")]:
            monkeypatch.delenv(key)
        for key, value in running.env.items():
            if key.startswith("FLEETWATCH_"):
                monkeypatch.setenv(key, value)
        yield running


async def fleetwatch(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``fleetwatch ARGV``; (exit status, stdout, stderr)."""
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def test_an_operator_drafts_lists_shows_and_denies_a_proposal_through_the_socket(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = await fleetwatch(
        capsys,
        "propose",
        "batch_reboot",
        "--arg",
        f'device_ids=["{A}"]',
        "--reason",
        "frozen \u202eroom",
        "--json",
    )
    assert code == 0
    proposal_id = json.loads(out)["proposal_id"]

    code, out, _ = await fleetwatch(capsys, "pending", "list", "--json")
    items = json.loads(out)["items"]
    assert code == 0 and [(i["proposal_id"], i["proposed_by"]) for i in items] == [(proposal_id, "operator")]

    code, out, _ = await fleetwatch(capsys, "pending", "list")
    # The room by its name, read afresh through the executor; aligned columns in words.
    assert out.startswith("Waiting for a person on the approval page: 1\n  Change")
    assert "Restart a device  “Sandbox Pearl-2”  an operator" in out and proposal_id in out

    code, out, _ = await fleetwatch(capsys, "pending", "show", proposal_id)
    assert out.startswith(f"Restart a device: “Sandbox Pearl-2”  ({proposal_id})")
    assert (
        code == 0
        and re.search(rf'device_ids +\["{A}"\]', out)
        and "⟦U+202E⟧room" in out
        and "\u202e" not in out
    )

    code, out, _ = await fleetwatch(capsys, "pending", "show", proposal_id, "--language", "es")
    assert code == 0 and re.search(r"\n  Estado +pendiente: espera la decisión de una persona\n", out)
    assert "pending" not in out.split("Para una auditoría")[0]

    code, out, _ = await fleetwatch(capsys, "pending", "show", proposal_id, "--json")
    assert "\u202e" not in out and json.loads(out)["reason"] == "frozen \u202eroom"

    code, out, _ = await fleetwatch(capsys, "deny", proposal_id)
    assert code == 0 and out.startswith(f"Denied {proposal_id}")

    code, out, err = await fleetwatch(capsys, "deny", proposal_id)
    assert code == 2 and out == ""
    assert error_code(err) == "proposal_not_pending" and err.count("\n") == 1
    # The service's refusals in catalogue words: said whole in Spanish, the state named, no English.
    code, out, err = await fleetwatch(capsys, "deny", proposal_id, "--language", "es")
    assert code == 2 and err == (
        f"fleetwatch: la propuesta {proposal_id} fue rechazada; ya no está pendiente [proposal_not_pending]\n"
    ), err
    code, out, err = await fleetwatch(capsys, "pending", "show", "p-000000000000", "--language", "es")
    assert code == 2 and err == (
        "fleetwatch: ninguna propuesta tiene el ID p-000000000000 [proposal_not_found]\n"
    ), err
    code, out, err = await fleetwatch(capsys, "pending", "show", "p-000000000000")
    assert code == 2 and err == "fleetwatch: no proposal p-000000000000 [proposal_not_found]\n", err


async def test_deny_all_pause_resume_status_and_the_audit_commands(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    for device in (A, B):
        code, out, _ = await fleetwatch(
            capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{device}"]', "--reason", "r"
        )
        assert code == 0 and "still needs a person" in out

    code, out, _ = await fleetwatch(capsys, "status", "--json")
    assert json.loads(out)["pending"] == 2
    code, out, _ = await fleetwatch(capsys, "deny-all", "--json")
    assert json.loads(out) == {"op": "count", "count": 2}

    code, out, _ = await fleetwatch(capsys, "pause")
    assert code == 0 and "paused" in out
    code, out, _ = await fleetwatch(capsys, "status")
    assert "Kill switch:  ON" in out and "0 of 3 pending" in out
    code, out, _ = await fleetwatch(capsys, "resume", "--json")
    assert json.loads(out)["kill_switch"] is False

    code, out, _ = await fleetwatch(capsys, "audit", "tail", "-n", "5", "--json")
    kinds = ["denial", "kill_switch", "kill_switch_sealed", "kill_switch", "kill_switch_sealed"]
    assert [r["kind"] for r in json.loads(out)["rows"]] == kinds
    code, out, _ = await fleetwatch(capsys, "audit", "tail")
    assert code == 0 and "proposed" in out and "denied" in out and "kill switch" in out
    code, out, _ = await fleetwatch(capsys, "audit", "verify")
    assert code == 0 and "verifies" in out

    # Drafting while writes are paused: said plainly before the draft is sent.
    await fleetwatch(capsys, "pause")
    code, out, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{A}"]', "--reason", "r"
    )
    assert err.startswith("warning: writes are paused (the kill switch is on)"), err
    await fleetwatch(capsys, "deny-all")
    await fleetwatch(capsys, "resume")


async def test_propose_warns_when_the_executor_would_refuse_the_change_right_now_and_why(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    # B is recording: the executor's own Inspect (the checks Execute runs) would refuse a
    # restart now; the draft is still stored (a person may deny it), and the warning says why.
    code, out, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{B}"]', "--reason", "r", "--json"
    )
    assert code == 0, err
    proposal_id = json.loads(out)["proposal_id"]
    assert err.startswith(
        "warning: the executor would refuse this change right now: the room is recording, and this change "
        "would disrupt it."
    ), err
    assert "target_recording" not in err
    assert err.count("\n") == 1
    # A is idle and on the fence: nothing to warn about.
    code, out, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{A}"]', "--reason", "r"
    )
    assert code == 0 and err == "", err
    # With the kill switch on, both say so: the status's warning first, then the executor's.
    await fleetwatch(capsys, "deny-all")
    await fleetwatch(capsys, "pause")
    code, out, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{A}"]', "--reason", "r"
    )
    lines = err.splitlines()
    assert code == 0 and lines[0].startswith("warning: writes are paused (the kill switch is on)"), err
    assert lines[1].startswith(
        "warning: the executor would refuse this change right now: writes are paused (the kill switch is on)."
    ), err
    await fleetwatch(capsys, "deny", proposal_id)
    await fleetwatch(capsys, "deny-all")
    await fleetwatch(capsys, "resume")


async def test_a_denial_pause_is_shown_in_words_and_an_operator_lifts_it_by_the_rooms_name(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    reboot = ("propose", "batch_reboot", "--arg", f'device_ids=["{A}"]', "--reason", "frozen", "--json")
    for _ in range(3):
        code, out, _ = await fleetwatch(capsys, *reboot)
        assert code == 0, out
        assert (await fleetwatch(capsys, "deny", json.loads(out)["proposal_id"]))[0] == 0
    code, _, err = await fleetwatch(capsys, *reboot)
    assert code == 2 and error_code(err) == "denial_pause"
    code, out, _ = await fleetwatch(capsys, "status")
    assert f"Paused:       reboot in “Sandbox Pearl-2” ({A}) is paused until " in out
    assert (
        f"lift it: FLEETWATCH_HOME={os.environ['FLEETWATCH_HOME']} fleetwatch resume --denials batch_reboot {A}"
        in out
    )

    code, _, err = await fleetwatch(capsys, "resume", "--denials", "batch_reboot")
    assert (
        code == 2
        and error_code(err) == "invalid_arguments"
        and error_message(err).startswith("name both TOOL and ROOM")
    )
    code, _, err = await fleetwatch(capsys, "resume", "--denials", "batch_reboot", "Nowhere Hall")
    assert code == 2 and error_code(err) == "no_such_pause"
    assert error_message(err) == "no denial pause of batch_reboot on Nowhere Hall is running", err
    # The service's refusal carries its catalogue words: said in Spanish, nothing English left.
    code, _, err = await fleetwatch(
        capsys, "resume", "--denials", "batch_reboot", "Nowhere Hall", "--language", "es"
    )
    assert code == 2 and error_code(err) == "no_such_pause"
    assert error_message(err) == "no hay ninguna pausa por rechazos de batch_reboot en Nowhere Hall", err
    code, out, _ = await fleetwatch(capsys, "resume", "--denials", "batch_reboot", "Sandbox Pearl-2")
    assert code == 0 and out.startswith("Lifted 1 denial pause;") and "Sandbox Pearl-2" in out
    code, out, _ = await fleetwatch(capsys, "status", "--json")
    assert json.loads(out)["pauses"] == [] and json.loads(out)["kill_switch"] is False
    code, out, _ = await fleetwatch(capsys, "audit", "tail", "-n", "1", "--json")
    (row,) = json.loads(out)["rows"]
    assert (row["kind"], row["detail"]["tool"], row["detail"]["target"]) == ("denial_lift", "batch_reboot", A)
    assert (await fleetwatch(capsys, *reboot))[0] == 0
    code, out, _ = await fleetwatch(capsys, "resume", "--denials")
    assert code == 0 and out.startswith("No denial pause was running")


async def test_acknowledging_a_change_that_never_ran_is_a_one_line_refusal(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{B}"]', "--reason", "r", "--json"
    )
    code, _, err = await fleetwatch(capsys, "acknowledge", json.loads(out)["proposal_id"])
    assert code == 2 and error_code(err) == "nothing_to_acknowledge" and err.count("\n") == 1


async def test_audit_verify_exits_1_naming_the_first_edited_row(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    async with reader(cli.settings) as conn:
        async with conn.execute("SELECT sql FROM sqlite_master WHERE name = 'audit_no_update'") as cursor:
            trigger = (await cursor.fetchone())[0]
        async with conn.execute("SELECT seq, actor FROM audit ORDER BY seq LIMIT 1") as cursor:
            seq, actor = await cursor.fetchone()
        await conn.execute("DROP TRIGGER audit_no_update")
        await conn.execute("UPDATE audit SET actor = 'someone else' WHERE seq = ?", (seq,))
        try:
            code, out, _ = await fleetwatch(capsys, "audit", "verify", "--json")
            assert code == 1 and json.loads(out)["first_bad_seq"] == seq
            code, out, _ = await fleetwatch(capsys, "audit", "verify")
            assert code == 1 and f"BROKEN at row {seq}" in out
        finally:  # the module's store is shared: put the row and the trigger back
            await conn.execute("UPDATE audit SET actor = ? WHERE seq = ?", (actor, seq))
            await conn.execute(trigger)
    code, out, _ = await fleetwatch(capsys, "audit", "verify")
    assert code == 0


async def test_a_refused_draft_and_a_stopped_service_are_one_line_user_errors(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", 'device_ids=["all"]', "--reason", "r"
    )
    assert (
        code == 2
        and error_code(err) == "invalid_arguments"
        and error_message(err).startswith("$.device_ids")
        and err.count("\n") == 1
    )
    # In Spanish: the code's words, then the service's English detail marked as such (issue 28).
    code, _, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", 'device_ids=["all"]', "--reason", "r", "--language", "es"
    )
    said = error_message(err)
    assert code == 2 and error_code(err) == "invalid_arguments", err
    assert said.startswith("los argumentos no coinciden con el esquema revisado de la herramienta."), said
    assert "(el servicio lo dijo en inglés: $.device_ids" in said, said
    code, _, err = await fleetwatch(capsys, "propose", "batch_reboot", "--arg", "oops", "--reason", "r")
    assert (
        code == 2
        and error_code(err) == "invalid_arguments"
        and error_message(err).startswith("--arg needs KEY=VALUE")
    )
    code, _, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{C}"]', "--reason", "r"
    )
    assert code == 2 and error_code(err) == "target_not_allowlisted"
    # In Spanish the code in words first, then the service's English sentence marked as such.
    code, _, err = await fleetwatch(
        capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{C}"]', "--reason", "r", "--language", "es"
    )
    assert code == 2 and err == (
        "fleetwatch: un dispositivo no está en la lista de dispositivos que "
        "Fleetwatch puede cambiar. (el servicio lo dijo en inglés: Sandbox Nano (29088800003) is not on "
        "FLEETWATCH_WRITE_DEVICE_IDS.) [target_not_allowlisted]\n"
    ), err
    assert cli.lab.writes() == []
    await cli.approval_web.stop()
    code, out, err = await fleetwatch(
        capsys, "deny-all"
    )  # a change needs the service (status reads the store)
    assert (
        code == 2
        and out == ""
        and error_code(err) == "service_unavailable"
        and error_message(err).startswith("Fleetwatch is not running here (FLEETWATCH_HOME=")
        and "(approval_web is not running" in err
    )


async def test_audit_export_prints_every_row_with_its_chain_position_and_mac_as_the_store_holds_it(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    await fleetwatch(capsys, "propose", "batch_reboot", "--arg", f'device_ids=["{A}"]', "--reason", "r")
    code, out, _ = await fleetwatch(capsys, "audit", "export")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and lines and out.isascii()
    async with reader(cli.settings) as conn:
        async with conn.execute(
            "SELECT seq, prev_hash, hash, writer, mac, detail_json FROM audit ORDER BY seq"
        ) as cursor:
            stored = [tuple(r) for r in await cursor.fetchall()]
    assert [
        (r["seq"], r["prev_hash"], r["hash"], r["writer"], r["mac"], r["detail_json"]) for r in lines
    ] == stored
    code, out, _ = await fleetwatch(capsys, "audit", "export", "--since", "2999-01-01")
    assert code == 0 and out == ""
    code, out, err = await fleetwatch(capsys, "audit", "export", "--since", "yesterday")
    assert code == 2 and "invalid_message" in err


async def test_audit_decisions_reports_each_person_through_the_socket(
    cli: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = await fleetwatch(capsys, "audit", "decisions", "--days", "7", "--json")
    report = json.loads(out)
    assert code == 0 and report["days"] == 7 and report["threshold_seconds"] == 3
    code, out, _ = await fleetwatch(capsys, "audit", "decisions")
    assert code == 0 and "How each person decided in the last 7 days" in out
    code, _, err = await fleetwatch(capsys, "audit", "decisions", "--days", "0")
    assert code == 2 and "invalid_message" in err


async def test_fleet_shows_the_sandbox_rooms_a_change_may_target_under_the_fleet(
    cli: Stack, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Issue 28 item 11: the room the demo proposes for is the sandbox team's, which the read
    # sign-in does not read; ``fleet`` (and the demo's fleet) lists it under the fleet.
    settings = cli.settings
    sign_in_home(settings.home, cli.backend.lab)
    try:
        code, out, err = await fleetwatch(capsys, "fleet")
        assert code == 0, err
        assert out.index("30 devices") < out.index("Rooms a change may target now: 3")
        assert "Sandbox Classroom" in out
        code, out, err = await fleetwatch(capsys, "fleet", "--language", "es")
        assert code == 0, err
        assert "Salas que un cambio puede tocar ahora: 3" in out and "Sandbox Classroom" in out
        code, out, _ = await fleetwatch(capsys, "fleet", "--json")
        data = json.loads(out)
        assert "Rooms a change may target" not in out and data["snapshot"]["devices"]
        sandbox = data["sandbox_rooms"]
        assert len(sandbox["devices"]) == 3 and sandbox["read_at"], sandbox
        assert "Sandbox Classroom" in {d["name"] for d in sandbox["devices"]}, sandbox
        # Nothing answers approval.sock: the fleet still shows, and says the rooms were not read.
        monkeypatch.setenv("FLEETWATCH_RUNTIME_DIR", str(tmp_path))
        code, out, err = await fleetwatch(capsys, "fleet")
        assert code == 0, err
        assert "The rooms a change may target were not read: " in out, out
        assert out.rstrip().endswith("[service_unavailable]"), out
        code, out, err = await fleetwatch(capsys, "fleet", "--language", "es")
        assert "No se leyeron las salas que un cambio puede tocar: " in out, out
        code, out, _ = await fleetwatch(capsys, "fleet", "--json")
        data = json.loads(out)
        assert data["sandbox_rooms"] is None and data["snapshot"]["devices"], data.keys()
        assert data["sandbox_rooms_not_read"]["code"] == "service_unavailable", data["sandbox_rooms_not_read"]
    finally:
        settings.read_token_file.unlink(missing_ok=True)
