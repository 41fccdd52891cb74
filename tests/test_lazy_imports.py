"""What each entry point loads before it does anything (issue 14): the ``fleetwatch`` command
starts without the heavy SDKs, which load only in the commands that call Epiphan or a model,
and the services start without what only some operations need.

Each check is a real ``python`` process that imports the entry point and lists the top-level
packages it loaded (``sys.modules``): no timer, so a loaded machine cannot make it flaky.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = frozenset(
    {
        "anthropic",
        "mcp",
        "mcp_types",
        "httpx",
        "httpx2",
        "pydantic",
        "aiohttp",
        "jinja2",
        "jsonschema",
        "yaml",
    }
)
"""The SDKs and libraries an idle entry point must not load: the model's and Epiphan's
clients, their HTTP and validation stacks, the web pages' and the policy's."""

PROBE = """
import importlib, json, sys
module = importlib.import_module(sys.argv[1])
if sys.argv[2:]:
    getattr(module, sys.argv[2])()
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def loaded(module: str, call: str | None = None) -> set[str]:
    """The top-level packages a fresh interpreter holds after importing `module` (and calling
    its function `call`)."""
    argv = [sys.executable, "-c", PROBE, module, *([call] if call else [])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout))


def test_the_fleetwatch_command_and_its_parser_load_no_heavy_sdk() -> None:
    assert loaded("services.ctl.main", "build_parser") & HEAVY == set()


@pytest.mark.parametrize("module", ["services.ctl.commands_admin", "services.ctl.commands_ask"])
def test_the_socket_commands_load_no_heavy_sdk(module: str) -> None:
    assert loaded(module) & HEAVY == set()


def test_the_commands_that_read_epiphan_load_the_mcp_sdk_when_they_run() -> None:
    # the proof that the list above means something: the read path does load it, lazily
    probe = "import sys; from shared.epiphan.mcp_session import _sdk; _sdk(); print(sorted(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert "mcp" in done.stdout and "httpx2" in done.stdout


def test_approval_web_at_rest_loads_no_epiphan_or_model_sdk() -> None:
    """approval_web never calls Epiphan: it loads the policy (yaml, jsonschema) and serves its
    page (aiohttp, jinja2), nothing more."""
    assert loaded("services.approval_web.__main__") & HEAVY <= {"yaml", "jsonschema", "aiohttp", "jinja2"}


@pytest.mark.parametrize("module", ["services.executor.__main__", "services.assistant.__main__"])
def test_the_executor_and_the_assistant_at_rest_have_loaded_neither_the_mcp_nor_the_model_sdk(
    module: str,
) -> None:
    """Both load the policy at start (yaml, jsonschema); the MCP SDK comes with their first
    Epiphan call, the Anthropic SDK with the assistant's first model call, the ask page's web
    stack only with ``--page``."""
    assert loaded(module) & HEAVY <= {"yaml", "jsonschema"}


MODULES_PROBE = """
import json, sys
exec(sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""


def modules_after(code: str) -> set[str]:
    """Every module (full dotted names) a fresh interpreter holds after running `code`."""
    argv = [sys.executable, "-c", MODULES_PROBE, code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def within(modules: set[str], *packages: str) -> set[str]:
    """The modules of `modules` that are one of `packages` or inside one."""
    return {m for m in modules if any(m == p or m.startswith(f"{p}.") for p in packages)}


COMPILED = "from shared.text.catalogue import compile_catalogues; compile_catalogues()\n"
"""What ``./scripts/setup`` does: the catalogue's compiled twins, current (idempotent)."""


def test_the_catalogue_reads_its_compiled_twins_without_babel() -> None:
    """Parsing the ``.po`` files with Babel took every command 0.2 s and each service Babel's
    message modules (issue 14): with current twins, both languages load through `gettext`."""
    loaded_now = modules_after(
        COMPILED + "from shared.text.catalogue import translate, translations\n"
        "import shared.text.catalogue as c; c.translations.cache_clear(); del c\n"
        "for n in [m for m in sys.modules if m.startswith('babel')]: del sys.modules[n]\n"
        "assert translate('es', 'options') != 'options'; translations()['en']"
    )
    assert within(loaded_now, "babel") == set()


def test_a_socket_command_in_words_loads_neither_babel_s_messages_nor_supervisor_nor_redaction() -> None:
    """``fleetwatch status`` / ``pending list``: the command, its parser, its words in both
    languages; Babel's message modules, supervisor's HTTP server (behind its XML-RPC client)
    and the redaction patterns (15 ms of regular expressions) stay out."""
    loaded_now = modules_after(
        COMPILED + "for n in [m for m in sys.modules if m.startswith('babel')]: del sys.modules[n]\n"
        "from services.ctl.main import build_parser; build_parser('status')\n"
        "import services.ctl.commands_admin, services.ctl.commands_watch\n"
        "from shared.text.catalogue import translate; translate('en', 'options'); translate('es', 'options')"
    )
    assert within(loaded_now, "babel", "supervisor", "shared.epiphan.redact", "difflib") == set()
    assert within(loaded_now, "services.ctl.commands_fleet", "services.ctl.supervise") == set()


def test_an_admin_command_but_status_loads_neither_the_watch_nor_the_assistant_s_contract() -> None:
    """``pending``, ``deny``, ``audit``...: approval.sock's contract alone, not assistant.sock's
    with the fleet snapshot's structs, nor the watch's words (``status`` loads those when it
    runs)."""
    loaded_now = modules_after(
        "from services.ctl.main import build_parser; build_parser('pending')\nimport services.ctl.commands_admin"
    )
    assert "shared.wire.approval" in loaded_now
    assert (
        within(loaded_now, "shared.wire.assistant", "shared.epiphan", "services.ctl.commands_watch") == set()
    )


def test_what_reads_the_fleet_still_loads_the_redaction_when_it_parses_endpoints() -> None:
    # the proof that the check above means something: the parse that needs it loads it
    loaded_now = modules_after(
        "from shared.epiphan.fleet import parse_stream_endpoints\n"
        "parse_stream_endpoints({'stream_endpoints': [{'id': 'e1', 'name': 'n', 'url': 'rtmp://x.example/live'}]})"
    )
    assert "shared.epiphan.redact" in loaded_now


def test_a_time_said_loads_babel_dates_only_then() -> None:
    loaded_now = modules_after("import shared.text.times")
    assert within(loaded_now, "babel") == set()
    said = modules_after(
        "import datetime as dt; from shared.text.times import say_time\n"
        "now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC); say_time('2026-01-01T00:00:00Z', zone=dt.UTC, now=now)"
    )
    assert "babel.dates" in said


MCP_SERVER_SIDE = ("mcp.server", "starlette", "uvicorn", "sse_starlette", "click", "cryptography")
"""What mcp 2.x's package ``__init__`` files bring besides the client (`shared.epiphan.sdk_import`)."""

CLIENT_SIDE = (
    "from shared.epiphan.mcp_session import _sdk; sdk = _sdk()\n"
    "from shared.epiphan.sdk_import import import_client; import_client('shared.epiphan.signin')\n"
)
"""What a service's first Epiphan read loads: the MCP session's SDK parts and the sign-in."""


def test_a_service_reading_epiphan_loads_the_mcp_client_without_the_sdk_s_server_side() -> None:
    loaded_now = modules_after(CLIENT_SIDE)
    assert {
        "mcp.client.session",
        "mcp.client.streamable_http",
        "mcp.client.auth",
        "shared.epiphan.signin",
    } <= loaded_now
    assert within(loaded_now, *MCP_SERVER_SIDE) == set()


def test_code_that_needs_the_whole_mcp_package_gets_it_with_the_same_client_classes() -> None:
    """A name looked up in ``mcp`` or ``mcp.client`` runs its ``__init__`` then: the package is
    whole, its names are the client modules' own, and the server side imports."""
    loaded_now = modules_after(
        CLIENT_SIDE + "import mcp, mcp.client.session\n"
        "from mcp import ClientSession, Client, MCPError\n"
        "assert ClientSession is sdk.ClientSession is mcp.client.session.ClientSession\n"
        "assert MCPError is sdk.MCPError and mcp.client.Client is Client\n"
        "assert {'ClientSession', 'Client', 'types'} <= set(mcp.__all__) | set(vars(mcp))\n"
        "from mcp.server.mcpserver import MCPServer\n"
    )
    assert {"mcp.server.mcpserver", "starlette"} <= loaded_now


def test_with_mcp_already_imported_the_client_modules_are_the_ordinary_ones() -> None:
    loaded_now = modules_after(
        "import mcp\nfrom shared.epiphan import sdk_import\n"
        "session, = sdk_import.import_client('mcp.client.session')\n"
        "assert type(sys.modules['mcp']) is type(sys) and session.ClientSession is mcp.ClientSession\n"
    )
    assert "mcp.server" in loaded_now
