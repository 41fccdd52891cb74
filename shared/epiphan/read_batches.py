"""What a batched per-device read gives back (pure data, no I/O).

Epiphan's per-device reads take at most 100 device IDs a call (`shared.epiphan.read_client.DEVICE_IDS_PER_CALL`),
so a read of a larger fleet is several calls. The guarded read client
(`shared.epiphan.read_client.EpiphanReadClient`) makes them and returns these: each call as a `Chunk`, the
parsed and merged values of one tool as `DeviceReads` (the read side shows them and marks what
failed; the executor requires all of them), and for the model the answers merged into one
(`BatchedRead`, `merge_results`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from shared.epiphan.fleet import PART_OF_TOOL, UnreadPart
from shared.errors import FleetwatchError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One call of a batched per-device read: the device IDs it named (at most
    `DEVICE_IDS_PER_CALL`), the arguments sent, and either its redacted ``data`` or its
    ``error``; ``at`` is when the answer came (UTC)."""

    device_ids: tuple[str, ...]
    arguments: Mapping[str, Any]
    at: datetime
    data: Any = None
    error: FleetwatchError | None = None


@dataclass(frozen=True, slots=True)
class DeviceReads(Generic[T]):
    """A per-device read of many devices, parsed and merged: ``values`` from the calls that
    worked, ``failed`` the calls that did not (their error, or a result in no known shape).

    The read side shows ``values`` and marks the rest (`unread`); the executor fails closed
    (`require`)."""

    tool: str
    values: dict[str, T]
    failed: tuple[Chunk, ...] = ()

    def require(self) -> dict[str, T]:
        """Every value, or the first failed call's error (all or nothing).

        Raises:
            shared.epiphan.read_client.EpiphanError: a call failed or came back in no known shape.
        """
        if self.failed:
            error = self.failed[0].error
            assert error is not None
            raise error
        return self.values

    def unread(self) -> UnreadPart | None:
        """What could not be read, for a snapshot (`shared.epiphan.fleet.UnreadPart`), or None."""
        if not self.failed:
            return None
        first = self.failed[0].error
        assert first is not None
        return UnreadPart(
            part=PART_OF_TOOL.get(self.tool, self.tool),
            tool=self.tool,
            code=str(first.code),
            message=first.message,
            device_ids=tuple(d for chunk in self.failed for d in chunk.device_ids),
        )


@dataclass(frozen=True, slots=True)
class BatchedRead:
    """A read tool's data as one answer (a per-device read of many devices merged from its
    calls, `merge_results`), and the calls that failed (``failed``: their devices are not in
    ``data``)."""

    data: Any
    failed: tuple[Chunk, ...] = ()


def merge_results(parts: list[Any]) -> Any:
    """The answers of one per-device read's calls as one answer: maps merged key by key (lists
    joined, maps merged, else the first value), lists joined. Parts of different kinds stay a
    list of parts."""
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, Mapping) for p in parts):
        out: dict[Any, Any] = {}
        for part in parts:
            for key, value in part.items():
                if key not in out:
                    out[key] = value
                elif isinstance(out[key], list) and isinstance(value, list):
                    out[key] = [*out[key], *value]
                elif isinstance(out[key], Mapping) and isinstance(value, Mapping):
                    out[key] = {**out[key], **value}
        return out
    if all(isinstance(p, list) for p in parts):
        return [item for part in parts for item in part]
    return list(parts)
