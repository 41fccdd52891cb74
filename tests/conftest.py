"""Fixtures shared by the whole suite, and the suite's tiers.

Fakes enter through constructors (the lab as the Epiphan server, a scripted model); nothing of
ours is mocked. Every test gets its own FLEETWATCH_HOME under pytest's tmp_path.

**Tiers** (``docs/testing.md``), declared once here and applied from each test's path:

- ``unit``: no child process and no listening socket (the default);
- ``process``: starts a service process, a server (the lab, the model stand-in, a socket) or a
  command; every file in `PROCESS`, and any test using a fixture of `PROCESS_FIXTURES`;
- ``stack``: a whole Fleetwatch under supervisord, Chromium against it, a wheel in a fresh venv,
  the crash matrix and the soak (`STACK`);
- ``root``: the OS-user deployment, real users made as root (`ROOT`).

The longest matching entry wins. A ``unit`` test that starts a process or binds a socket fails at
once, naming the file to move (an audit hook holds the declaration true). Each tier has its
own timeout (`TIMEOUTS`, seconds); a test's own ``@pytest.mark.timeout`` wins.
Hypothesis profiles: ``ci`` (``./scripts/test``) and ``dev`` (``--quick``, the default).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent

# The suite runs as an operator whose shell finds this install's `fleetwatch` by name (the
# package installed, or its venv activated), so the commands Fleetwatch prints say
# ``fleetwatch``; `tests/shared/text/test_command_line.py` holds the other case (a checkout's
# venv not on PATH: the script's path is printed).
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

TIERS: Final = ("unit", "process", "stack", "root")
TIMEOUTS: Final = {"unit": 10, "process": 60, "stack": 300, "root": 300}
"""Seconds a test of each tier may take, its fixtures' setup included."""

ROOT: Final = ("tests/deploy/",)
STACK: Final = (
    "tests/e2e/",
    "tests/reliability/test_crash_matrix.py",
    "tests/reliability/test_soak.py",
    "tests/test_package.py::test_the_wheel_installs_into_a_fresh_venv_and_runs_the_demo_from_any_folder",
)
PROCESS: Final = (
    "tests/approval_web/page/test_app.py",
    "tests/approval_web/page/test_flow.py",
    "tests/approval_web/page/test_i18n.py",
    "tests/approval_web/page/test_injection.py",
    "tests/approval_web/page/test_quoted_names.py",
    "tests/approval_web/page/test_refusals.py",
    "tests/approval_web/page/test_session_owner.py",
    "tests/approval_web/page/test_two_people.py",
    "tests/approval_web/test_after_executor.py",
    "tests/approval_web/test_one_change.py",
    "tests/approval_web/test_bad_input.py",
    "tests/approval_web/test_service.py",
    "tests/approval_web/test_service_fake_executor.py",
    "tests/approval_web/test_wire_caps.py",
    "tests/assistant/test_captured_team.py",
    "tests/assistant/test_demo_model.py",
    "tests/assistant/test_demo_model_processes.py",
    "tests/assistant/test_demo_table.py",
    "tests/assistant/test_fence.py",
    "tests/assistant/test_injection.py",
    "tests/assistant/test_keyword.py",
    "tests/assistant/test_keyword_partial.py",
    "tests/assistant/test_model_data.py",
    "tests/assistant/test_model_words.py",
    "tests/assistant/test_page.py",
    "tests/assistant/test_page_language.py",
    "tests/assistant/test_partial_and_batching.py",
    "tests/assistant/test_pipeline.py",
    "tests/assistant/test_records.py",
    "tests/assistant/test_room_notes.py",
    "tests/assistant/test_server_profiles.py",
    "tests/assistant/test_service.py",
    "tests/assistant/test_session_rules.py",
    "tests/assistant/test_slack.py",
    "tests/assistant/test_slack_process.py",
    "tests/assistant/test_warm_session_process.py",
    "tests/assistant/test_words.py",
    "tests/assistant/watch/test_answers.py",
    "tests/assistant/watch/test_approval_down.py",
    "tests/assistant/watch/test_destinations.py",
    "tests/assistant/watch/test_heartbeat.py",
    "tests/assistant/watch/test_processes.py",
    "tests/assistant/watch/test_secrets.py",
    "tests/assistant/watch/test_start.py",
    "tests/assistant/watch/test_team_watch.py",
    "tests/ctl/test_capture.py",
    "tests/ctl/test_command_tree.py",
    "tests/ctl/test_commands_admin_socket.py",
    "tests/ctl/test_commands_ask.py",
    "tests/ctl/test_decided_names.py",
    "tests/ctl/test_doctor.py",
    "tests/ctl/test_doctor_slack.py",
    "tests/ctl/test_doctor_words.py",
    "tests/ctl/test_fleet_cmd.py",
    "tests/ctl/test_language_choice.py",
    "tests/ctl/test_main.py",
    "tests/ctl/test_one_account_modes.py",
    "tests/ctl/test_signin_cli.py",
    "tests/ctl/test_spanish_words.py",
    "tests/ctl/test_supervise_rpc.py",
    "tests/ctl/test_tools_diff.py",
    "tests/ctl/test_up_ports.py",
    "tests/ctl/test_watch_words.py",
    "tests/executor/test_audit_deletion.py",
    "tests/executor/test_batching.py",
    "tests/executor/test_captured_sandbox.py",
    "tests/executor/test_claim_window.py",
    "tests/executor/test_destinations.py",
    "tests/executor/test_execute.py",
    "tests/executor/test_facts.py",
    "tests/executor/test_kill_switch.py",
    "tests/executor/test_processes.py",
    "tests/executor/test_refresh.py",
    "tests/executor/test_refusals.py",
    "tests/executor/test_tool_pins.py",
    "tests/executor/test_warm_session.py",
    "tests/executor/test_wire_caps.py",
    "tests/executor/test_writable.py",
    "tests/executor/test_write_client.py",
    "tests/lab/test_capture_fixtures.py",
    "tests/lab/test_capture_replay.py",
    "tests/lab/test_faults.py",
    "tests/lab/test_lab.py",
    "tests/lab/test_main.py",
    "tests/lab/test_model_standin.py",
    "tests/lab/test_named_shapes.py",
    "tests/lab/test_notices.py",
    "tests/lab/test_oauth.py",
    "tests/lab/test_reads.py",
    "tests/lab/test_server.py",
    "tests/lab/test_slack_socket.py",
    "tests/lab/test_tools.py",
    "tests/reliability/test_fault_matrix.py",
    "tests/reliability/test_fuzz.py",
    "tests/reliability/test_store_disk.py",
    "tests/shared/epiphan/test_read_client.py",
    "tests/shared/epiphan/test_read_client_pins.py",
    "tests/shared/epiphan/test_signed_session.py",
    "tests/shared/epiphan/test_signin.py",
    "tests/shared/store/test_db.py",
    "tests/shared/test_config.py",
    "tests/shared/test_settings_readers.py",
    "tests/shared/web/test_local_http.py",
    "tests/shared/web/test_loopback_peer.py",
    "tests/shared/wire/test_client.py",
    "tests/shared/wire/test_server.py",
    "tests/test_docs_drift.py",
    "tests/test_fence_static.py",
    "tests/test_hard_rules.py",
    "tests/test_imports.py",
    "tests/test_lazy_imports.py",
    "tests/test_package.py",
)
CONTAINER: Final = "tests/deploy/test_container.py"
"""The root test that builds and runs the containers (`scope_of`)."""
PROCESS_FIXTURES: Final = frozenset()
"""Fixtures that start a process or a server: a test using one is ``process``."""

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def tier_of(nodeid: str, fixtures: frozenset[str] | set[str] | list[str]) -> str:
    """The tier of the test `nodeid` (``tests/...py::name[...]``) using `fixtures`."""
    best, tier = -1, "unit"
    for name, prefixes in (("root", ROOT), ("stack", STACK), ("process", PROCESS)):
        for prefix in prefixes:
            if nodeid.startswith(prefix) and len(prefix) > best:
                best, tier = len(prefix), name
    if tier == "unit" and PROCESS_FIXTURES.intersection(fixtures):
        tier = "process"
    return tier


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: a test of the {tier} tier (docs/testing.md)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item.nodeid, getattr(item, "fixturenames", ()))
        item.add_marker(getattr(pytest.mark, tier))
        item.stash[_TIER] = tier
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIMEOUTS[tier]))


def scope_of(nodeid: str) -> str:
    """What one pytest-xdist worker runs as a whole, in order: every ``stack`` test (one whole
    Fleetwatch at a time), every ``root`` test (the deployment's tests share one package
    fixture and build on each other's state), else the test's file (its module fixtures start
    once). So at most two supervisord stacks run at once, each on its own worker. The container
    test (`CONTAINER`) is a scope of its own: it shares nothing with the deployment's tests, and
    it may run beside them on another worker."""
    if nodeid.startswith(CONTAINER):
        return "container"
    tier = tier_of(nodeid, ())
    if tier in ("stack", "root"):
        return tier
    return nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` with the suite's own scopes (`scope_of`); other modes as xdist has
    them. (xdist's ``loadgroup`` renames node IDs, which pytest 9 no longer lets a plugin do.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SuiteScopes(config, log)


_TIER = pytest.StashKey[str]()
_running: dict[str, str] = {}
"""The nodeid and tier of the test running now in this process (empty between tests)."""
_STARTS: Final = frozenset(
    {"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.system", "os.exec"}
)


def _unit_guard(event: str, args: tuple[Any, ...]) -> None:
    if _running.get("tier") != "unit" or (event not in _STARTS and event != "socket.bind"):
        return
    what = "started a process" if event in _STARTS else "bound a socket"
    raise RuntimeError(
        f"{_running['nodeid']} is a unit test but {what} ({event}): add its file to PROCESS in "
        "tests/conftest.py, or use a fixture of PROCESS_FIXTURES"
    )


sys.addaudithook(_unit_guard)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _running.update(nodeid=item.nodeid, tier=item.stash.get(_TIER, "unit"))
    try:
        return (yield)
    finally:
        _running.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """A test's teardown is its own, but the last test of a file (or of a worker) also tears
    down the module-, package- and session-scoped fixtures other tests used: those may stop
    processes, so the unit guard stands aside then."""
    if nextitem is None or nextitem.path != item.path:
        _running["tier"] = "teardown of wider fixtures"
    return (yield)


@pytest.fixture
def repo_root() -> Path:
    """The checkout's top folder (holds policy/, deploy/, docs/)."""
    return REPO
