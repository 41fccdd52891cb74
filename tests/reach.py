"""What each process's entry point reaches, read from the source (nothing is imported or run).

`reached(entry)`: the modules of ``services``/``shared`` that ``python -m <entry>`` can load,
following every ``import`` and ``from ... import`` statement, at module level or inside a
function (a lazy import still runs on some path), ``importlib.import_module`` of a package's
module by a name the source spells out, plus the packages a loaded module sits in (their
``__init__`` runs first).

`settings_read(modules)`: the `shared.config.SETTINGS` a set of modules reads: an attribute of a
settings object (``settings.db``, ``self._settings.db``, ``rt.settings.db``), a `Settings`
property counting as the fields it is built from (``settings.executor_socket`` reads
``runtime_dir``), and a setting whose default names another (``{FLEETWATCH_STATE_DIR}``)
counting as reading that one too. ``getattr`` with a computed name is not followed, so
listing every setting (``Settings.describe``, for `doctor`) reads none of them.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from pathlib import Path

from shared.config import SETTINGS, Settings

ROOT = Path(__file__).resolve().parents[1]
OUR_PACKAGES = ("services", "shared")
ENTRY_POINTS = {
    "assistant": "services.assistant.__main__",
    "approval_web": "services.approval_web.__main__",
    "executor": "services.executor.__main__",
    "fleetwatch": "services.ctl.main",
}
"""Each process a setting's ``read_by`` may name, and the module ``python -m`` runs for it."""
SETTINGS_NAMES = frozenset({"settings", "_settings"})
"""How the code names a `Settings` object (as a variable or an attribute)."""


def module_file(module: str) -> Path | None:
    """The source file of one of our modules (a package's ``__init__.py``), or None."""
    if not module.startswith(OUR_PACKAGES):
        return None
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _is_package(module: str) -> bool:
    return ROOT.joinpath(*module.split("."), "__init__.py").is_file()


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if _is_package(module) else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


@functools.cache
def imports_of(module: str) -> frozenset[str]:
    """Our modules that `module`'s source imports anywhere in it (and their packages)."""
    path = module_file(module)
    if path is None:
        return frozenset()
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    found.update(_imported_by_name(tree))
    out: set[str] = set()
    for name in found:
        parts = name.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return frozenset(m for m in out if module_file(m) is not None)


def _imported_by_name(tree: ast.Module) -> set[str]:
    """Modules an ``importlib.import_module(f"<package>.{name}")`` call can load: the package's
    modules named by any string constant of the same source (``services.ctl.main`` loads the
    command's module by a name from its ``MODULES``/``COMMANDS`` tables)."""
    prefixes = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.JoinedStr)
            and node.args[0].values
            and isinstance(node.args[0].values[0], ast.Constant)
        ):
            prefixes.add(str(node.args[0].values[0].value))
    names = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return {f"{prefix}{name}" for prefix in prefixes for name in names if name.isidentifier()}


@functools.cache
def reached(entry: str) -> frozenset[str]:
    """Every module of ours that loading `entry` can load (see the module doc)."""
    seen: set[str] = set()
    todo = [entry, *(entry.rsplit(".", i)[0] for i in range(1, entry.count(".") + 1))]
    while todo:
        module = todo.pop()
        if module in seen or module_file(module) is None:
            continue
        seen.add(module)
        todo.extend(imports_of(module) - seen)
    return frozenset(seen)


def _settings_property_fields() -> dict[str, frozenset[str]]:
    """Each `Settings` property and the fields it reads (``self.<field>``)."""
    source = ROOT / "shared" / "config.py"
    tree = ast.parse(source.read_text())
    fields = {f.attr for f in SETTINGS}
    out: dict[str, frozenset[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == Settings.__name__:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list
                ):
                    used = {
                        n.attr
                        for n in ast.walk(item)
                        if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name)
                        and n.value.id == "self"
                    }
                    out[item.name] = frozenset(used & fields)
    return out


def _is_settings(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id in SETTINGS_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr in SETTINGS_NAMES
    )


@functools.cache
def _attributes_read(module: str) -> frozenset[str]:
    path = module_file(module)
    assert path is not None, module
    tree = ast.parse(path.read_text(), str(path))
    return frozenset(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _is_settings(n.value))


_PLACEHOLDER = re.compile(r"\{(FLEETWATCH_[A-Z_]+)\}")


def settings_read(modules: Iterable[str]) -> frozenset[str]:
    """The names (``FLEETWATCH_...``) of the settings `modules` read (see the module doc)."""
    by_attr = {s.attr: s for s in SETTINGS}
    properties = _settings_property_fields()
    attrs: set[str] = set()
    for module in modules:
        for attr in _attributes_read(module):
            attrs |= properties.get(attr, frozenset({attr}) if attr in by_attr else frozenset())
    names = {by_attr[a].name for a in attrs}
    todo = list(names)
    while todo:  # a default that names another setting reads it too
        current = todo.pop()
        setting = next(s for s in SETTINGS if s.name == current)
        for named in _PLACEHOLDER.findall(setting.default):
            if named not in names:
                names.add(named)
                todo.append(named)
    return frozenset(names)


def readers() -> dict[str, frozenset[str]]:
    """``{setting name: the processes whose entry point reaches code that reads it}``."""
    read = {process: settings_read(reached(entry)) for process, entry in ENTRY_POINTS.items()}
    return {s.name: frozenset(p for p, names in read.items() if s.name in names) for s in SETTINGS}
