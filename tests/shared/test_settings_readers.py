"""Every setting takes effect in the processes its row says read it.

Each row of `shared.config.SETTINGS` names, in ``read_by``, the processes that use it (the CLI
``fleetwatch`` and the three services); ``docs/settings.md`` shows that column. These tests
hold the declaration to the code, statically (`tests.reach`, nothing is imported or run): for
each process, the modules its entry point can load (every import, also those inside
functions), and in them every attribute read of a settings object (``settings.db``,
``self._settings.db``, ``self.rt.settings.db``), a `Settings` property counting as the fields it
is built from (``executor_socket`` is ``runtime_dir``), and a setting whose default names
another (``{FLEETWATCH_STATE_DIR}``) counting as reading that one too.

- Declared, so read: every process a row names reaches code that reads the setting. A
  setting documented for a process that ignores it fails here (``FLEETWATCH_EXECUTOR_GIDS`` was
  read by ``doctor`` and never applied to executor.sock).
- Read by a service's own code, so declared: a module under a process's own package
  (``services/executor/``...) that reads a setting makes that process a reader, so a service
  cannot start using a setting its row does not name. Shared modules count only for the first
  rule: ``shared/epiphan/signin.py`` holds the CLI's ``login`` beside the refresh every service uses,
  so loading it does not mean reading both token slots.
"""

from __future__ import annotations

import pytest

from shared.config import PROCESSES, SETTINGS
from tests.reach import ENTRY_POINTS, reached, readers, settings_read

OWN_PACKAGES = {
    "fleetwatch": "services.ctl",
    "assistant": "services.assistant",
    "approval_web": "services.approval_web",
    "executor": "services.executor",
}


def test_every_setting_names_its_readers_among_the_known_processes():
    assert set(ENTRY_POINTS) == set(PROCESSES) == set(OWN_PACKAGES)
    for setting in SETTINGS:
        assert setting.read_by, f"{setting.name}: read_by names no process"
        assert set(setting.read_by) <= set(PROCESSES), setting.name
        assert len(set(setting.read_by)) == len(setting.read_by), setting.name


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_process_a_setting_names_reaches_code_that_reads_it(setting):
    found = readers()[setting.name]
    missing = sorted(set(setting.read_by) - found)
    assert not missing, f"{setting.name} is documented as read by {missing}, whose code never reads it"


@pytest.mark.parametrize("process", PROCESSES)
def test_a_setting_a_services_own_code_reads_names_that_service(process):
    own = {m for m in reached(ENTRY_POINTS[process]) if m.startswith(OWN_PACKAGES[process])}
    undeclared = sorted(s.name for s in SETTINGS if s.name in settings_read(own) and process not in s.read_by)
    assert not undeclared, f"{process}'s own code reads {undeclared}; add {process!r} to their read_by"


def test_the_reach_follows_imports_inside_functions_and_stays_inside_each_process():
    assistant = reached(ENTRY_POINTS["assistant"])
    assert "services.assistant.page" in assistant  # imported inside run(), only with --page
    assert not any(m.startswith(("services.executor", "services.approval_web")) for m in assistant)
    assert "services.executor.write_client" in reached(ENTRY_POINTS["executor"])
    assert "services.executor.write_client" not in reached(ENTRY_POINTS["approval_web"])


def test_the_reading_of_a_setting_counts_properties_and_defaults():
    assert settings_read({"services.approval_web.service", "services.approval_web.proposals"}) >= {
        "FLEETWATCH_RUNTIME_DIR",  # settings.executor_socket
        "FLEETWATCH_HOME",  # the runtime folder's default
        "FLEETWATCH_WRITE_DEVICE_IDS",  # settings.fence_configured
        "FLEETWATCH_WRITE_TEAM_ID",
    }
    assert settings_read({"shared.text.display"}) == frozenset()
