"""ListWritable: the devices a change may target right now, read afresh through the sandbox
sign-in, for the assistant to choose targets from (seed 003, "Flow" 2: targets are resolved
with the sandbox sign-in's own fresh device list, through code, never by handing the sandbox
token to anyone).

Order: the fence (``fence_not_configured``: with no fence nothing is writable, and we say so
rather than answer an empty list that looks like a quiet team), the sandbox sign-in, a fresh
device list with the team check of Prepare (``team_mismatch``), then the recorder status and
the current/next events of the listed devices. A device list Epiphan refuses to the sandbox
sign-in even after the one refresh is answered ``epiphan_auth`` (not ``device_list_unreadable``):
that is how ``fleetwatch doctor --live`` tells "refused by Epiphan" from a read that failed. A device is listed when it is on the sandbox
team's own list **and**, when ``FLEETWATCH_WRITE_DEVICE_IDS`` is set, on that allowlist: the
same membership Prepare and Execute check. Names and titles are display text only: Prepare
binds IDs and reads everything again. Read-only: nothing is stored, no audit row.
"""

from __future__ import annotations

from collections.abc import Mapping

from services.executor import ExecutorError
from services.executor.checks import DeviceList, Fence, fence_refusal, team_refusal
from services.executor.runtime import Runtime, db_time
from services.executor.world import TargetReads, raise_refusal
from shared.epiphan.fleet import Device, Event
from shared.errors import Code, FleetwatchError
from shared.wire.executor import UpcomingEvent, WritableChannel, WritableDevice, WritableDevices


def writable_ids(listed: DeviceList, fence: Fence) -> tuple[str, ...]:
    """The master IDs on the sandbox list that the fence admits (all of them when no
    allowlist is set), sorted. Pure."""
    return tuple(sorted(i for i in listed.devices if not fence.device_ids or i in fence.device_ids))


def _event(event: Event | None) -> UpcomingEvent | None:
    if event is None:
        return None
    return UpcomingEvent(
        event_id=event.id,
        title=event.title,
        start=db_time(event.start) if event.start else None,
        finish=db_time(event.finish) if event.finish else None,
    )


def writable_device(
    device: Device, recorder: Mapping[str, bool | None] | None, event: Event | None
) -> WritableDevice:
    """One listed device: channels from the device list, each channel's recording from the
    recorder status (the fingerprint's source; None when the status did not say, and for an
    offline device, whose last reported state Epiphan keeps), and its current/next event.
    Pure."""
    states = recorder if recorder is not None and device.online else {}
    return WritableDevice(
        device_id=device.id,
        name=device.name,
        model=device.model,
        online=device.online,
        channels=tuple(
            WritableChannel(channel_id=c.channel_id, name=c.name, recording=states.get(c.channel_id))
            for c in device.channels
        ),
        next_event=_event(event),
    )


def writable_devices(
    listed: DeviceList, ids: tuple[str, ...], reads: TargetReads | None, read_at: str
) -> WritableDevices:
    """The reply for `ids` (`writable_ids`) from the reads. Pure."""
    recorder = reads.recorder if reads is not None else {}
    events = reads.events if reads is not None else {}
    return WritableDevices(
        devices=tuple(writable_device(listed.devices[i], recorder.get(i), events.get(i)) for i in ids),
        read_at=read_at,
    )


async def list_writable(rt: Runtime) -> WritableDevices:
    """The writable devices as they are now (see the module doc).

    Raises:
        ExecutorError: ``fence_not_configured``, ``policy_invalid``, ``no_sign_in``,
            ``epiphan_auth``, ``device_list_unreadable``, ``team_mismatch``,
            ``state_read_failed``.
    """
    raise_refusal(fence_refusal(rt.fence))
    _, tool_policy = await rt.policies()
    async with rt.sandbox() as session:
        reader = rt.reader(session, tool_policy)
        try:
            listed = await reader.device_list()
        except ExecutorError as exc:
            cause = exc.__cause__
            if isinstance(cause, FleetwatchError) and cause.code is Code.EPIPHAN_AUTH:
                raise ExecutorError(
                    Code.EPIPHAN_AUTH,
                    "Epiphan refused the sandbox sign-in, after a refresh too: sign in again"
                    " (fleetwatch login --sandbox).",
                ) from exc
            raise
        raise_refusal(team_refusal(listed, rt.fence))
        ids = writable_ids(listed, rt.fence)
        reads = await reader.targets(ids) if ids else None
    return writable_devices(listed, ids, reads, db_time(rt.clock()))
