"""What ``fleetwatch`` prints for a terminal: every ``--json`` document goes through here.

JSON is written by `shared.text.display.safe_json` (hidden characters as ``\\uXXXX``: valid,
lossless, inert on a terminal); text outputs pass names through `shared.text.display.visible`
where they are built.
"""

from __future__ import annotations

from typing import Any

from shared.text.display import safe_json


def print_json(value: Any) -> None:
    """Print `value` (builtins, msgspec Structs, datetimes) as safe JSON."""
    print(safe_json(value))
