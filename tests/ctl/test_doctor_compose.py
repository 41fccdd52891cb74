"""``fleetwatch doctor --compose``: the compose file's users against the uids in the settings
(the shipped deploy/container/compose.yaml agrees with itself; each way it can disagree FAILs,
naming the service and the setting)."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path

import pytest
import yaml

from services.ctl.commands_doctor import compose_checks
from services.ctl.doctor import Level
from services.ctl.doctor_compose import check_compose
from shared.text.catalogue import say_text

SHIPPED = Path(__file__).resolve().parents[2] / "deploy" / "container" / "compose.yaml"
NONE_GIVEN = {
    "FLEETWATCH_EXECUTOR_UIDS": None,
    "FLEETWATCH_APPROVAL_UIDS": None,
    "FLEETWATCH_ASSISTANT_UIDS": None,
}


def shipped() -> dict:
    return yaml.safe_load(SHIPPED.read_text())


def fails(compose: dict, given: dict | None = None, language: str = "en") -> list[str]:
    checks = check_compose(compose, given or NONE_GIVEN, env={})
    now = dt.datetime.now(dt.UTC)
    return [say_text(c.words, language, zone=dt.UTC, now=now) for c in checks if c.level is Level.FAIL]


def test_the_shipped_compose_file_agrees_with_itself() -> None:
    checks = check_compose(shipped(), NONE_GIVEN, env={})
    assert [(c.level, c.message) for c in checks] == [
        (
            Level.OK,
            "the services' users and the allowlists agree (executor 10001, approval_web 10002, assistant 10003)",
        )
    ]


def test_an_executor_admitting_a_uid_that_is_not_approval_webs_fails() -> None:
    compose = shipped()
    compose["services"]["executor"]["environment"]["FLEETWATCH_EXECUTOR_UIDS"] = "10003"
    assert fails(compose) == [
        "executor's FLEETWATCH_EXECUTOR_UIDS is 10003, but approval_web runs as uid 10002"
    ]


def test_a_user_changed_in_one_place_only_fails_where_it_is_named() -> None:
    compose = shipped()
    compose["services"]["assistant"]["user"] = "10004:10004"
    assert fails(compose) == [
        "approval_web's FLEETWATCH_ASSISTANT_UIDS is 10003, but assistant runs as uid 10004",
        "assistant's FLEETWATCH_ASSISTANT_UIDS is 10003,10020, but assistant runs as uid 10004",
    ]


@pytest.mark.parametrize("user", ["0", "65534:65534", "fleetwatch", None])
def test_a_service_without_a_fixed_numeric_uid_of_its_own_fails(user: str | None) -> None:
    compose = shipped()
    if user is None:
        del compose["services"]["executor"]["user"]
    else:
        compose["services"]["executor"]["user"] = user
    assert fails(compose)[0].startswith("executor's user: is ")


def test_two_services_on_one_uid_fail() -> None:
    compose = shipped()
    compose["services"]["assistant"]["user"] = "10002:10002"
    assert "two services share a uid: each service needs its own user" in fails(compose)


def test_an_allowlist_naming_the_overflow_id_fails() -> None:
    compose = shipped()
    compose["services"]["approval_web"]["environment"]["FLEETWATCH_APPROVAL_UIDS"] = "10020,65534"
    assert fails(compose) == [
        "approval_web's FLEETWATCH_APPROVAL_UIDS names 65534, the overflow id, which is never admitted"
    ]


def test_this_commands_own_allowlists_must_match_the_files() -> None:
    given = dict(NONE_GIVEN, FLEETWATCH_APPROVAL_UIDS=frozenset({1000}))
    assert fails(shipped(), given) == [
        "this command's FLEETWATCH_APPROVAL_UIDS is 1000, but approval_web's in the compose file is 10020"
    ]
    same = dict(
        NONE_GIVEN, FLEETWATCH_APPROVAL_UIDS=frozenset({10020}), FLEETWATCH_EXECUTOR_UIDS=frozenset({10002})
    )
    assert fails(shipped(), same) == []


def test_compose_variables_are_filled_in_as_compose_does() -> None:
    compose = copy.deepcopy(shipped())
    compose["services"]["executor"]["environment"]["FLEETWATCH_EXECUTOR_UIDS"] = "${WEB_UID:-10002}"
    assert check_compose(compose, NONE_GIVEN, env={})[0].level is Level.OK
    assert (
        fails(compose) == []
        and check_compose(compose, NONE_GIVEN, env={"WEB_UID": "7"})[0].level is Level.FAIL
    )


def test_a_list_environment_is_read_too() -> None:
    compose = shipped()
    env = compose["services"]["executor"]["environment"]
    compose["services"]["executor"]["environment"] = [f"{k}={v}" for k, v in env.items()]
    assert fails(compose) == []


def test_the_failures_are_said_in_spanish() -> None:
    compose = shipped()
    compose["services"]["executor"]["environment"]["FLEETWATCH_EXECUTOR_UIDS"] = "10003"
    assert fails(compose, language="es") == [
        "FLEETWATCH_EXECUTOR_UIDS de executor es 10003, pero approval_web corre como uid 10002"
    ]


def test_a_file_that_is_not_a_compose_file_fails_once(tmp_path: Path) -> None:
    assert compose_checks(None) == []
    for text in ("", "services: [", "- a list"):
        path = tmp_path / "compose.yaml"
        path.write_text(text)
        checks = compose_checks(str(path))
        assert [(c.level, c.message) for c in checks] == [
            (Level.FAIL, "not a compose file: it has no services")
        ]
    assert compose_checks(str(tmp_path / "missing.yaml"))[0].level is Level.FAIL
