"""The three sockets' operation tables against the code that answers them, both ways: every
code a handler names is declared by its socket (or is a transport code, or one recorded at
start and never answered), and every declared code is produced by the socket's own package, by
the shared module named for it, or by the socket it relays. What a table guarantees by
construction (one row per request, the union, the codec, the manifest, a handler per row, the
role refusal of a row open to some callers only) is not tested here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.assistant import manifest as assistant_manifest
from shared.errors import MEANINGS, Code
from shared.wire import approval, assistant, executor
from shared.wire.protocol import TRANSPORT_CODES, OperationTable

ROOT = Path(__file__).resolve().parents[3]
_CODE = re.compile(r"\bCode\.([A-Z_]+)\b")


def named_in(*paths: Path) -> set[Code]:
    """Every ``Code.X`` written in these files (folders: every ``*.py`` under them)."""
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]
    return {Code[name] for f in files for name in _CODE.findall(f.read_text())}


@dataclass(frozen=True)
class Socket:
    """One socket as this test reads it.

    Attributes:
        table: its operation table.
        package: the files whose code answers it.
        shared: a code answered from a shared module (or a file outside `package`) -> that path.
        relayed: codes passed on unchanged from the socket it relays.
        recorded: codes recorded at start on proposals left behind, never answered.
        declared: every code its manifest declares (the assistant's adds its model tools and
            its ask page).
    """

    table: OperationTable
    package: tuple[Path, ...]
    shared: Mapping[Code, str]
    relayed: frozenset[Code] = frozenset()
    recorded: frozenset[Code] = frozenset()
    declared: frozenset[Code] | None = None


POLICY = {
    Code.NOT_PROPOSABLE: "shared/policy/model.py",
    Code.SCHEMA_NOT_REVIEWED: "shared/policy/model.py",
    Code.TOO_MANY_TARGETS: "shared/policy/model.py",
    Code.INVALID_ARGUMENTS: "shared/policy/model.py",
    Code.HIDDEN_CHARACTER: "shared/canonical.py",
    Code.NOT_CANONICALIZABLE: "shared/canonical.py",
    Code.STORE_BUSY: "shared/sqlite.py",
    Code.CONFIG_INVALID: "shared/store/audit_seal.py",
}
"""Codes raised inside shared modules the executor and approval_web call, passed on unchanged."""

APPROVAL_WEB = ROOT / "services" / "approval_web"
ASSISTANT = ROOT / "services" / "assistant"
SOCKETS = {
    "executor.sock": Socket(
        executor.OPERATIONS,
        (ROOT / "services" / "executor",),
        POLICY,
        recorded=executor.START_CODES,
    ),
    "approval.sock": Socket(
        approval.OPERATIONS,
        tuple(p for p in APPROVAL_WEB.glob("*.py") if p.name not in ("__init__.py", "__main__.py")),
        {
            **POLICY,
            Code.SERVICE_UNAVAILABLE: "shared/wire/client.py",
            Code.SERVICE_NO_ANSWER: "shared/wire/client.py",
            Code.KILL_SWITCH_NOT_CONFIRMED: "services/executor/kill_switch.py",
        },
        relayed=executor.PREPARE_CODES | executor.LIST_WRITABLE_CODES,
        recorded=approval.START_CODES,
    ),
    "assistant.sock": Socket(
        assistant.OPERATIONS,
        tuple(p for p in ASSISTANT.rglob("*.py") if p.name != "manifest.py"),
        {
            **dict.fromkeys(assistant.READ_CODES, "shared/epiphan"),
            Code.STORE_BUSY: "shared/sqlite.py",
        },
        declared=assistant_manifest.all_codes(),
    ),
}
"""What answers each socket."""


def declared_codes(table: OperationTable) -> frozenset[Code]:
    """Every code some operation of `table`'s socket declares."""
    return frozenset().union(*(row.declared for row in table.rows))


sockets = pytest.mark.parametrize("socket", SOCKETS.values(), ids=SOCKETS.keys())


@sockets
def test_every_code_a_handler_names_is_declared_by_its_socket(socket: Socket) -> None:
    named = named_in(*socket.package)
    assert named, "the scan found no codes"
    declared = declared_codes(socket.table) if socket.declared is None else socket.declared
    assert named - declared - TRANSPORT_CODES - socket.recorded == set()
    assert not socket.recorded & declared_codes(socket.table)


@sockets
def test_every_declared_code_is_produced_by_the_package_a_shared_module_or_a_relay(socket: Socket) -> None:
    produced = named_in(*socket.package) | set(socket.shared) | socket.relayed
    assert declared_codes(socket.table) - produced == set()
    assert all(code in MEANINGS for code in declared_codes(socket.table))


@sockets
def test_each_code_said_to_come_from_a_shared_module_is_named_there(socket: Socket) -> None:
    missing = {code for code, path in socket.shared.items() if code not in named_in(ROOT / path)}
    assert missing == set()


def test_the_refusals_checked_in_order_are_each_listed_once_in_that_order() -> None:
    for refusals in (approval.INTAKE_CODES, executor.EXECUTE_REFUSALS, executor.POLICY_CODES):
        assert len(set(refusals)) == len(refusals)
    intake = approval.INTAKE_CODES
    assert intake.index(Code.OBSERVE_MODE) < intake.index(Code.NOT_PROPOSABLE)
    assert intake.index(Code.FENCE_NOT_CONFIGURED) < intake.index(Code.QUEUE_FULL)
    assert intake.index(Code.DENIAL_PAUSE) < intake.index(Code.SERVICE_UNAVAILABLE)
