"""``fleetwatch tools diff`` and ``doctor --live`` against the lab: Epiphan's tool list as
reviewed, then with a proposable tool's schema changed mid-run (``POST /_lab/tools``): both name
it and what differs, in English and Spanish; restored (``DELETE``), both are quiet again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from services.lab.schemas import INPUT_SCHEMAS
from services.lab.server import LabHandle, run_lab
from shared.policy.definitions import schema_fingerprint
from tests.ctl.cli import run_cli_async, sign_in_home


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab("campus") as handle:
        yield handle


async def lab_tools(lab: LabHandle, method: str, body: dict[str, Any] | None = None) -> None:
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        answer = await http.request(method, "/_lab/tools", json=body)
    assert answer.status_code == 200, answer.text


async def test_the_lab_refuses_a_change_it_cannot_make(lab):
    async with httpx2.AsyncClient(base_url=lab.url) as http:
        for body, words in (
            ({"tool": "format_all", "description": "x"}, "'tool' must name"),
            ({"tool": "batch_reboot"}, "send 'input_schema', 'description' or both"),
            ({"tool": "batch_reboot", "input_schema": {"type": 7}}, "is not a JSON Schema"),
            ({"tool": "batch_reboot", "name": "x"}, "unknown keys"),
        ):
            answer = await http.post("/_lab/tools", json=body)
            assert answer.status_code == 400 and words in answer.json()["error"], answer.text
        assert (await http.get("/_lab/tools")).json() == {"changed": {}}


def tools_check(out: str) -> list[dict[str, str]]:
    return [c for c in json.loads(out)["checks"] if c["name"] == "tools"]


async def test_a_schema_changed_mid_run_is_named_by_tools_diff_and_doctor_until_restored(lab, tmp_path):
    home = tmp_path / "home"
    sign_in_home(home, lab)
    code, out, err = await run_cli_async("tools", "diff", home=home)
    assert (code, out.strip()) == (0, "Every tool Epiphan offers is as reviewed in the policy."), err
    code, out, err = await run_cli_async("doctor", "--live", "--json", home=home)
    assert [c["level"] for c in tools_check(out)] == ["OK"], out

    schema = dict(INPUT_SCHEMAS["batch_reboot"])
    schema["properties"] = {**schema["properties"], "force": {"type": "boolean"}}
    await lab_tools(lab, "POST", {"tool": "batch_reboot", "input_schema": schema})

    code, out, err = await run_cli_async("tools", "diff", home=home)
    assert code == 1, err
    first = out.splitlines()[0]
    assert first.startswith("proposable tool batch_reboot: not proposed or run until reviewed"), out
    assert "input schema" in first and "'force'" in first and "description" not in first
    assert f"input_schema_sha256: {schema_fingerprint(schema)}" in out
    code, out, err = await run_cli_async("tools", "diff", "--language", "es", home=home)
    assert code == 1 and "herramienta proponible batch_reboot" in out and "esquema de entrada" in out, out

    code, out, err = await run_cli_async("doctor", "--live", "--json", home=home)
    (line,) = tools_check(out)
    assert code == 1 and line["level"] == "FAIL", line
    assert "batch_reboot" in line["message"] and "fleetwatch tools diff" in line["message"]

    await lab_tools(lab, "DELETE")
    code, out, err = await run_cli_async("tools", "diff", home=home)
    assert code == 0, out
    code, out, err = await run_cli_async("doctor", "--live", "--json", home=home)
    assert [c["level"] for c in tools_check(out)] == ["OK"], out
