"""doctor's lines for a team: "two people" (with one operator account a change that needs two people
can only be denied, and doctor says why) and "audit export" (sent and dropped counts)."""

from __future__ import annotations

from pathlib import Path

from services.ctl.doctor import Level, check_two_people, render
from shared.config import load_settings
from tests.procs import base_env


def test_one_operator_account_makes_a_two_person_tool_deny_only_and_doctor_says_why(tmp_path: Path) -> None:
    one = load_settings(base_env(tmp_path, FLEETWATCH_APPROVAL_UIDS="1001"))
    [check] = check_two_people(one, ("batch_firmware_update",))
    assert check.level is Level.WARN
    assert "batch_firmware_update" in check.message and "can only be denied" in check.message
    assert "solo se puede rechazar" in render(
        check_two_people(one, ("batch_firmware_update",)), language="es"
    )


def test_two_operator_accounts_pass_and_no_two_person_rule_says_nothing(tmp_path: Path) -> None:
    two = load_settings(base_env(tmp_path, FLEETWATCH_APPROVAL_UIDS="1001,1002"))
    [check] = check_two_people(two, ("batch_firmware_update",))
    assert check.level is Level.OK
    assert check_two_people(two, ()) == []


def test_doctor_names_the_audit_export_and_warns_when_rows_were_dropped(tmp_path: Path) -> None:
    from services.ctl.doctor import check_audit_export
    from shared.store.audit_export import SinkCounts

    unset = load_settings(base_env(tmp_path))
    assert check_audit_export(unset, ()) == []
    target = str(tmp_path / "audit.jsonl")
    settings = load_settings(base_env(tmp_path, FLEETWATCH_AUDIT_EXPORT=target))
    good, bad = check_audit_export(
        settings, (SinkCounts("approval_web", target, 5, 0), SinkCounts("executor", target, 3, 2))
    )
    assert good.level is Level.OK and "5 sent, 0 dropped" in good.message
    assert bad.level is Level.WARN and "3 sent, 2 dropped" in bad.message
