"""The deployment the tests of this folder share: install.sh's users and ``fleetwatch up`` as
root (`tests.deploy.supervised`), with an operator (in ``NAME-operators`` and
``NAME-approvers``) and a stranger (in no Fleetwatch group). Tests that change it put it back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deploy.supervised import Running, supervised


@pytest.fixture(scope="package")
def deployed() -> Iterator[Running]:
    with supervised() as up:
        up.person("op", "operators", "approvers")
        up.person("stranger")
        yield up
