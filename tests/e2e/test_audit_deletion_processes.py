"""A row approval_web appended cannot disappear unseen (issue 24, item 6), with the real
approval_web and executor: a store writer deletes the newest row of one kind milliseconds after
approval_web commits it (on approval.sock or on the page), and ``fleetwatch audit verify``
names it. One stack per kind: the chain stays broken after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.store.db import open_store
from tests.approval_web.page.helpers import forms_of
from tests.e2e.stack import IDLE, Stack, running_stack, signed_in
from tests.reliability.fleet import ctl
from tests.shared.store.tampering import deleting

START = ("batch_recording", {"action": "start", "device_ids": [f"{IDLE}-1"]})


async def newest_seq(stack: Stack) -> int:
    conn = await open_store(stack.settings.db)
    try:
        async with conn.execute("SELECT coalesce(max(seq), 0) FROM audit") as cursor:
            row = await cursor.fetchone()
        return int(row[0])
    finally:
        await conn.close()


async def login_and_approve(stack: Stack, *, approve: bool) -> None:
    """A person signs in on the page (a ``session_start`` row) and, with `approve`, approves the
    card on screen (an ``approval`` row, then Execute)."""
    async with signed_in(stack.url, stack.secret) as (browser, headers):
        if approve:
            form = forms_of(await (await browser.get("/")).text()).forms["/approve"]
            pressed = await browser.post("/approve", data=form, headers=headers, allow_redirects=False)
            assert pressed.status == 303


@pytest.mark.parametrize("kind", ["proposal", "session_start", "approval"])
async def test_a_row_approval_web_wrote_deleted_ms_after_its_commit_is_named(
    tmp_path: Path, kind: str
) -> None:
    async with running_stack(tmp_path / "home") as stack:
        if kind != "proposal":
            await stack.propose(*START)
        async with deleting(stack.settings.db, kind, after=await newest_seq(stack)) as deleter:
            if kind == "proposal":
                await stack.propose(*START)
            else:
                await login_and_approve(stack, approve=kind == "approval")
        assert deleter.deleted is not None, f"no {kind} row was written"
        print(f"{kind}: row {deleter.deleted} deleted {deleter.late_ms:.1f} ms after its at")
        code, out = await ctl(stack.env, "audit", "verify", "--json")
        report = json.loads(out)
        assert (code, report["ok"], report["first_bad_seq"]) == (1, False, deleter.deleted), report
        checks = {c["writer"]: c for c in report["checks"]}
        assert checks["approval_web"]["first_bad_seq"] == deleter.deleted, report
