"""The lab as a real process: ``python -m services.lab``."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import httpx2
import pytest

from services.lab.__main__ import main
from tests.lab.helpers import data_of, open_session
from tests.support import READY_SECONDS, wait_until


async def _wait_for(path: Path, process: asyncio.subprocess.Process) -> dict:
    await wait_until(path.exists, what="the lab's ready file", seconds=READY_SECONDS, process=process)
    return json.loads(path.read_text())


async def test_the_lab_process_serves_the_lab_and_the_model_profile_writes_its_ready_file_and_stops_on_sigterm(tmp_path: Path):
    ready = tmp_path / "lab.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.lab",
        "--port",
        "0",
        "--ready-file",
        str(ready),
        "--anonymous",
        "challenge",
        "--model-profile",
        "ollama",
        "--model-port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        info = await _wait_for(ready, process)
        assert info["pid"] == process.pid
        assert info["mcp_url"] == info["url"] + "/mcp"
        async with httpx2.AsyncClient(base_url=info["url"]) as http:
            state = (await http.get("/_lab/state")).json()
        assert state["settings"]["anonymous"] == "challenge"
        async with httpx2.AsyncClient(base_url=info["model_url"]) as http:
            assert (await http.get("/_lab/model")).json()["profile"] == "ollama"
        sandbox = next(t for t in state["teams"] if t["name"] == "sandbox")
        async with open_session(info["mcp_url"], sandbox["token"]) as session:
            assert len(data_of(await session.call_tool("get_devices_in_my_team", {}))["devices"]) == 4
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), timeout=20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert f"listening on {info['url']}" in out.decode()
    assert sandbox["token"] not in out.decode(), "tokens are printed only on a terminal"
    assert not ready.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scenario", "no-such-scenario"], "cannot read scenario"),
        (["--devices", "0"], "at least one device"),
    ],
)
def test_a_bad_scenario_or_fleet_size_exits_2_with_one_clear_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
):
    assert main([*argv, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fleetwatch lab: ") and message in err
