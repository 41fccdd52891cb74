"""approval.sock's manifest against the code, both ways: request types, the codes the handlers
can raise, the codes the executor's Prepare passes through, and nothing declared that nothing
produces."""

from __future__ import annotations

import ast
from pathlib import Path

from shared.errors import MEANINGS, Code
from shared.wire.approval import (
    INTAKE_CODES,
    LIST_WRITABLE_CODES,
    OPERATIONS,
    PREPARE_CODES,
    REQUESTS,
    START_CODES,
    codes_of,
)
from shared.wire.executor import OPERATIONS as EXECUTOR_OPERATIONS
from shared.wire.protocol import TRANSPORT_CODES, manifest_problems

PACKAGE = Path(__file__).resolve().parents[2] / "services" / "approval_web"
HANDLER_MODULES = ("intake.py", "limits.py", "one_change.py", "service.py", "admin.py", "server.py")

FROM_SHARED_MODULES = {
    Code.NOT_PROPOSABLE: "shared.policy.loader ToolPolicy.rule_for",
    Code.SCHEMA_NOT_REVIEWED: "shared.policy.loader ToolPolicy.rule_for",
    Code.TOO_MANY_TARGETS: "shared.policy.loader ProposeRule.validate",
    Code.INVALID_ARGUMENTS: "shared.policy.loader ProposeRule.validate",
    Code.HIDDEN_CHARACTER: "shared.canonical.canonicalize_arguments",
    Code.NOT_CANONICALIZABLE: "shared.canonical.canonicalize_arguments",
    Code.SERVICE_UNAVAILABLE: "shared.wire.client.request",
    Code.SERVICE_NO_ANSWER: "shared.wire.client.request",
    Code.STORE_BUSY: "shared.store.db.write_tx",
    Code.CONFIG_INVALID: "shared.store.audit_seal.read_anchor / write_anchor (the audit anchor file)",
    Code.KILL_SWITCH_NOT_CONFIRMED: "the executor's SealKillSwitch, passed on (services.executor.kill_switch.seal)",
}
"""Codes the handlers answer with that are raised inside shared modules they call, or passed on
from the executor."""


def codes_named_in(path: Path) -> set[Code]:
    """Every ``Code.X`` the module's source names."""
    tree = ast.parse(path.read_text())
    return {
        Code[node.attr]
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Code"
    }


def declared() -> set[Code]:
    return {code for op in OPERATIONS for code in op.codes}


def test_the_manifest_and_the_request_union_agree_both_ways() -> None:
    assert manifest_problems(OPERATIONS, REQUESTS) == ()


def test_every_code_the_handlers_name_is_declared_by_some_operation() -> None:
    named = set().union(*(codes_named_in(PACKAGE / name) for name in HANDLER_MODULES))
    assert named - declared() - TRANSPORT_CODES - START_CODES == set()
    assert not START_CODES & declared()


def test_every_declared_code_is_produced_by_a_handler_a_shared_module_or_the_executor() -> None:
    named = set().union(*(codes_named_in(PACKAGE / name) for name in HANDLER_MODULES))
    produced = named | set(FROM_SHARED_MODULES) | PREPARE_CODES | LIST_WRITABLE_CODES
    assert declared() - produced == set()
    assert all(code in MEANINGS for code in declared())


def test_submit_passes_through_exactly_the_codes_the_executor_declares_for_prepare() -> None:
    prepare = next(op for op in EXECUTOR_OPERATIONS if op.name == "prepare")
    assert prepare.codes == PREPARE_CODES and Code.TARGET_NOT_IN_SANDBOX in PREPARE_CODES
    assert PREPARE_CODES <= codes_of("submit_proposal")


def test_list_writable_relays_exactly_the_executors_codes_and_the_socket_failures() -> None:
    executor = next(op for op in EXECUTOR_OPERATIONS if op.name == "list_writable")
    assert executor.codes == LIST_WRITABLE_CODES and Code.FENCE_NOT_CONFIGURED in LIST_WRITABLE_CODES
    assert codes_of("list_writable") == LIST_WRITABLE_CODES | {
        Code.SERVICE_UNAVAILABLE,
        Code.SERVICE_NO_ANSWER,
    }


def test_submit_declares_each_intake_refusal_once_in_checking_order() -> None:
    assert len(set(INTAKE_CODES)) == len(INTAKE_CODES)
    assert set(INTAKE_CODES) <= codes_of("submit_proposal")
    assert INTAKE_CODES.index(Code.OBSERVE_MODE) < INTAKE_CODES.index(Code.NOT_PROPOSABLE)
    assert INTAKE_CODES.index(Code.FENCE_NOT_CONFIGURED) < INTAKE_CODES.index(Code.QUEUE_FULL)
    assert INTAKE_CODES.index(Code.DENIAL_PAUSE) < INTAKE_CODES.index(Code.SERVICE_UNAVAILABLE)


def test_only_admin_operations_and_the_assistants_records_declare_the_role_refusal() -> None:
    assistant_ops = {
        "submit_proposal",
        "get_proposal_state",
        "expire_turn",
        "list_writable",
        "list_proposal_history",
        "get_capabilities",
    }
    records = {"record_ask", "record_refusal"}  # refused for every uid but the assistant's
    for op in OPERATIONS:
        if op.name in assistant_ops - {"submit_proposal"}:
            assert Code.OPERATION_NOT_ALLOWED not in op.codes, op.name
        else:
            assert op.name == "submit_proposal" or Code.OPERATION_NOT_ALLOWED in op.codes, op.name
    assert records <= {op.name for op in OPERATIONS}
