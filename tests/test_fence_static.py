"""The fence, held statically: a scan of every module in ``services/`` and ``shared/`` (the lab is
exempt: it is the server) fails when

1. a module outside ``services/executor/`` reads the sandbox token slot: a reading call
   (`READERS`) whose argument is, or is a local name assigned from, ``sandbox_token_file``;
2. a module other than ``shared/epiphan/read_client.py`` and ``services/executor/write_client.py`` calls
   ``.call(...)`` on an MCP connection (a name bound to ``McpConnection(...)``, a parameter or
   attribute annotated ``McpConnection``, or any receiver named like a connection), or any
   module but ``shared/epiphan/mcp_session.py`` sends ``tools/call`` itself (``call_tool``,
   ``CallToolRequest``);
3. a module outside ``services/executor/`` names an Epiphan write tool as an argument of a call.

Writing the sandbox slot (login, the lab demo) or showing its path is not a read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.epiphan.read_client import WRITE_TOOLS_OF_EPIPHAN

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("services", "shared")
EXEMPT = ("services/lab/",)
EXECUTOR = "services/executor/"
CONNECTION_CALLERS = {"shared/epiphan/read_client.py", "services/executor/write_client.py"}
TOOLS_CALL_SENDER = "shared/epiphan/mcp_session.py"
READERS = frozenset({"read_slot", "slot_summary", "open", "read_text", "read_bytes", "fresh_sign_in"})
"""Calls that read a slot file (directly or through `shared.epiphan.slots` / `shared.epiphan.signin`)."""
KNOWN_READERS = frozenset({("services/ctl/commands_doctor.py", "slot_summary")})
"""Reads allowed outside the executor, each a decision: ``doctor`` summarises the sandbox slot
(presence, mode, kind, team; never the token). Under the production fence the operator's user
cannot read the file at all, and the summary says so."""


def modules() -> Iterator[tuple[str, ast.Module]]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(EXEMPT):
                yield rel, ast.parse(path.read_text(), rel)


def mentions(node: ast.AST, attribute: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attribute for n in ast.walk(node))


def names_assigned_from(tree: ast.AST, attribute: str) -> set[str]:
    """Local names bound (assignment or for-loop target) from an expression naming `attribute`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and node.value is not None
            and mentions(node.value, attribute)
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if isinstance(node, ast.For | ast.AsyncFor) and mentions(node.iter, attribute):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return names


def call_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """Each function, and the module itself: the scopes a local name lives in."""
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def sandbox_slot_reads(rel: str, tree: ast.Module) -> list[str]:
    if rel.startswith(EXECUTOR):
        return []
    found = set()
    for scope in scopes(tree):
        tainted = names_assigned_from(scope, "sandbox_token_file") if scope is not tree else set()
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call) or call_name(node) not in READERS:
                continue
            parts = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node.func, ast.Attribute):
                parts.append(node.func.value)
            hit = any(
                mentions(p, "sandbox_token_file")
                or any(isinstance(n, ast.Name) and n.id in tainted for n in ast.walk(p))
                for p in parts
            )
            if hit and (rel, call_name(node)) not in KNOWN_READERS:
                found.add(f"{rel}:{node.lineno} {call_name(node)}(...) reads the sandbox slot")
    return sorted(found)


def connection_names(tree: ast.Module) -> set[str]:
    """Names and attributes that hold an `McpConnection`."""
    held: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.arg)
            and node.annotation is not None
            and "McpConnection" in ast.unparse(node.annotation)
        ):
            held.add(node.arg)
        if isinstance(node, ast.AnnAssign) and "McpConnection" in ast.unparse(node.annotation):
            held.add(ast.unparse(node.target))
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and call_name(node.value) == "McpConnection"
        ):
            held |= {ast.unparse(t) for t in node.targets}
        if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call):
            if call_name(node.context_expr) == "McpConnection" and node.optional_vars is not None:
                held.add(ast.unparse(node.optional_vars))
    for node in ast.walk(tree):  # self._connection = connection
        if isinstance(node, ast.Assign) and ast.unparse(node.value) in held:
            held |= {ast.unparse(t) for t in node.targets}
    return held


def connection_calls(rel: str, tree: ast.Module) -> list[str]:
    held = connection_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = ast.unparse(node.func.value)
            last = receiver.rsplit(".", 1)[-1].lower()
            if node.func.attr == "call" and (
                receiver in held or "connection" in last or last in ("conn", "session")
            ):
                if rel not in CONNECTION_CALLERS:
                    found.append(f"{rel}:{node.lineno} {receiver}.call(...) on an MCP connection")
            if node.func.attr == "call_tool" and rel != TOOLS_CALL_SENDER:
                found.append(f"{rel}:{node.lineno} {receiver}.call_tool(...) sends tools/call")
        if isinstance(node, ast.Name | ast.Attribute) and rel != TOOLS_CALL_SENDER:
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name == "CallToolRequest":
                found.append(f"{rel}:{node.lineno} builds a CallToolRequest")
    return found


def write_tools_named_in_calls(rel: str, tree: ast.Module) -> list[str]:
    if rel.startswith(EXECUTOR):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Constant) and arg.value in WRITE_TOOLS_OF_EPIPHAN:
                    found.append(f"{rel}:{node.lineno} {call_name(node)}({arg.value!r}, ...)")
    return found


@pytest.fixture(scope="module")
def parsed() -> list[tuple[str, ast.Module]]:
    return list(modules())


def test_only_the_executor_reads_the_sandbox_slot(parsed: list[tuple[str, ast.Module]]) -> None:
    assert [hit for rel, tree in parsed for hit in sandbox_slot_reads(rel, tree)] == []


def test_only_the_two_client_classes_call_an_mcp_connection(parsed: list[tuple[str, ast.Module]]) -> None:
    assert [hit for rel, tree in parsed for hit in connection_calls(rel, tree)] == []


def test_no_module_but_the_executor_names_a_write_tool_in_a_call(
    parsed: list[tuple[str, ast.Module]],
) -> None:
    assert [hit for rel, tree in parsed for hit in write_tools_named_in_calls(rel, tree)] == []


def test_the_scan_sees_each_kind_of_violation() -> None:
    planted = ast.parse(
        "from shared.epiphan.mcp_session import McpConnection\n"
        "async def f(settings, c: McpConnection):\n"
        "    path = settings.sandbox_token_file\n"
        "    read_slot(path)\n"
        "    async with McpConnection(u, t) as mine:\n"
        "        await mine.call('x')\n"
        "    await c.call('y')\n"
        "    await session.call_tool('batch_reboot', {})\n"
    )
    assert len(sandbox_slot_reads("services/other.py", planted)) == 1
    assert len(connection_calls("services/other.py", planted)) == 3
    assert len(write_tools_named_in_calls("services/other.py", planted)) == 1
    assert sandbox_slot_reads("services/executor/world.py", planted) == []
    assert write_tools_named_in_calls("services/executor/execute.py", planted) == []
