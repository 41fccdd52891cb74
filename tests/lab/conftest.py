"""Fixtures for the lab's tests: a running campus lab on a frozen clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from services.lab.lab import Lab
from services.lab.server import LabHandle, make_lab, run_lab
from services.lab.state import LabClock

START = datetime(2026, 9, 16, 13, 0, 0, tzinfo=UTC)


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    """The campus lab served on 127.0.0.1 (any free port), its clock frozen at `START`."""
    async with run_lab("campus", clock=LabClock(START, frozen=True)) as handle:
        yield handle


@pytest.fixture
def campus() -> Lab:
    """The campus lab without a server (call `Lab.call_tool` directly), clock frozen at `START`."""
    return make_lab("campus", clock=LabClock(START, frozen=True))
