"""Which facts each proposable tool binds (`services.executor.facts.bound_facts`), and that a
secret (a stream key, a URL's path) enters the hash only. Pure."""

from __future__ import annotations

import pytest

from services.executor.facts import bound_facts, changed_words, secret_digest
from shared.binding import TargetState, make_bound_record
from shared.wire.executor import EventFacts, StreamFacts, TargetFacts
from tests.executor.harness import IDLE, SANDBOX_STREAM
from tests.executor.test_facts import CONFIRM, EVENT, RECORD, STREAM

QUIET = TargetState(online=True, recording=False, next_event_start=None)


def record_of(tool: str, arguments: dict, targets: list[str]):
    return make_bound_record(
        proposal_id="p-000000000001",
        tool=tool,
        arguments=arguments,
        targets=targets,
        fingerprint={t: QUIET for t in targets},
        schema_version=1,
        reason="r",
    )


TARGET = TargetFacts(
    device_id=IDLE, found=True, name="Sandbox Pearl-2", channel_id="1", channel_name="Program"
)
PLAIN = TargetFacts(device_id=IDLE, found=True, name="Sandbox Pearl-2")
SHOWN_STREAM = StreamFacts(
    stream_id=SANDBOX_STREAM, found=True, name="Sandbox test stream", host="test.example.net"
)
SHOWN_EVENT = EventFacts(event_id=EVENT, found=True, title="Rehearsal", start="2026-03-02T11:00:00.000Z")

BOUND_PER_TOOL = {
    "batch_recording": (RECORD[1], [IDLE], (TARGET,), None, SHOWN_EVENT, 7),
    "start_stream_endpoint": (STREAM[1], [IDLE], (TARGET,), SHOWN_STREAM, SHOWN_EVENT, 12),
    "stop_stream_endpoint": (STREAM[1], [IDLE], (TARGET,), SHOWN_STREAM, SHOWN_EVENT, 12),
    "confirm_cms_event_on_device": (CONFIRM[1], [IDLE], (PLAIN,), None, SHOWN_EVENT, 6),
    "batch_reboot": ({"device_ids": [IDLE]}, [IDLE], (PLAIN,), None, SHOWN_EVENT, 6),
    "batch_firmware_update": ({"device_ids": [IDLE]}, [IDLE], (PLAIN,), None, SHOWN_EVENT, 6),
}
"""tool -> (arguments, targets, card facts, stream, event, facts bound): the counts the closing
note reports (tool, arguments, the room's name, a channel's name, a stream's name, host, the
device using it and whether it streams, plus its URL and key in the hash, an event's title, start
and finish)."""


@pytest.mark.parametrize("tool", list(BOUND_PER_TOOL))
def test_each_tool_binds_the_facts_its_card_shows(tool: str) -> None:
    arguments, targets, shown, stream, event, count = BOUND_PER_TOOL[tool]
    bound = bound_facts(record_of(tool, arguments, targets), shown, stream, event, stream_secret="d")
    assert len(bound.facts) + len(bound.secret_keys) == count
    assert {"tool", "arguments", f"device {IDLE} name", f"event {EVENT} title"} <= set(bound.facts)


def test_a_secret_changes_the_hash_but_never_appears_in_the_facts() -> None:
    digest = secret_digest(b"k" * 32)
    entry = {"id": SANDBOX_STREAM, "name": "S", "url": "rtmp://test.example.net/live", "key": "sbx_sk_1"}
    first, second = digest(entry), digest({**entry, "key": "sbx_sk_2"})
    assert first != second and digest({**entry, "status": "idle"}) == first
    record = record_of(*STREAM, [IDLE])
    one = bound_facts(record, (TARGET,), SHOWN_STREAM, None, stream_secret=first)
    two = bound_facts(record, (TARGET,), SHOWN_STREAM, None, stream_secret=second)
    assert one.facts == two.facts and one.hash != two.hash
    assert "sbx_sk_" not in repr(one) and "full address or stream key changed" in changed_words(
        one.facts, two
    )


@pytest.mark.parametrize(
    ("field", "extra"),
    [
        ("stream", {}),  # a Pearl publisher's stream name, the key, beside the URL
        ("stream_name", {}),
        ("StreamID", {}),  # an SRT stream ID that is not a UUID
        ("passphrase", {}),
        ("value", {"title": "Stream key"}),  # a setting naming its secret only in its title
    ],
)
def test_every_secret_shape_of_a_destination_is_bound_into_its_digest(field, extra) -> None:
    digest = secret_digest(b"k" * 32)
    entry = {
        "id": SANDBOX_STREAM,
        "name": "S",
        "url": "rtmp://test.example.net/live",
        **extra,
        field: "sbx-1",
    }
    assert digest(entry) != digest({**entry, field: "sbx-2"})
