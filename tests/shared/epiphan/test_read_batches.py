"""A batched per-device read's results: merged answers for the model, all-or-nothing values for
the executor, what was not read for a snapshot (`shared.epiphan.read_batches`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.epiphan.fleet import UnreadPart
from shared.epiphan.read_batches import Chunk, DeviceReads, merge_results
from shared.epiphan.read_client import EpiphanError
from shared.errors import Code

AT = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)
EVENTS = "get_current_or_next_cms_events_for_devices"


@pytest.mark.parametrize(
    ("parts", "merged"),
    [
        ([{"events": [1]}, {"events": [2]}], {"events": [1, 2]}),
        ([{"devices": {"a": 1}}, {"devices": {"b": 2}}], {"devices": {"a": 1, "b": 2}}),
        ([{"a": {"x": 1}}, {"b": {"y": 2}}], {"a": {"x": 1}, "b": {"y": 2}}),
        (
            [{"cms": "epiphan", "devices": [1]}, {"cms": "epiphan", "devices": [2]}],
            {"cms": "epiphan", "devices": [1, 2]},
        ),
        ([[1], [2, 3]], [1, 2, 3]),
        ([{"a": 1}, [2]], [{"a": 1}, [2]]),
        ([{"only": True}], {"only": True}),
    ],
)
def test_the_answers_of_one_read_s_calls_merge_into_one(parts, merged):
    assert merge_results(parts) == merged


def failed(ids: tuple[str, ...]) -> Chunk:
    error = EpiphanError(Code.EPIPHAN_BAD_RESULT, EVENTS, f"{EVENTS}: no known shape (null)")
    return Chunk(ids, {"device_ids": list(ids)}, AT, error=error)


def test_all_or_nothing_raises_the_first_failed_call_and_the_read_side_marks_it():
    reads = DeviceReads(EVENTS, {"19012340101": None}, (failed(("19012340102",)), failed(("19012340103",))))
    with pytest.raises(EpiphanError) as caught:
        reads.require()
    assert caught.value.code == Code.EPIPHAN_BAD_RESULT
    assert reads.unread() == UnreadPart(
        "events",
        EVENTS,
        "epiphan_bad_result",
        f"{EVENTS}: no known shape (null)",
        ("19012340102", "19012340103"),
    )
    whole = DeviceReads(EVENTS, {"19012340101": None})
    assert whole.require() == {"19012340101": None} and whole.unread() is None
