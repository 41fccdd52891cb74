"""Importing the MCP SDK's client side without its server side.

The package ``__init__`` files of mcp 2.x (``mcp`` and ``mcp.client``) import the SDK's server
as well: ``mcp.client`` imports ``mcp.client.client``, which imports ``mcp.client._memory``,
which imports ``mcp.server`` and with it starlette, uvicorn, sse_starlette, click and
cryptography. A client uses none of it: the MCP session of the assistant and the executor
(`shared.epiphan.mcp_session`) and the sign-in's OAuth (`shared.epiphan.signin`). Measured on
mcp 2.3: 15 MB of a service's memory from its first Epiphan read on (issue 14; ``bench/compass.py``
reports the idle RSS), and a third of that import's time.

`import_client` loads the modules it is given with ``mcp`` and ``mcp.client`` put in
``sys.modules`` as packages whose ``__init__`` has not run yet (`BarePackage`). Such a package
runs its real ``__init__``, in place, the first time a name it does not hold is looked up in it
(``from mcp import ClientSession``, ``mcp.client.Client``, ``__all__``): code that needs the
whole package gets it, with the same module objects and classes as the client modules loaded
here. The ordinary import runs instead when ``mcp`` is already imported, or when the SDK's layout
refuses (an ImportError, for example after an SDK upgrade that needs a name from one of those
``__init__`` files while its client modules load).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import threading
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

BARE_PACKAGES = ("mcp", "mcp.client")
"""The SDK packages whose ``__init__`` waits until a name in them is looked up (a parent first)."""

_importing = threading.Lock()
"""One `import_client` at a time in a process (the services call it from worker threads)."""

_initialising = threading.RLock()
"""Held while a `BarePackage` runs its ``__init__`` (reentrant: ``mcp``'s imports ``mcp.client``)."""

_initialised: set[str] = set()
"""The `BarePackage` names whose ``__init__`` ran or is running."""


class BarePackage(ModuleType):
    """A package whose ``__init__`` has not run: it runs (once, in place) at the first look-up
    of a name the package does not hold, then the look-up is answered as usual."""

    def __getattr__(self, name: str) -> Any:
        initialise(self)
        try:
            return ModuleType.__getattribute__(self, name)
        except AttributeError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None


def initialise(package: ModuleType) -> None:
    """Run `package`'s ``__init__`` in place unless it ran (or is running, in this thread);
    another thread waits until it has run."""
    spec = package.__spec__
    if spec is None or spec.loader is None:  # not a package put here by `_bare_packages`
        return
    with _initialising:
        if package.__name__ in _initialised:
            return
        _initialised.add(package.__name__)
        spec.loader.exec_module(package)


def import_client(*names: str) -> list[ModuleType]:
    """The modules `names` (dotted names), imported as the module doc says; callable from any
    thread.

    Raises:
        ImportError: a module of `names` cannot be imported even the ordinary way.
    """
    with _importing:
        if not any(name in sys.modules for name in BARE_PACKAGES):
            bare = _bare_packages()
            try:
                return [importlib.import_module(name) for name in names]
            except ImportError as exc:
                log.info("the MCP SDK's client modules need its package __init__ (%s); it runs now", exc)
                for package in bare:
                    initialise(package)
        return [importlib.import_module(name) for name in names]


def _bare_packages() -> list[BarePackage]:
    """`BARE_PACKAGES` put in ``sys.modules`` as `BarePackage` (a child is found through its
    parent's folder); the ones put there."""
    bare: list[BarePackage] = []
    for name in BARE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            break
        module = importlib.util.module_from_spec(spec)
        module.__class__ = BarePackage
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:  # as the import system binds a package it loads to its parent
            setattr(sys.modules[parent], child, module)
        bare.append(module)
    return bare
