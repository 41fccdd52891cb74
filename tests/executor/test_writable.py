"""ListWritable against the real executor process and the lab: the devices a change may target,
read afresh through the sandbox sign-in, limited by the sandbox list and the allowlist; its
refusals; and that it is read-only (no write, no row, no audit)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.lab.server import LabHandle
from shared.epiphan.slots import SignIn, write_slot
from shared.errors import Code
from shared.wire.executor import Inspection, UpcomingEvent, WritableChannel, WritableDevices
from shared.wire.protocol import ErrorReply
from tests.executor.harness import CLASSROOM, IDLE, NANO, RECORDING, Harness, add_event

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _time(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def listed(harness: Harness) -> WritableDevices:
    reply = await harness.list_writable()
    assert isinstance(reply, WritableDevices), reply
    return reply


async def test_only_sandbox_devices_on_the_allowlist_are_listed_with_their_fresh_state(
    harness: Harness,
) -> None:
    rows, seq = await harness.rows(), await harness.audit_seq()
    reply = await listed(harness)
    assert [d.device_id for d in reply.devices] == [IDLE, RECORDING]
    idle, recording = reply.devices
    assert (idle.name, idle.model, idle.online) == ("Sandbox Pearl-2", "Pearl-2", True)
    assert idle.channels == (
        WritableChannel(channel_id="1", name="Program", recording=False),
        WritableChannel(channel_id="2", name="Camera 2", recording=False),
    )
    assert idle.next_event is None
    assert [(c.channel_id, c.recording) for c in recording.channels] == [("1", True)]
    assert recording.next_event is not None and recording.next_event.title == "Sandbox rehearsal"
    minutes = (_time(recording.next_event.start) - _time(reply.read_at)).total_seconds() / 60
    assert 55 <= minutes <= 60
    assert harness.lab.writes() == []
    assert await harness.rows() == rows and await harness.audit_seq() == seq


async def test_each_list_is_read_afresh_from_the_lab(harness: Harness) -> None:
    before = await listed(harness)
    added = add_event(harness.lab, "evt-fresh", IDLE, minutes=45, title="Added just now")
    harness.lab.state.devices[RECORDING].online = False
    after = await listed(harness)
    assert before.devices[0].next_event is None and before.devices[1].online
    idle, recording = after.devices
    assert idle.next_event is not None and idle.next_event.event_id == "evt-fresh"
    assert _time(idle.next_event.start) == added.start
    assert _time(idle.next_event.finish) == added.start + timedelta(minutes=60)
    assert not recording.online


async def test_a_read_that_fails_refuses_the_list_and_a_missing_sign_in_too(harness: Harness) -> None:
    harness.lab.set_fault("get_devices_in_my_team", "error", count=1)
    reply = await harness.list_writable()
    assert isinstance(reply, ErrorReply) and reply.code == Code.DEVICE_LIST_UNREADABLE
    harness.lab.set_fault("get_current_or_next_cms_events_for_devices", "malformed_json", count=1)
    reply = await harness.list_writable()
    assert isinstance(reply, ErrorReply) and reply.code == Code.STATE_READ_FAILED
    harness.sign_out()
    reply = await harness.list_writable()
    assert isinstance(reply, ErrorReply) and reply.code == Code.NO_SIGN_IN and reply.message
    assert harness.lab.writes() == []


async def test_a_sign_in_epiphan_refuses_to_the_device_list_is_answered_epiphan_auth(
    harness: Harness,
) -> None:
    """What ``doctor --live`` tells "refused by Epiphan" by: the code, never the message."""
    sandbox = harness.lab.teams["sandbox"]
    token = harness.lab.issue_token("sandbox")  # a lab token: it cannot be refreshed
    write_slot(
        harness.settings.sandbox_token_file,
        SignIn(access_token=token, server=harness.lab.mcp_url, team_id=sandbox.team_id, kind="lab"),
    )
    assert isinstance(await harness.list_writable(), WritableDevices)
    harness.lab.revoke_token(token)  # the slot still holds it; Epiphan no longer takes it
    reply = await harness.list_writable()
    assert isinstance(reply, ErrorReply) and reply.code == Code.EPIPHAN_AUTH, reply
    assert "fleetwatch login --sandbox" in reply.message
    assert harness.lab.writes() == []


async def test_with_the_team_id_as_the_only_fence_every_sandbox_device_is_listed(
    lab: LabHandle, tmp_path: Path
) -> None:
    lab.reset()
    harness = await Harness.start(lab, tmp_path / "home", FLEETWATCH_WRITE_DEVICE_IDS="")
    try:
        reply = await listed(harness)
    finally:
        await harness.close()
    assert [d.device_id for d in reply.devices] == [IDLE, RECORDING, NANO, CLASSROOM]
    classroom = reply.devices[-1]
    assert classroom.online and [(c.channel_id, c.recording) for c in classroom.channels] == [("1", False)]
    assert isinstance(classroom.next_event, UpcomingEvent)
    minutes = (_time(classroom.next_event.start) - _time(reply.read_at)).total_seconds() / 60
    assert 20 <= minutes <= 25
    assert all(not d.device_id.startswith("1901234") for d in reply.devices)


async def test_an_offline_sandbox_room_s_recording_is_unknown_on_the_list_and_the_card(
    harness: Harness,
) -> None:
    """Epiphan keeps the recording state a room had when it went offline (issue 16): neither
    ListWritable nor Inspect reports it as recording."""
    proposal_id = await harness.propose("batch_reboot", {"device_ids": [RECORDING]})
    device = harness.lab.state.devices[RECORDING]
    assert any(c.recording for c in device.channels)
    device.online = False
    try:
        (listed_room,) = [d for d in (await listed(harness)).devices if d.device_id == RECORDING]
        assert not listed_room.online and [c.recording for c in listed_room.channels] == [None]
        inspection = await harness.inspect(proposal_id)
        assert isinstance(inspection, Inspection), inspection
        (target,) = inspection.targets
        assert (target.online, target.recording) == (False, None)
    finally:
        device.online = True
