"""What the reliability cases share, because starting it is most of what they cost: one set of
service processes (`tests.reliability.services`) for the fuzzing and the fault matrix's slices,
and one Fleetwatch under supervisord (`tests.reliability.fleet`) for the crash matrix's slice
and the short soak."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.reliability.fleet import Fleet, running_fleet
from tests.reliability.services import Services, running_services


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def services(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Services]:
    async with running_services(tmp_path_factory.mktemp("reliability") / "home") as running:
        yield running


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def fleet(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fleet]:
    async with running_fleet(tmp_path_factory.mktemp("fleet") / "home") as running:
        yield running
