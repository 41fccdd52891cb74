"""`fleetwatch fleet`'s table quotes each room's and group's name, so a name padded to look like
more columns (or a state) shows where it ends, in the reader's quote marks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.ctl.fleet_view import render_fleet
from shared.epiphan.fleet import Device, FleetSnapshot

NOW = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)
PADDED = "ENG 210  Pearl-2  online  REC 1"
"""A room name (within the column's 32 characters) that, unquoted, reads as more of the row."""


@pytest.mark.parametrize(("language", "open_mark", "close_mark"), [("en", "“", "”"), ("es", "«", "»")])
def test_a_name_padded_like_a_row_of_the_table_is_shown_between_quote_marks(language, open_mark, close_mark):
    devices = (
        Device(id="19012340001", name=PADDED, group_name="Hall  online", model="Pearl-2", online=False),
        Device(id="19012340002", name="LIB 1", model="Pearl-2", online=True),
    )
    table = render_fleet(FleetSnapshot(None, devices), NOW, language=language)
    shown = [line for line in table.splitlines() if PADDED in line]  # its row, then its finding
    assert len(shown) == 2 and all(f"{open_mark}{PADDED}{close_mark}" in line for line in shown), table
    assert shown[0].startswith(f"{open_mark}Hall  online{close_mark}"), table
    (other,) = [line for line in table.splitlines() if "LIB 1" in line]
    assert f"{open_mark}LIB 1{close_mark}" in other
