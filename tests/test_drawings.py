"""Hand-drawn truths held to the code: each package's layer drawing (its docstring) to its
import contract in ``pyproject.toml``, no import cycle inside a package even through
``TYPE_CHECKING`` imports, and the exception tree drawn in `shared.errors` to the classes."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import grimp
import pytest

import shared.errors

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
LAYERS = [c for c in CONTRACTS if c["type"] == "layers"]
MODULE = re.compile(r"^(\w+)(?:\.py|/)$")


def contract_layers(contract: dict) -> list[frozenset[str]]:
    """The contract's layers, highest first, each a set of module names."""
    return [frozenset(m.strip() for m in layer.split("|")) for layer in contract["layers"]]


def drawn_layers(doc: str) -> list[list[frozenset[str]]]:
    """Every drawing in `doc`, highest layer first: a literal block (after a line ending in
    ``::``) whose unindented lines start with modules (``name.py`` or ``folder/``), each such
    line one layer (a line starting with ``|`` adds to the one before); the sentence before the
    block says the direction ("... the ones above it": drawn lowest first)."""
    lines = doc.splitlines()
    drawings = []
    for at, line in enumerate(lines):
        if not line.rstrip().endswith("::"):
            continue
        intro = " ".join(lines[max(0, at - 2) : at + 1])
        block = []
        for text in lines[at + 1 :]:
            if text.strip() and not text.startswith(" "):
                break
            block.append(text)
        body = [t for t in block if t.strip()]
        if not body:
            continue
        indent = min(len(t) - len(t.lstrip()) for t in body)
        groups: list[set[str]] = []
        for text in body:
            if len(text) - len(text.lstrip()) != indent:
                continue
            tokens = text.split()
            joins = tokens[0] == "|"
            names = []
            for token in tokens[1:] if joins else tokens:
                found = MODULE.match(token)
                if token == "|":
                    continue
                if not found:
                    break
                names.append(found.group(1))
            if not names:
                groups = []
                break
            if joins and groups:
                groups[-1].update(names)
            else:
                groups.append(set(names))
        if groups:
            upward = "above" in intro or "before" in intro
            drawings.append([frozenset(g) for g in (reversed(groups) if upward else groups)])
    return drawings


def docstring(package: str) -> str:
    path = ROOT / package.replace(".", "/") / "__init__.py"
    return ast.get_docstring(ast.parse(path.read_text())) or ""


@pytest.mark.parametrize("contract", LAYERS, ids=lambda c: c["id"])
def test_each_packages_drawing_is_its_import_contract(contract: dict) -> None:
    (container,) = contract["containers"]
    wanted = contract_layers(contract)
    drawings = drawn_layers(docstring(container))
    same_modules = [d for d in drawings if frozenset().union(*d) == frozenset().union(*wanted)]
    assert same_modules, (
        f"{container}'s docstring draws no layers of {sorted(frozenset().union(*wanted))}: {drawings}"
    )
    assert same_modules[0] == wanted


def test_a_drawing_that_lies_is_told_apart_from_one_that_does_not() -> None:
    contract = {"layers": ["top", "left | right", "bottom"]}
    true = (
        "Layers (each imports only those below it)::\n\n    top.py  one\n    left.py  right.py\n    bottom/\n"
    )
    upward = "Layers (each may import the ones above it)::\n\n    bottom/\n    left.py\n    | right.py\n    top.py\n"
    swapped = true.replace("top.py", "@").replace("bottom/", "top.py").replace("@", "bottom/")
    split = true.replace("left.py  right.py", "left.py\n    right.py")
    assert drawn_layers(true) == drawn_layers(upward) == [contract_layers(contract)]
    assert drawn_layers(swapped) != [contract_layers(contract)]
    assert drawn_layers(split) != [contract_layers(contract)]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The product's imports, ``TYPE_CHECKING`` ones included."""
    return grimp.build_graph("services", "shared", exclude_type_checking_imports=False, cache_dir=None)


@pytest.mark.parametrize("contract", LAYERS, ids=lambda c: c["id"])
def test_no_module_imports_one_above_it_not_even_for_types_only(
    contract: dict, graph: grimp.ImportGraph
) -> None:
    """import-linter leaves ``TYPE_CHECKING`` imports out; a type-only import upwards is still
    a cycle a reader has to hold in mind, so none is allowed."""
    (container,) = contract["containers"]
    rank = {f"{container}.{m}": i for i, layer in enumerate(contract_layers(contract)) for m in layer}

    def layer_of(module: str) -> str | None:
        return next((name for name in rank if module == name or module.startswith(name + ".")), None)

    upward = []
    for importer in sorted(graph.modules):
        above = layer_of(importer)
        for imported in graph.find_modules_directly_imported_by(importer) if above else ():
            below = layer_of(imported)
            if below is not None and below != above and rank[below] <= rank[above]:
                upward.append(f"{importer} -> {imported}")
    assert upward == []


TREE_NAME = re.compile(r"^[\s│├└─]*((?:[a-z_]\w*\.)+[A-Z]\w*|[A-Z]\w*Error)(?:\s|$)")
"""A class in the drawing: its dotted path (``package.module.Class``), or the root's bare name."""


def drawn_tree(doc: str) -> dict[str, str | None]:
    """The exception tree drawn in `doc` (after ``Exception tree``): each class's dotted path
    -> its parent's (None for the root), by the column its name starts at."""
    block = doc.split("Exception tree", 1)[1].split("::", 1)[1].strip("\n").split("\n\n", 1)[0]
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        found = TREE_NAME.match(line)
        if not found:
            continue
        column = found.start(1)
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[found.group(1)] = stack[-1][1] if stack else None
        stack.append((column, found.group(1)))
    return parents


def defined_errors() -> dict[str, str]:
    """Every class of the product that derives from `FleetwatchError`, as ``module.Class`` ->
    its base's name (read from the source by the bases' names: nothing is imported)."""
    bases: dict[str, list[str]] = {}
    for path in sorted([*ROOT.glob("shared/**/*.py"), *ROOT.glob("services/**/*.py")]):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases[f"{module}.{node.name}"] = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
    errors: dict[str, str] = {}
    while True:
        names = {"FleetwatchError"} | {path.rpartition(".")[2] for path in errors}
        more = {path: base for path, found in bases.items() for base in found if base in names}
        if more == errors:
            return errors
        errors = more


def test_the_exception_tree_drawn_in_shared_errors_is_the_classes_tree() -> None:
    tree = drawn_tree(shared.errors.__doc__ or "")
    assert tree["FleetwatchError"] is None and len(tree) > 10
    drawn = {path: parent.rpartition(".")[2] for path, parent in tree.items() if parent is not None}
    assert drawn == defined_errors()


def test_a_tree_drawn_wrong_is_told_apart() -> None:
    doc = "Exception tree::\n\n    RootError  the\n    ├── a.B    one\n    │   └── a.C  Two\n    │        More\n    └── a.D\n"
    assert drawn_tree(doc) == {"RootError": None, "a.B": "RootError", "a.C": "a.B", "a.D": "RootError"}
    assert drawn_tree(doc.replace("│   └── a.C", "└── a.C"))["a.C"] == "RootError"
