"""Every known result shape is a named case with a fixture, and an unknown shape is an explicit
read error: `shared.epiphan.fleet_shapes` against ``tests/fixtures/shapes/`` in both directions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.epiphan.fleet import PARSERS, FleetShapeError, parse_events
from shared.epiphan.fleet_shapes import SHAPES, outline, recognise

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "shapes"
KNOWN = [(tool, shape.name) for tool, shapes in SHAPES.items() for shape in shapes]
UNKNOWN = sorted((p.parent.name, p.stem) for p in FIXTURES.glob("*/unknown-*.json"))


def fixture(tool: str, name: str) -> Any:
    return json.loads((FIXTURES / tool / f"{name}.json").read_text())


@pytest.mark.parametrize(("tool", "name"), KNOWN)
def test_each_known_shape_has_a_fixture_recognised_as_that_shape(tool, name):
    shape = recognise(tool, fixture(tool, name))
    assert shape is not None and shape.name == name


def test_every_fixture_names_a_known_shape_or_is_marked_unknown():
    on_disk = {(p.parent.name, p.stem) for p in FIXTURES.glob("*/*.json")}
    assert on_disk - set(UNKNOWN) == set(KNOWN)


@pytest.mark.parametrize(("tool", "name"), UNKNOWN)
def test_an_unknown_shape_is_a_read_error_for_that_tool_never_a_row(tool, name):
    result = fixture(tool, name)
    assert recognise(tool, result) is None
    with pytest.raises(FleetShapeError) as caught:
        PARSERS[tool](result)
    assert caught.value.tool == tool and "no known shape" in caught.value.message


@pytest.mark.parametrize(
    "tool",
    [
        "get_recorder_status_for_devices",
        "get_system_status_for_devices",
        "get_storage_status_for_devices",
        "get_stream_endpoints",
    ],
)
def test_every_shape_of_a_tool_reads_to_the_same_facts(tool):
    parsed = [PARSERS[tool](fixture(tool, shape.name)) for shape in SHAPES[tool]]
    assert all(p == parsed[0] for p in parsed) and parsed[0]


def test_the_older_events_shape_reads_the_same_event_with_end_as_finish():
    tool = "get_current_or_next_cms_events_for_devices"
    current, older = (parse_events(fixture(tool, name)) for name in ("current", "keyed_devices"))
    assert current.keys() == older.keys() == {"19012340101", "19012340102"}
    for device_id, event in current.items():
        other = older[device_id]
        assert (event is None) == (other is None)
        if event is not None and other is not None:
            assert (event.id, event.title, event.start, event.finish) == (
                other.id,
                other.title,
                other.start,
                other.finish,
            )


def test_an_outline_quotes_field_names_only_never_ids_or_names():
    text = outline({"devices": {}, "19012340101": {}, "Room 401 ☃": 1, "status": None})
    assert "'devices'" in text and "'status' (null)" in text
    assert "19012340101" not in text and "Room 401" not in text and "2 other keys" in text
