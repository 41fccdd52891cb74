"""``fleetwatch capture`` as an operator runs it, against the lab: every read tool once through
the read sign-in, each answer redacted with stable placeholders, a manifest, a private folder,
and refusals before anything is read."""

from __future__ import annotations

import json
import re
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.ctl.commands_capture import compare_arguments
from services.lab.scenario import load_scenario
from services.lab.server import LabHandle, run_lab
from shared.epiphan.capture import read_capture
from shared.epiphan.read_client import READ_TOOLS_OF_EPIPHAN
from tests.captures import capture_leaks, scenario_secrets
from tests.ctl.cli import error_code, error_message, fleetwatch_async, run_cli_async, sign_in_home
from tests.ctl.test_doctor_words import english_words
from tests.procs import base_env

CAMPUS = load_scenario("campus")


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


async def capture(
    lab: LabHandle, home: Path, folder: Path, *flags: str, real_process: bool = False
) -> tuple[int, str, str]:
    sign_in_home(home, lab)
    return await run_cli_async("capture", str(folder), *flags, home=home, real_process=real_process)


def lab_secrets(lab: LabHandle) -> set[str]:
    return scenario_secrets(CAMPUS) | set(lab.lab.tokens.tokens)


async def test_a_capture_reads_every_read_tool_once_and_keeps_each_answer_private(lab, tmp_path):
    folder = tmp_path / "out" / "campus"
    # The capture family's one real-process run: the console script as a shell sees it.
    code, out, err = await capture(lab, tmp_path / "home", folder, real_process=True)
    assert code == 0, err
    assert "Every answer has a shape Fleetwatch reads." in out and "--rename" in out
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "calls").stat().st_mode) == 0o700
    files = list(folder.rglob("*.json"))
    assert len(files) == 21 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    manifest = read_capture(folder).manifest
    assert {c.tool for c in manifest.calls} == READ_TOOLS_OF_EPIPHAN
    assert all(c.error is None and c.problem is None for c in manifest.calls)
    (picture,) = [c for c in manifest.calls if c.tool == "get_channel_image"]
    assert picture.file is None and picture.note == "a picture: never saved"
    assert manifest.placeholders["serial"] == 30 and manifest.placeholders["ip"] == 31  # and the server's
    assert manifest.server.startswith("ip-31.example:") and not manifest.renamed
    assert lab.writes() == []


async def test_a_capture_lists_the_server_s_tools_and_compares_the_proposable_arguments(lab, tmp_path):
    folder = tmp_path / "capture"
    code, out, err = await capture(lab, tmp_path / "home", folder)
    assert code == 0, err
    tools = json.loads((folder / "tools.json").read_text())
    assert len(tools) == 35 and all(set(t) == {"name", "input_schema", "output_schema"} for t in tools)
    manifest = read_capture(folder).manifest
    assert manifest.tools_file == "tools.json" and len(manifest.proposable) == 6
    assert set(manifest.proposable.values()) == {"same arguments"}
    assert "Every proposable tool takes the same arguments as its reviewed schema." in out


def test_a_proposable_tool_whose_server_schema_differs_is_named_with_what_differs():
    reviewed = {"properties": {"device_ids": {}}, "required": ["device_ids"]}
    assert (
        compare_arguments({"properties": {"device_ids": {}}, "required": ["device_ids"]}, reviewed)
        == "same arguments"
    )
    assert compare_arguments(None, reviewed) == "not offered by the server"
    served = {"properties": {"device_ids": {}, "delay": {}}, "required": ["device_ids"]}
    assert compare_arguments(served, reviewed).startswith("differs: the server takes ['delay', 'device_ids']")


async def test_a_capture_holds_no_token_key_credentialed_url_address_or_serial(lab, tmp_path):
    folder = tmp_path / "capture"
    code, _, err = await capture(lab, tmp_path / "home", folder)
    assert code == 0, err
    assert capture_leaks(folder, lab_secrets(lab)) == []
    assert "redacted-secret-" in (folder / "calls" / "015-get_stream_endpoints.json").read_text()


async def test_the_same_secret_has_the_same_placeholder_everywhere_in_a_capture(lab, tmp_path):
    folder = tmp_path / "capture"
    code, _, err = await capture(lab, tmp_path / "home", folder)
    assert code == 0, err
    saved = read_capture(folder)
    (endpoints,) = [d for c, d in saved.answers("get_stream_endpoints")]
    keys = {e["name"]: e["key"] for e in endpoints["stream_endpoints"]}
    (devices,) = [d for c, d in saved.answers("get_devices_in_my_team")]
    settings = [
        s["value"]
        for d in devices["devices"]
        for c in d["Channels"]
        for p in c.get("Publishers", [])
        if p["id"] == "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5"
        for s in p["settings"]
        if s["id"] == "stream"
    ]
    assert len(settings) == 2 and set(settings) == {keys["Main stage (YouTube)"]}
    assert len(set(keys.values()) - {None}) == 2
    serials = [d["SerialNumber"] for d in devices["devices"]]
    assert len(set(serials)) == 30 and all(s.startswith("redacted-serial-") for s in serials)


async def test_rename_replaces_room_group_and_event_names_and_ids_consistently(lab, tmp_path):
    folder = tmp_path / "capture"
    code, out, err = await capture(lab, tmp_path / "home", folder, "--rename")
    assert code == 0, err
    text = "".join(p.read_text() for p in folder.rglob("*.json"))
    normal = CAMPUS.teams.normal
    old = (
        [d.name for _, d in normal.devices()]
        + [g.name for g in normal.groups]
        + [e.title for e in normal.events]
    )
    old += [d.id for _, d in normal.devices()] + [e.id for e in normal.events] + [normal.team_id]
    assert [name for name in old if name in text] == []
    saved = read_capture(folder)
    assert saved.manifest.renamed and "Names were replaced" in out
    (devices,) = [d for c, d in saved.answers("get_devices_in_my_team")]
    names = [d["Name"] for d in devices["devices"]]
    assert names == [f"Room {n:03d}" for n in range(1, 31)]
    (recorder,) = [d for c, d in saved.answers("get_recorder_status_for_devices")]
    assert set(recorder["devices"]) == {d["Id"] for d in devices["devices"]}
    assert [
        c.arguments["device_ids"] for c in saved.manifest.calls if c.tool == "get_system_status_for_devices"
    ] == [[d["Id"] for d in devices["devices"]]]


async def test_a_folder_inside_a_git_checkout_is_refused_before_anything_is_read(tmp_path):
    checkout = tmp_path / "repo"
    (checkout / ".git").mkdir(parents=True)
    code, _, err = await run_cli_async(
        "capture", str(checkout / "captures" / "first"), home=tmp_path / "home"
    )
    assert code == 2 and error_code(err) == "capture_refused" and "--in-checkout" in err
    assert not (checkout / "captures").exists()


async def test_in_checkout_allows_a_folder_inside_a_git_checkout(lab, tmp_path):
    checkout = tmp_path / "repo"
    (checkout / ".git").mkdir(parents=True)
    code, _, err = await capture(lab, tmp_path / "home", checkout / "capture", "--in-checkout")
    assert code == 0, err


async def test_a_folder_that_is_not_empty_is_refused(lab, tmp_path):
    folder = tmp_path / "capture"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    code, _, err = await capture(lab, tmp_path / "home", folder)
    assert code == 2 and "capture_refused" in err and (folder / "notes.txt").read_text() == "mine"


async def test_without_a_read_sign_in_nothing_is_made(tmp_path):
    code, _, err = await run_cli_async("capture", str(tmp_path / "capture"), home=tmp_path / "home")
    assert code == 2 and error_code(err) == "no_sign_in"
    assert not (tmp_path / "capture").exists()


async def test_a_dead_sign_in_leaves_a_manifest_saying_why(lab, tmp_path):
    lab.set_fault("*", "auth_401")
    code, _, err = await capture(lab, tmp_path / "home", tmp_path / "capture")
    assert code == 2 and "epiphan_auth" in err
    manifest = json.loads((tmp_path / "capture" / "manifest.json").read_text())
    (call,) = manifest["calls"]
    assert call["tool"] == "get_devices_in_my_team" and call["error"]["code"] == "epiphan_auth"


async def test_an_answer_in_no_known_shape_is_kept_and_marked_in_the_manifest(lab, tmp_path):
    lab.set_fault("get_system_status_for_devices", "schema_drift")
    code, out, err = await capture(lab, tmp_path / "home", tmp_path / "capture")
    assert code == 0, err
    (call,) = [
        c
        for c in read_capture(tmp_path / "capture").manifest.calls
        if c.tool == "get_system_status_for_devices"
    ]
    assert call.shape is None and "no known shape" in (call.problem or "") and call.file is not None
    assert "get_system_status_for_devices: get_system_status_for_devices: no known shape" in out


async def test_the_summary_and_the_refusals_are_in_spanish_with_fleetwatch_language_es(lab, tmp_path):
    home = tmp_path / "home"
    sign_in_home(home, lab)
    env = base_env(home, FLEETWATCH_LANGUAGE="es")
    folder = tmp_path / "capture"
    code, out, err = await fleetwatch_async(env, "capture", str(folder))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Se capturaron 20 llamadas en {folder} (20 respondidas, 0 con error).", out
    assert "Cada respuesta tiene una forma que Fleetwatch lee." in lines
    assert (
        "Cada herramienta que se puede proponer recibe los mismos argumentos que su esquema revisado."
        in lines
    )
    replay = f"FLEETWATCH_HOME={folder.parent}/capture-replay fleetwatch"
    assert lines[-6:] == [
        "Para reproducirla sin cuenta, junto a una demostración en marcha (con su propio hogar y puertos "
        "libres donde uno esté ocupado):",
        f"  {replay} up --capture {folder} --free-ports --language es",
        "Luego, en ese hogar: la flota, una pregunta y las páginas que imprimió ese comando; al terminar, "
        "deténgala:",
        f"  {replay} fleet --language es",
        f"  {replay} ask '¿qué está desconectado?' --language es",
        f"  {replay} down --language es",
    ]
    assert "use --rename" in out
    assert [(line, english_words(line)) for line in lines if english_words(line)] == []
    replaced = next(line for line in lines if line.startswith("Reemplazado"))  # issue 28, item 4
    assert "direcciones IP" in replaced or "dirección IP" in replaced, replaced
    assert not re.search(r"\d+ (?:ip|mac|host|serial|secret)\b", replaced), replaced
    code, _, err = await fleetwatch_async(env, "capture", str(folder))
    assert code == 2 and err == (
        f"fleetwatch: {folder} no es una carpeta vacía; una captura necesita una nueva [capture_refused]\n"
    ), err
    checkout = tmp_path / "repo"
    (checkout / ".git").mkdir(parents=True)
    code, _, err = await fleetwatch_async(env, "capture", str(checkout / "first"), "--language", "es")
    assert (
        code == 2
        and error_code(err) == "capture_refused"
        and error_message(err).startswith(f"{checkout / 'first'} está dentro")
    ), err
    assert "--in-checkout" in err and english_words(error_message(err)) == [], err
