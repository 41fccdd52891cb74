"""doctor's "two people" line: with one operator account a change that needs two people can only
be denied, and doctor says why (English and Spanish)."""

from __future__ import annotations

from pathlib import Path

from services.ctl.doctor import Level, check_two_people
from shared.config import load_settings
from tests.procs import base_env


def test_one_operator_account_makes_a_two_person_tool_deny_only_and_doctor_says_why(tmp_path: Path) -> None:
    one = load_settings(base_env(tmp_path, FLEETWATCH_APPROVAL_UIDS="1001"))
    [check] = check_two_people(one, ("batch_firmware_update",))
    assert check.level is Level.WARN
    assert "batch_firmware_update" in check.message and "can only be denied" in check.message
    [spanish] = check_two_people(one, ("batch_firmware_update",), language="es")
    assert "solo se pueden rechazar" in spanish.message


def test_two_operator_accounts_pass_and_no_two_person_rule_says_nothing(tmp_path: Path) -> None:
    two = load_settings(base_env(tmp_path, FLEETWATCH_APPROVAL_UIDS="1001,1002"))
    [check] = check_two_people(two, ("batch_firmware_update",))
    assert check.level is Level.OK
    assert check_two_people(two, ()) == []
