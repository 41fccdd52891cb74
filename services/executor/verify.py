"""The independent verification: what each write tool should leave behind, judged on a fresh
read made after the write. Pure: no I/O, no clock (the write time is passed in).

The verdict is kept apart from the outcome (an ``unknown`` write may be ``verified``; an ``ok``
one may be ``not_observed``):

- ``verified``: the postcondition was observed (the channel records; the device went offline
  or its uptime restarted; the firmware changed or the device went offline for the update;
  the stream destination's ``CurrentlyStreaming`` says it streams / does not, and its
  ``LockByDevice`` is the device (the publisher's state when the destination reports neither);
  the event is confirmed);
- ``contradicted``: the opposite was observed (after the executor's one second read: Epiphan
  applies a control a moment after it answers, so the first read may still show the old state;
  `services.executor.recheck.verify_after_write`);
- ``not_observed``: neither (the read failed, or the change takes longer than a read, as a
  firmware update does: Epiphan does not report update progress).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from services.executor.checks import DeviceList
from services.executor.world import TargetReads
from shared.epiphan.fleet import StreamEndpoint
from shared.ids import is_channel_id, split_channel_id

CLOCK_SLACK = timedelta(seconds=5)
"""How far a device's clock may trail ours when judging "its uptime restarted after the write"."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """``verification`` ∈ verified | not_observed | contradicted, and what was seen, in words;
    ``read_failed`` when the read itself failed (nothing was seen: ``not_observed``)."""

    verification: str
    detail: str
    read_failed: bool = False


def _recording(tool_args: Mapping[str, Any], reads: TargetReads) -> Verdict:
    want = tool_args.get("action") == "start"
    for channel_id in tool_args.get("device_ids", []):
        if not is_channel_id(channel_id):
            return Verdict("not_observed", f"{channel_id} is not a channel ID")
        master, number = split_channel_id(channel_id)
        state = reads.recorder.get(master, {}).get(number)
        if state is None:
            return Verdict("not_observed", f"the recorder status does not say whether {channel_id} records")
        if state != want:
            return Verdict("contradicted", f"{channel_id} is {'not ' if want else 'still '}recording")
    return Verdict("verified", f"the channel is {'recording' if want else 'not recording'}")


def _reboot(targets: tuple[str, ...], after: DeviceList, reads: TargetReads, wrote_at: datetime) -> Verdict:
    for master in targets:
        device = after.devices.get(master)
        if device is None:
            return Verdict("not_observed", f"{master} is missing from the device list")
        if not device.online:
            continue
        up_since = reads.system.get(master).up_since if master in reads.system else None
        if up_since is None or up_since < wrote_at - CLOCK_SLACK:
            return Verdict(
                "not_observed", f"{device.name or master} is still online and its uptime did not restart"
            )
    return Verdict("verified", "the device went offline or its uptime restarted")


def _firmware(targets: tuple[str, ...], before: DeviceList, after: DeviceList) -> Verdict:
    for master in targets:
        old, new = before.devices.get(master), after.devices.get(master)
        if new is None:
            return Verdict("not_observed", f"{master} is missing from the device list")
        if new.online and (old is None or old.firmware == new.firmware):
            return Verdict(
                "not_observed",
                f"{new.name or master} is online on firmware {new.firmware}; the update is not visible yet",
            )
    return Verdict("verified", "the device went offline for the update or its firmware changed")


def _destination(endpoint: StreamEndpoint, master: object, started: bool) -> Verdict:
    """The verdict from what the destination itself says (``CurrentlyStreaming``, ``LockByDevice``)."""
    here = endpoint.streaming is True and endpoint.locked_by in (None, master)
    if here == started:
        return Verdict("verified", f"the destination is {'streaming' if started else 'not streaming'} now")
    if started and endpoint.streaming:
        return Verdict(
            "contradicted", f"the destination is streaming from another device ({endpoint.locked_by})"
        )
    return Verdict("contradicted", f"the destination is {'not streaming' if started else 'still streaming'}")


def _stream(
    tool_args: Mapping[str, Any],
    after: DeviceList,
    started: bool,
    endpoints: tuple[StreamEndpoint, ...] | None,
) -> Verdict:
    master, number, stream_id = (
        tool_args.get("device_id"),
        tool_args.get("channel_id"),
        tool_args.get("stream_id"),
    )
    if isinstance(stream_id, str) and endpoints is not None:
        endpoint = next((e for e in endpoints if e.id.lower() == stream_id.lower()), None)
        if endpoint is None:
            return Verdict("not_observed", "the stream destination is no longer on the list")
        if endpoint.streaming is not None:
            return _destination(endpoint, master, started)
    device = after.devices.get(master) if isinstance(master, str) else None
    channel = device.channel(number) if device is not None and isinstance(number, str) else None
    if channel is None or not isinstance(stream_id, str):
        return Verdict("not_observed", "the channel is missing from the device list")
    publisher = next((p for p in channel.publishers if p.id.lower() == stream_id.lower()), None)
    running = publisher is not None and publisher.state == "started"
    if running == started:
        return Verdict("verified", f"the stream is {'started' if started else 'stopped'} on channel {number}")
    if publisher is None or publisher.state in ("started", "stopped"):
        return Verdict("contradicted", f"the stream is {'not started' if started else 'still started'}")
    return Verdict("not_observed", f"the publisher reports state {publisher.state!r}")


def _confirmed(tool_args: Mapping[str, Any], reads: TargetReads) -> Verdict:
    event = reads.events.get(tool_args.get("device_id", ""))
    if event is None or event.id != tool_args.get("event_id"):
        return Verdict("not_observed", "the event is no longer the device's current or next event")
    if event.confirmed:
        return Verdict("verified", "the event is confirmed")
    return Verdict("contradicted", "the event is still not confirmed")


def judge(
    tool: str,
    arguments: Mapping[str, Any],
    targets: tuple[str, ...],
    *,
    before: DeviceList,
    after: DeviceList,
    reads: TargetReads,
    wrote_at: datetime,
    endpoints: tuple[StreamEndpoint, ...] | None = None,
) -> Verdict:
    """The verdict for one write of `tool`, from the lists read `before` and `after` it and the
    per-target `reads` made after it; `wrote_at` is when the write was sent (UTC); `endpoints`
    the stream destinations read after it (None: not read; a stream tool is then judged by the
    channel's publisher)."""
    if tool == "batch_recording":
        return _recording(arguments, reads)
    if tool == "batch_reboot":
        return _reboot(targets, after, reads, wrote_at)
    if tool == "batch_firmware_update":
        return _firmware(targets, before, after)
    if tool in ("start_stream_endpoint", "stop_stream_endpoint"):
        return _stream(arguments, after, tool == "start_stream_endpoint", endpoints)
    if tool == "confirm_cms_event_on_device":
        return _confirmed(arguments, reads)
    return Verdict("not_observed", f"no postcondition is known for {tool}")
