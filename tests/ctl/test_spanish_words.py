"""``fleetwatch`` in Spanish as a person runs it (a real process, ``FLEETWATCH_LANGUAGE=es`` or
``--language es``): the proposable tools in ``propose --help``, argparse's own complaints, the
command's own error sentences and the line for a Fleetwatch that is not running. English stays
as it was."""

from __future__ import annotations

import re
from pathlib import Path

from tests.ctl.cli import error_code, error_message
from tests.ctl.test_main import fleetwatch
from tests.procs import base_env
from tests.support import free_port


def flat(text: str) -> str:
    return " ".join(text.split())


async def test_propose_help_lists_the_tools_in_spanish_with_their_summaries(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home", FLEETWATCH_LANGUAGE="es")
    code, out, err = await fleetwatch(env, "propose", "--help")
    assert code == 0, err
    text = flat(out)
    assert "Herramientas que se pueden proponer (argumentos; * = disruptiva, pide confirmar la sala):" in text
    assert "Reiniciar un dispositivo. Queda fuera de línea unos minutos" in text  # the policy's summary
    assert "device_ids=[texto, ...] en JSON" in text
    assert "(* cuando action=stop)" in text and "Ejemplo: fleetwatch propose batch_recording" in text
    for english in ("Tools that may be proposed", "Restart one device", " as JSON", "(* when", "Example:"):
        assert english not in text, english
    code, out, _ = await fleetwatch(base_env(tmp_path / "home"), "propose", "--help")
    text = flat(out)
    assert code == 0 and "Tools that may be proposed" in text and "Restart one device." in text
    assert "device_ids=[text, ...] as JSON" in text


ARGPARSE_CASES = [
    (("status", "--bogus"), "argumentos no reconocidos: --bogus", "unrecognized arguments: --bogus"),
    (
        ("propose",),
        "se requieren los siguientes argumentos: HERRAMIENTA, --reason",
        "the following arguments are required: TOOL, --reason",
    ),
    (("nosuch",), "argumento COMANDO: opción no válida: 'nosuch' (elija entre", "invalid choice: 'nosuch'"),
    (
        ("status", "--language", "fr"),
        "argumento --language: opción no válida: 'fr' (elija entre 'en', 'es')",
        "argument --language: invalid choice: 'fr'",
    ),
    (("audit", "tail", "-n", "x"), "argumento -n: valor int no válido: 'x'", "invalid int value: 'x'"),
]


async def test_argparse_complains_in_spanish(tmp_path: Path) -> None:
    spanish, english = base_env(tmp_path / "home", FLEETWATCH_LANGUAGE="es"), base_env(tmp_path / "home")
    for argv, es, en in ARGPARSE_CASES:
        code, out, err = await fleetwatch(spanish, *argv)
        assert code == 2 and out == "", (argv, err)
        assert err.startswith("uso: fleetwatch"), (argv, err)
        assert re.search(r"fleetwatch[\w -]*: error: ", err) and es in err, (argv, err)
        code, _, err = await fleetwatch(english, *argv)
        assert code == 2 and err.startswith("usage: fleetwatch") and en in err, (argv, err)
    code, _, err = await fleetwatch(base_env(tmp_path / "home"), "status", "--bogus", "--language", "es")
    assert code == 2 and "argumentos no reconocidos: --bogus" in err, err


async def test_the_commands_own_errors_are_in_spanish(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home", FLEETWATCH_LANGUAGE="es")
    cases = [
        (("resume", "batch_reboot"), ("invalid_arguments", "HERRAMIENTA y SALA van con --denials")),
        (
            ("resume", "--denials", "batch_reboot"),
            ("invalid_arguments", "nombre HERRAMIENTA y SALA, o ninguno"),
        ),
        (
            ("propose", "batch_reboot", "--arg", "foo", "--reason", "r"),
            ("invalid_arguments", "--arg necesita CLAVE=VALOR; se recibió 'foo'"),
        ),
        (
            ("propose", "batch_reboot", "--arg", "a=1", "--arg", "a=2", "--reason", "r"),
            ("invalid_arguments", "--arg a se da dos veces"),
        ),
        (
            ("propose", "batch_reboot", "--arg", "x=[1,", "--reason", "r"),
            ("invalid_arguments", "--arg x: no es JSON válido"),
        ),
        (
            ("note", "Room 1"),
            ("invalid_message", "escriba el texto de la nota, o --clear para quitar la nota de la sala"),
        ),
    ]
    for argv, (error, expected) in cases:
        code, out, err = await fleetwatch(env, *argv)
        assert code == 2 and error_code(err) == error and error_message(err).startswith(expected), (argv, err)
    home = tmp_path / "home"
    code, _, err = await fleetwatch(env, "pending", "list")
    assert (
        code == 2
        and error_code(err) == "service_unavailable"
        and error_message(err).startswith(
            f"Fleetwatch no está en ejecución aquí (FLEETWATCH_HOME={home}): inícielo con `FLEETWATCH_HOME={home} fleetwatch up --language es`"
        )
    ), err
    code, _, err = await fleetwatch(base_env(home), "resume", "batch_reboot", "--language", "es")
    assert (
        code == 2
        and error_code(err) == "invalid_arguments"
        and error_message(err).startswith("HERRAMIENTA y SALA van con --denials")
    ), err
    code, _, err = await fleetwatch(base_env(home), "resume", "batch_reboot")
    assert (
        code == 2
        and error_code(err) == "invalid_arguments"
        and error_message(err).startswith("TOOL and ROOM go with --denials")
    ), err


async def test_down_with_nothing_running_says_so_in_spanish(tmp_path: Path) -> None:
    code, out, err = await fleetwatch(base_env(tmp_path / "home", FLEETWATCH_LANGUAGE="es"), "down")
    assert code == 0 and out == "Fleetwatch no estaba en ejecución.\n", (out, err)
    code, out, _ = await fleetwatch(base_env(tmp_path / "home"), "down", "--language", "es")
    assert code == 0 and out == "Fleetwatch no estaba en ejecución.\n"
    code, out, _ = await fleetwatch(base_env(tmp_path / "home"), "down")
    assert code == 0 and out == "Fleetwatch was not running.\n"


async def test_a_misspelt_setting_still_names_the_closest_one_in_spanish(tmp_path: Path) -> None:
    spanish = (
        "fleetwatch: FLEETWATCH_APROVE_PORT: ajuste desconocido; ¿quiso decir "
        "FLEETWATCH_APPROVE_PORT? (los ajustes: README.es.md, «Comandos y ajustes»; cada uno en "
        "docs/settings.md, en inglés)"
    )
    env = base_env(tmp_path / "home", FLEETWATCH_APROVE_PORT="8767")
    code, _, err = await fleetwatch(env, "status", "--language", "es")
    assert code == 2 and err.startswith(spanish), err
    # FLEETWATCH_LANGUAGE is still heard when another setting is misspelt
    code, _, err = await fleetwatch({**env, "FLEETWATCH_LANGUAGE": "es"}, "status")
    assert code == 2 and err.startswith(spanish), err
    code, _, err = await fleetwatch(env, "status")
    assert code == 2 and "unknown setting; did you mean FLEETWATCH_APPROVE_PORT?" in err, err


async def test_a_bad_value_is_explained_in_spanish_with_the_setting_and_value_as_they_are(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    cases = [
        (
            {"FLEETWATCH_ASK_PORT": "70000"},
            "FLEETWATCH_ASK_PORT: el puerto 70000 está fuera de 0..65535 (0 = cualquier puerto libre)",
        ),
        ({"FLEETWATCH_ASK_PORT": "port"}, "FLEETWATCH_ASK_PORT: no es un número de puerto: 'port'"),
        (
            {"FLEETWATCH_TIMEZONE": "Mars/Base"},
            "FLEETWATCH_TIMEZONE: no es una zona horaria: 'Mars/Base' (un nombre IANA como America/Mexico_City)",
        ),
        (
            {"FLEETWATCH_TEAMS_WEBHOOK_URL": "http://hooks.example.com/x"},
            "FLEETWATCH_TEAMS_WEBHOOK_URL: valor mal formado (secreto, no se muestra): debe ser https "
            "(http simple solo hacia 127.0.0.1, localhost o ::1)",
        ),
    ]
    for extra, expected in cases:
        code, _, err = await fleetwatch(base_env(home, FLEETWATCH_LANGUAGE="es", **extra), "status")
        assert (
            code == 2 and error_code(err) == "config_invalid" and error_message(err).startswith(f"{expected}")
        ), (extra, err)
    code, _, err = await fleetwatch(base_env(home, FLEETWATCH_ASK_PORT="70000"), "status")
    assert code == 2 and "port 70000 is outside 0..65535" in err, err


async def test_not_running_is_said_in_spanish_to_the_end(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, _, err = await fleetwatch(base_env(home, FLEETWATCH_LANGUAGE="es"), "status")
    line = err.strip()
    assert (
        code == 2
        and error_code(line) == "service_unavailable"
        and error_message(line).startswith(
            f"Fleetwatch no está en ejecución aquí (FLEETWATCH_HOME={home}): inícielo con `FLEETWATCH_HOME={home} fleetwatch up --language es`"
        )
    ), err
    assert "nothing" not in line and "is not running" not in line and "answers" not in line, line
    code, _, err = await fleetwatch(base_env(home), "status")
    assert code == 2 and "nothing was sent" in err, err


async def test_demo_off_the_lab_refuses_in_spanish(tmp_path: Path) -> None:
    env = base_env(
        tmp_path / "home", FLEETWATCH_LANGUAGE="es", FLEETWATCH_EPIPHAN_MCP_URL="https://epiphan.example/mcp"
    )
    code, _, err = await fleetwatch(env, "demo")
    assert (
        code == 2
        and error_code(err) == "config_invalid"
        and error_message(err).startswith(
            "la demo solo funciona con el laboratorio integrado; "
            "FLEETWATCH_EPIPHAN_MCP_URL apunta a otro lugar (use 'fleetwatch up')"
        )
    ), err


async def test_no_sign_in_and_an_unreachable_sign_in_server_are_said_in_spanish(tmp_path: Path) -> None:
    home = tmp_path / "home"
    slot = home / "tokens" / "read.json"
    code, _, err = await fleetwatch(base_env(home, FLEETWATCH_LANGUAGE="es"), "fleet")
    assert code == 2 and err == f"fleetwatch: {slot}: no hay sesión iniciada en esta ranura [no_sign_in]\n", (
        err
    )
    code, _, err = await fleetwatch(base_env(home), "fleet")
    assert code == 2 and err == f"fleetwatch: {slot}: no sign-in in this slot [no_sign_in]\n", err
    nowhere = base_env(
        home, FLEETWATCH_LANGUAGE="es", FLEETWATCH_EPIPHAN_MCP_URL=f"http://127.0.0.1:{free_port()}/mcp"
    )
    code, _, err = await fleetwatch(nowhere, "login", "--no-browser")
    assert (
        code == 2
        and error_code(err) == "sign_in_failed"
        and error_message(err).startswith("el inicio de sesión falló en el descubrimiento: ")
    ), err
    assert error_message(err).endswith("al hablar con 127.0.0.1"), err


async def test_a_pasted_placeholder_or_an_id_without_its_prefix_is_named_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    """Nothing runs here: the answer is the ID's form (invalid_arguments), not "not running"
    (which would mean the CLI tried the socket) nor the service's "malformed request"."""
    home = tmp_path / "home"
    for args in (("pending", "show", "e43e39cdbb91"), ("deny", "<ID>")):
        code, _, err = await fleetwatch(base_env(home, FLEETWATCH_LANGUAGE="es"), *args)
        assert code == 2 and error_code(err) == "invalid_arguments", err
        assert "no es un ID de propuesta: uno se ve así: p-1a2b3c4d5e6f" in err, err
    code, _, err = await fleetwatch(base_env(home), "pending", "show", "e43e39cdbb91")
    assert code == 2 and "'e43e39cdbb91' is not a proposal ID: one looks like p-1a2b3c4d5e6f" in err, err


def test_the_demo_watch_posts_in_the_demo_language_unless_the_watch_language_is_set(monkeypatch) -> None:
    """``demo --language es``: the watch's Slack and Teams posts are Spanish too."""
    from services.ctl.demo_env import demo_environment
    from shared.config import load_settings

    monkeypatch.delenv("FLEETWATCH_WATCH_LANGUAGE", raising=False)
    settings = load_settings({})
    assert demo_environment(settings, "campus", "es")["FLEETWATCH_WATCH_LANGUAGE"] == "es"
    assert demo_environment(settings, "campus")["FLEETWATCH_WATCH_LANGUAGE"] == "en"
    monkeypatch.setenv("FLEETWATCH_WATCH_LANGUAGE", "en")
    assert demo_environment(settings, "campus", "es")["FLEETWATCH_WATCH_LANGUAGE"] == "en"
