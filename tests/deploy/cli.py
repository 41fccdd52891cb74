"""Running ``fleetwatch doctor --json`` as a real process, as an operator would."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DoctorRun:
    status: int
    report: dict[str, Any]
    stderr: str

    def check(self, name: str) -> dict[str, str]:
        """The check called `name`: ``{name, level, message}``."""
        found = [c for c in self.report["checks"] if c["name"] == name]
        assert len(found) == 1, [c["name"] for c in self.report["checks"]]
        return found[0]

    def failures(self) -> list[dict[str, str]]:
        return [c for c in self.report["checks"] if c["level"] == "FAIL"]


async def doctor(env: dict[str, str], timeout_seconds: float = 60) -> DoctorRun:
    """``python -m services.ctl.main doctor --json`` with exactly `env`."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.ctl.main",
        "doctor",
        "--json",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout_seconds)
    assert process.returncode is not None
    return DoctorRun(process.returncode, json.loads(out), err.decode())
