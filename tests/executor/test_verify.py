"""The independent verification: each write tool's postcondition judged on a fresh read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.executor.checks import DeviceList
from services.executor.verify import judge
from services.executor.world import TargetReads
from shared.epiphan.fleet import (
    Channel,
    Device,
    Event,
    Publisher,
    StreamEndpoint,
    SystemStatus,
    parse_stream_endpoints,
)

A = "29088800001"
STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"
WROTE_AT = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)


def listed(
    online: bool = True, firmware: str = "4.24.3", publishers: tuple[Publisher, ...] = ()
) -> DeviceList:
    channel = Channel("1", "Program", publishers=publishers)
    return DeviceList(
        None, {A: Device(id=A, name="Room A", online=online, firmware=firmware, channels=(channel,))}
    )


def reads(
    recording: bool | None = None, up_since: datetime | None = None, event: Event | None = None
) -> TargetReads:
    return TargetReads(
        recorder={A: {} if recording is None else {"1": recording}},
        events={A: event},
        system={A: SystemStatus(device_id=A, up_since=up_since)},
    )


def verdict(
    tool: str, arguments: dict, after: DeviceList, fresh: TargetReads, before: DeviceList | None = None
) -> str:
    return judge(
        tool, arguments, (A,), before=before or listed(), after=after, reads=fresh, wrote_at=WROTE_AT
    ).verification


@pytest.mark.parametrize(
    ("action", "recording", "expected"),
    [
        ("start", True, "verified"),
        ("start", False, "contradicted"),
        ("stop", False, "verified"),
        ("start", None, "not_observed"),
    ],
)
def test_a_recording_change_is_judged_on_the_channel(
    action: str, recording: bool | None, expected: str
) -> None:
    arguments = {"action": action, "device_ids": [f"{A}-1"]}
    assert verdict("batch_recording", arguments, listed(), reads(recording)) == expected


def test_a_reboot_is_verified_by_going_offline_or_a_new_uptime() -> None:
    arguments = {"device_ids": [A]}
    assert verdict("batch_reboot", arguments, listed(online=False), reads()) == "verified"
    assert (
        verdict("batch_reboot", arguments, listed(), reads(up_since=WROTE_AT + timedelta(seconds=2)))
        == "verified"
    )
    assert (
        verdict("batch_reboot", arguments, listed(), reads(up_since=WROTE_AT - timedelta(days=1)))
        == "not_observed"
    )


def test_a_firmware_update_is_verified_by_a_new_version_or_going_offline() -> None:
    arguments = {"device_ids": [A]}
    assert verdict("batch_firmware_update", arguments, listed(firmware="4.24.6"), reads()) == "verified"
    assert verdict("batch_firmware_update", arguments, listed(online=False), reads()) == "verified"
    assert verdict("batch_firmware_update", arguments, listed(), reads()) == "not_observed"


@pytest.mark.parametrize(
    ("tool", "state", "expected"),
    [
        ("start_stream_endpoint", "started", "verified"),
        ("start_stream_endpoint", "stopped", "contradicted"),
        ("start_stream_endpoint", None, "contradicted"),
        ("stop_stream_endpoint", "stopped", "verified"),
        ("stop_stream_endpoint", None, "verified"),
        ("stop_stream_endpoint", "started", "contradicted"),
        ("start_stream_endpoint", "connecting", "not_observed"),
    ],
)
def test_a_stream_change_is_judged_on_the_publisher(tool: str, state: str | None, expected: str) -> None:
    publishers = () if state is None else (Publisher(id=STREAM.upper(), type="rtmp", state=state),)
    arguments = {"stream_id": STREAM, "device_id": A, "channel_id": "1"}
    assert verdict(tool, arguments, listed(publishers=publishers), reads()) == expected


def test_a_confirmation_is_judged_on_the_event() -> None:
    arguments = {"device_id": A, "event_id": "e1"}
    assert (
        verdict(
            "confirm_cms_event_on_device", arguments, listed(), reads(event=Event(id="e1", confirmed=True))
        )
        == "verified"
    )
    assert (
        verdict("confirm_cms_event_on_device", arguments, listed(), reads(event=Event(id="e1")))
        == "contradicted"
    )
    assert (
        verdict("confirm_cms_event_on_device", arguments, listed(), reads(event=Event(id="e2")))
        == "not_observed"
    )


@pytest.mark.parametrize(
    ("tool", "locked_by", "streaming", "started_publisher", "expected"),
    [
        ("start_stream_endpoint", A, True, False, "verified"),  # the destination says so
        ("start_stream_endpoint", None, False, True, "contradicted"),  # the publisher is not enough
        ("start_stream_endpoint", "29088800004", True, False, "contradicted"),  # another room streams it
        ("stop_stream_endpoint", None, False, True, "verified"),
        ("stop_stream_endpoint", A, True, False, "contradicted"),
        ("start_stream_endpoint", None, None, True, "verified"),  # an older shape: the publisher
    ],
)
def test_a_stream_change_is_judged_on_the_destinations_currently_streaming(
    tool: str, locked_by: str | None, streaming: bool | None, started_publisher: bool, expected: str
) -> None:
    publisher = Publisher(id=STREAM, state="started" if started_publisher else "stopped")
    arguments = {"device_id": A, "channel_id": "1", "stream_id": STREAM}
    endpoint = StreamEndpoint(id=STREAM.upper(), name="Test", locked_by=locked_by, streaming=streaming)
    found = judge(
        tool,
        arguments,
        (A,),
        before=listed(),
        after=listed(publishers=(publisher,)),
        reads=reads(),
        wrote_at=WROTE_AT,
        endpoints=(endpoint,),
    )
    assert found.verification == expected, found


def test_lock_by_device_and_currently_streaming_are_read_in_the_shapes_a_server_may_send() -> None:
    entries = [
        {"id": "e1", "url": "rtmp://a.example.net/live", "LockByDevice": A, "CurrentlyStreaming": True},
        {"id": "e2", "url": "rtmp://a.example.net/live", "LockByDevice": None, "CurrentlyStreaming": False},
        {
            "id": "e3",
            "url": "rtmp://a.example.net/live",
            "lock_by_device": {"id": A},
            "currently_streaming": "yes",
        },
        {"id": "e4", "url": "rtmp://a.example.net/live", "LockByDevice": ""},
    ]
    parsed = parse_stream_endpoints({"stream_endpoints": entries})
    assert [(e.locked_by, e.streaming) for e in parsed] == [(A, True), (None, False), (A, None), (None, None)]
