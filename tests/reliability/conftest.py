"""One set of service processes (`tests.reliability.services`) shared by the fuzzing and the
fault matrix's slices: starting them is most of what those cases cost."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.reliability.services import Services, running_services


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def services(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Services]:
    async with running_services(tmp_path_factory.mktemp("reliability") / "home") as running:
        yield running
