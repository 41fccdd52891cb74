"""executor.sock's manifest: it agrees with the request union both ways, every code the
executor can answer with is declared, and every declared code has a source."""

from __future__ import annotations

import ast
from pathlib import Path

from shared.errors import Code
from shared.wire.executor import (
    CAPABILITIES,
    EXECUTE_REFUSALS,
    OPERATIONS,
    REQUESTS,
    START_CODES,
    declared_codes,
)
from shared.wire.protocol import TRANSPORT_CODES, manifest_problems

PACKAGE = Path(__file__).resolve().parents[2] / "services" / "executor"

FROM_SHARED = {
    Code.APPROVAL_NOT_CONSUMED: "services.executor.executions.claim_approval",
    Code.APPROVAL_MISMATCH: "services.executor.executions.claim_approval",
    Code.APPROVAL_EXPIRED: "services.executor.executions.claim_approval",
    Code.APPROVAL_ALREADY_USED: "services.executor.executions.claim_approval",
    Code.PROPOSAL_NOT_PENDING: "services.executor.executions.claim_approval",
    Code.NOT_PROPOSABLE: "shared.policy.loader.ToolPolicy.rule_for",
    Code.SCHEMA_NOT_REVIEWED: "shared.policy.loader.ToolPolicy.rule_for",
    Code.TOO_MANY_TARGETS: "shared.policy.loader.ProposeRule.validate",
    Code.INVALID_ARGUMENTS: "shared.policy.loader.ProposeRule.validate",
    Code.HIDDEN_CHARACTER: "shared.canonical.canonicalize_arguments",
    Code.NOT_CANONICALIZABLE: "shared.canonical / shared.binding.make_bound_record",
    Code.STORE_BUSY: "shared.store.db.write_tx",
    Code.CONFIG_INVALID: "shared.store.audit_seal.read_anchor / write_anchor (the audit anchor file)",
}
"""Codes raised inside shared functions the executor calls (and passes on unchanged)."""


def codes_named_in_package() -> set[Code]:
    """Every ``Code.X`` written in services/executor/*.py."""
    found = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Code"
            ):
                found.add(Code[node.attr])
    return found


def test_the_manifest_and_the_request_union_agree_both_ways() -> None:
    assert manifest_problems(OPERATIONS, REQUESTS) == ()
    assert CAPABILITIES.service == "executor"


def test_every_code_the_executor_can_answer_with_is_declared() -> None:
    named = codes_named_in_package()
    assert named, "the scan found no codes"
    assert named - declared_codes() - TRANSPORT_CODES - START_CODES == set()
    assert not START_CODES & declared_codes()
    assert set(FROM_SHARED) - declared_codes() == set()


def test_every_declared_code_has_a_source() -> None:
    sources = codes_named_in_package() | set(FROM_SHARED)
    assert declared_codes() - sources == set()


def test_execute_lists_each_refusal_once() -> None:
    assert len(EXECUTE_REFUSALS) == len(set(EXECUTE_REFUSALS))
