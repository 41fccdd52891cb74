"""The command speaks the language a person chose, however they named it, and says its errors
message first, code last (issue 28, items 4 and 5): ``LANG=es_ES.UTF-8`` is heard,
``FLEETWATCH_LANGUAGE=ES`` and ``--language Spanish`` are Spanish, and an error in the language
setting itself is said in the locale's language, or in every language when the locale names
none."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.ctl.cli import error_code, error_message, fleetwatch_in_process, home_env


def spanish_not_running(err: str) -> bool:
    return error_code(err) == "service_unavailable" and error_message(err).startswith(
        "Fleetwatch no está en ejecución aquí"
    )


def test_the_system_locale_chooses_spanish_when_fleetwatch_language_is_unset(tmp_path: Path) -> None:
    env = {**home_env(tmp_path), "LANG": "es_ES.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
    code, _, err = fleetwatch_in_process(env, "pending", "list")
    assert code == 2 and spanish_not_running(err), err
    code, out, _ = fleetwatch_in_process(env, "pending", "--help")
    assert code == 0 and out.startswith("uso: fleetwatch pending"), out
    code, _, err = fleetwatch_in_process({**env, "FLEETWATCH_LANGUAGE": "en"}, "pending", "list")
    assert code == 2 and error_message(err).startswith("Fleetwatch is not running here"), err


def test_a_language_named_in_capitals_a_locale_or_in_words_is_heard(tmp_path: Path) -> None:
    env = {**home_env(tmp_path), "LANG": "C.UTF-8"}
    for value in ("ES", "es_ES.UTF-8", "Spanish", "español"):
        code, _, err = fleetwatch_in_process({**env, "FLEETWATCH_LANGUAGE": value}, "pending", "list")
        assert code == 2 and spanish_not_running(err), (value, err)
        code, _, err = fleetwatch_in_process(env, "pending", "list", "--language", value)
        assert code == 2 and spanish_not_running(err), (value, err)


def test_an_error_in_the_language_setting_is_said_in_every_language_or_the_locales(tmp_path: Path) -> None:
    env = {**home_env(tmp_path), "LANG": "C.UTF-8", "FLEETWATCH_LANGUAGE": "fr"}
    code, _, err = fleetwatch_in_process(env, "pending", "list")
    english, spanish = err.strip().splitlines()
    assert code == 2 and english.startswith("fleetwatch: FLEETWATCH_LANGUAGE: not en or es"), err
    assert spanish.startswith("fleetwatch: FLEETWATCH_LANGUAGE: no es en ni es"), err
    assert english.endswith("'fr' [config_invalid]") and spanish.endswith("'fr' [config_invalid]"), err
    code, _, err = fleetwatch_in_process({**env, "LANG": "es_MX.UTF-8"}, "pending", "list")
    assert code == 2 and err == (
        "fleetwatch: FLEETWATCH_LANGUAGE: no es en ni es (ni English, Spanish, español, es_MX...): 'fr' "
        "[config_invalid]\n"
    ), err


def test_every_error_line_says_the_message_first_and_the_code_last_in_brackets(tmp_path: Path) -> None:
    for language, words in (
        ("es", "HERRAMIENTA y SALA van con --denials"),
        ("en", "TOOL and ROOM go with --denials"),
    ):
        env = {**home_env(tmp_path), "FLEETWATCH_LANGUAGE": language}
        code, _, err = fleetwatch_in_process(env, "resume", "batch_reboot")
        assert code == 2 and err.startswith(f"fleetwatch: {words}"), err
        assert err.endswith(" [invalid_arguments]\n") and err.count("\n") == 1, err


def test_a_library_failure_is_said_by_its_code_in_spanish_not_in_the_librarys_english(tmp_path: Path) -> None:
    """Issue 28, item 4: ``fleet`` with nothing listening said "cannot open an MCP session:
    ConnectError" in Spanish."""
    from shared.epiphan.slots import SignIn, write_slot
    from tests.support import free_port

    nowhere = f"http://127.0.0.1:{free_port()}/mcp"
    write_slot(
        tmp_path / "tokens" / "read.json",
        SignIn(access_token="t-0123456789", server=nowhere, team_id="team-normal", kind="lab"),
    )
    env = {**home_env(tmp_path), "FLEETWATCH_EPIPHAN_MCP_URL": nowhere, "LANG": "C.UTF-8"}
    code, _, err = fleetwatch_in_process({**env, "FLEETWATCH_LANGUAGE": "es"}, "fleet")
    assert code == 2 and error_code(err) == "epiphan_unreachable", err
    assert "ConnectError" not in err and "cannot" not in err and "session" not in err, err
    code, _, err = fleetwatch_in_process(env, "fleet")
    assert code == 2 and error_code(err) == "epiphan_unreachable" and "ConnectError" in err, err


SPANISH_ERRORS = [
    ("pending", "list"),
    ("pending", "show", "p-0123456789ab"),
    ("acknowledge", "p-0123456789ab"),
    ("resume", "--denials", "batch_reboot", "Sala 1"),
    ("deny-all",),
    ("audit", "tail"),
    ("history",),
    ("notes",),
    ("fleet",),
    ("writable",),
    ("ask", "¿qué pasa?"),
    ("capture", "capture-folder"),
    ("tools", "diff"),
    ("propose", "batch_reboot", "--arg", "device_ids=oops", "--reason", "r"),
]


def english_left(line: str) -> list[str]:
    """The English words of `line` (`tests.ctl.test_doctor_words`'s list), whole words of any
    script, once commands, settings, paths and codes are taken out."""
    from tests.ctl.test_doctor_words import ENGLISH, KEPT

    for pattern in KEPT:
        line = re.sub(pattern, " ", line)
    return [w for w in re.findall(r"[^\W\d_][\w'-]*", line) if w.lower() in ENGLISH]


@pytest.mark.parametrize("argv", SPANISH_ERRORS, ids=" ".join)
def test_each_commands_error_with_nothing_running_is_one_spanish_line_with_its_code_last(
    argv: tuple[str, ...], tmp_path: Path
) -> None:
    """Issue 28, item 4: errors of acknowledge, resume --denials, fleet, tools... with the
    services down (or no sign-in) said in Spanish, the code last."""
    env = {**home_env(tmp_path), "FLEETWATCH_LANGUAGE": "es", "LANG": "C.UTF-8"}
    args = [str(tmp_path / a) if a == "capture-folder" else a for a in argv]
    code, _, err = fleetwatch_in_process(env, *args)
    assert code == 2 and err.count("\n") == 1 and error_code(err) is not None, err
    assert english_left(error_message(err)) == [], err
