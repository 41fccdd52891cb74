"""The store on a disk that fills up, and on one that turns read-only: every write is refused
with one clear code (``store_full``, ``store_read_only``), nothing is half-written (the state
tables and the audit chain are as before), and once space or write access returns the same
request goes through. The store lives on a small tmpfs of its own (root only: ``mount``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import ClientSession

from shared.errors import Code
from shared.web.guards import CODE_HEADER
from shared.wire.approval import ApprovalClient, SubmitProposal
from shared.wire.client import CallError
from tests.e2e.stack import running_stack
from tests.reliability.fleet import START_RECORDING
from tests.reliability.services import Services, running_services
from tests.support import store_rows

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root to mount a tmpfs"
)

DISK_BYTES = 8 * 1024 * 1024


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def small_disk(folder: Path) -> Iterator[Path]:
    """A tmpfs of `DISK_BYTES` mounted on `folder` for the block."""
    folder.mkdir(parents=True)
    mount("-t", "tmpfs", "-o", f"size={DISK_BYTES},mode=0700", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True, timeout=30)


def fill(folder: Path) -> Path:
    """Write a filler file until the disk is full; the file."""
    filler = folder / "filler"
    with filler.open("wb") as sink, contextlib.suppress(OSError):
        while True:
            sink.write(b"\0" * 65536)
            sink.flush()
    with contextlib.suppress(OSError), filler.open("ab") as sink:
        while True:
            sink.write(b"\0")
            sink.flush()
    return filler


async def login(services: Services) -> tuple[int, str | None]:
    """Sign in to the approval page: (status, its Fleetwatch-Code header)."""
    origin = services.stack.url.rstrip("/")
    headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    async with ClientSession(base_url=origin) as session:
        response = await session.post(
            "/login", data={"secret": services.stack.secret}, headers=headers, allow_redirects=False
        )
        return response.status, response.headers.get(CODE_HEADER)


def proposal() -> SubmitProposal:
    tool, arguments = START_RECORDING
    return SubmitProposal(tool=tool, arguments=arguments, reason="Class starts soon.", proposed_by="operator")


async def test_a_store_that_cannot_be_written_refuses_clearly_writes_nothing_half_and_recovers(
    tmp_path: Path,
) -> None:
    """First the disk fills under the running services, then (they stopped: a disk cannot turn
    read-only under a running writer, the kernel refuses the remount while a file is open for
    writing) it turns read-only between two starts."""
    with small_disk(tmp_path / "disk") as disk:
        db = disk / "fleetwatch.db"
        async with running_services(tmp_path / "home", assistant=False, FLEETWATCH_DB=str(db)) as services:
            client = ApprovalClient(services.stack.settings.approval_socket)
            before, audit_rows = await services.state(), await services.audit_rows()
            filler = fill(disk)
            with pytest.raises(CallError) as refused:
                await client.call(proposal())
            assert refused.value.code == Code.STORE_FULL
            sessions = await store_rows(db, "SELECT * FROM sessions")
            status, code = await login(services)
            assert (status, code) == (503, Code.STORE_FULL)
            assert await store_rows(db, "SELECT * FROM sessions") == sessions
            assert await services.state() == before
            assert await services.audit_rows() == audit_rows and await services.audit_ok()
            assert services.alive(), services.logs()
            filler.unlink()
            assert (await login(services))[0] == 303
            accepted = await client.call(proposal())
            assert [row[0] for row in (await services.state())["proposals"]] == [accepted.proposal_id]
            assert await services.audit_ok()
            env = dict(services.stack.approval_web.env)
        before, audit_rows = await read_only_view(db), await services.audit_rows()
        mount("-o", "remount,ro", str(disk))
        try:
            runs = await asyncio.gather(
                *(run_module(m, env) for m in ("services.executor", "services.approval_web"))
            )
            for status, out in runs:
                assert status == 2, out
                assert f"[{Code.STORE_READ_ONLY}]" in out and "Traceback" not in out, out
        finally:
            mount("-o", "remount,rw", str(disk))
        assert await read_only_view(db) == before
        assert await store_rows(db, "SELECT * FROM audit ORDER BY seq") == audit_rows
        async with running_stack(tmp_path / "home2", FLEETWATCH_DB=str(db)) as stack:
            rows = await store_rows(db, "SELECT id, status FROM proposals")
            assert [row["id"] for row in rows] == [accepted.proposal_id]
            again = await ApprovalClient(stack.settings.approval_socket).call(proposal())
            assert again.proposal_id != accepted.proposal_id


async def read_only_view(db: Path) -> list[dict[str, object]]:
    """The proposals, read through a read-only URI (works on a read-only disk)."""
    return await store_rows(db, "SELECT * FROM proposals ORDER BY id")


async def run_module(module: str, env: dict[str, str]) -> tuple[int, str]:
    """``python -m MODULE`` with `env` until it exits (bounded): (status, its output)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(errors="replace")
