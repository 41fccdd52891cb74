"""What a tool handler is given (`Call`) and what it may return or raise.

A read handler returns a JSON object (or an `Image`) or raises `ToolFailure` (an error result
such as "device not found"). A write handler returns the write result map (target ID ->
error string, ``{}`` when every target worked) and raises `BadArguments` only before it has
changed anything (the call is then refused and is not a write).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from services.lab.state import Device, World


class ToolFailure(Exception):
    """The call failed as a whole; the message becomes the error result's text."""


class BadArguments(ToolFailure):
    """The arguments passed the schema but make no sense (e.g. a finish before the start)."""


@dataclass(frozen=True)
class Image:
    """A picture result (``get_channel_image``): raw bytes and MIME type."""

    data: bytes
    mime_type: str = "image/png"


@dataclass(frozen=True)
class Call:
    """One tool call: the world, the caller's team name, the arguments, the lab's ``now``."""

    world: World
    team: str
    args: Mapping[str, Any]
    now: datetime
    older_shapes: bool = False
    expose_team_id: bool = True
    shapes: Mapping[str, str] = field(default_factory=dict)

    def shape(self, tool: str) -> str:
        """The named shape this lab answers `tool` in (``current`` unless set)."""
        return self.shapes.get(tool, "current")

    def device(self, key: str = "device_id") -> Device:
        """The caller's device named by ``args[key]``; `ToolFailure` if not in the team."""
        device = self.world.team_device(self.team, self.args[key], self.now)
        if device is None:
            raise ToolFailure(f"Device not found: {self.args[key]}")
        return device

    def devices(self, key: str = "device_ids") -> list[Device]:
        """The caller's devices among ``args[key]`` (others are left out, never revealed);
        all of the team's devices when the argument is absent."""
        if key not in self.args:
            return self.world.team_devices(self.team, self.now)
        found = (self.world.team_device(self.team, d, self.now) for d in self.args[key])
        return [d for d in found if d is not None]


def parse_utc(text: str) -> datetime:
    """``YYYY-MM-DDTHH:MM:SSZ`` -> aware UTC datetime; `BadArguments` if not a real time."""
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError as exc:
        raise BadArguments(f"not a UTC time (YYYY-MM-DDTHH:MM:SSZ): {text!r}") from exc
