"""Fixtures shared by the whole suite.

Fakes enter through constructors (the lab as the Epiphan server, a scripted model); nothing of
ours is mocked. Every test gets its own FLEETWATCH_HOME under pytest's tmp_path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    """The checkout's top folder (holds policy/, deploy/, docs/)."""
    return REPO
