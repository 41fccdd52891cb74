"""``fleetwatch writable`` as an operator runs it: a real ``fleetwatch`` process asks approval.sock,
approval_web relays to the executor, the executor reads the lab's sandbox team afresh.

The fence allows three sandbox devices and one device of the normal team (19012340101, "SCI 101
Lecture Hall"): only sandbox devices on the allowlist may be changed, so the answer is exactly
those three, never the normal team's room.
"""

from __future__ import annotations

import json
from pathlib import Path

from services.lab.server import LabHandle
from shared.config import REPO_POLICY_DIR
from shared.policy.loader import load_policies
from tests.ctl.cli import fleetwatch_async
from tests.e2e.stack import CLASSROOM, IDLE, NANO, RECORDING, running_stack

NORMAL_ROOM = "19012340101"
ALLOWLIST = (IDLE, RECORDING, CLASSROOM, NORMAL_ROOM)


def sandbox_on_allowlist(lab: LabHandle) -> list[str]:
    """The lab's sandbox team's devices that are on `ALLOWLIST`, ordered by ID."""
    return sorted(set(lab.teams["sandbox"].device_ids) & set(ALLOWLIST))


async def test_writable_json_equals_the_sandbox_devices_on_the_allowlist(tmp_path: Path) -> None:
    async with running_stack(tmp_path / "home", writable=",".join(ALLOWLIST)) as stack:
        code, out, err = await fleetwatch_async(stack.env, "writable", "--json")
        expected = sandbox_on_allowlist(stack.lab)
        es_code, es_out, es_err = await fleetwatch_async(stack.env, "writable", "--language", "es")
        en_code, en_out, en_err = await fleetwatch_async(
            {**stack.env, "FLEETWATCH_TIMEZONE": "Pacific/Kiritimati"}, "writable"
        )
    assert code == 0, err
    data = json.loads(out)
    assert [d["device_id"] for d in data["devices"]] == expected == [IDLE, RECORDING, CLASSROOM]
    assert (
        NANO not in out and NORMAL_ROOM not in out
    )  # on the team but not the fence / on the fence but not the team
    _, tool_policy = load_policies(REPO_POLICY_DIR)
    assert data["proposable_tools"] == sorted(tool_policy.propose)
    assert data["read_at"].endswith("Z")  # --json keeps UTC

    # In words: every room by name with its device ID, channels, and the changes in words.
    assert en_code == 0, en_err
    assert en_out.startswith("Rooms a change may target now: 3 (read "), en_out
    for name, device in (
        ("Sandbox Pearl-2", IDLE),
        ("Sandbox Pearl Mini", RECORDING),
        ("Sandbox Classroom", CLASSROOM),
    ):
        assert f"  “{name}”  —  device {device}, " in en_out  # names quoted (issue 28), en_out
    assert "channel 1 “Lecture”: not recording" in en_out
    assert "Changes that may be proposed for them (* asks to confirm the room):" in en_out
    assert "* Restart a device (batch_reboot): Restart one device." in en_out
    assert "Z" not in en_out.splitlines()[0]  # the read time in the operator's zone, not UTC
    assert es_code == 0, es_err
    assert es_out.startswith("Salas que un cambio puede tocar ahora: 3 (leídas "), es_out
    assert "  «Sandbox Classroom»  —  dispositivo 29088800004, " in es_out
    assert "Cambios que se pueden proponer para ellas (* pide confirmar la sala):" in es_out
    assert "* Reiniciar un dispositivo (batch_reboot): Reiniciar un dispositivo." in es_out
