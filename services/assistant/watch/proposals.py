"""What the watch learns of proposals, through approval.sock (the assistant holds no store).

`ApprovalSocketProposals` asks ``ListProposalHistory`` (proposals made since a time, with their
state and outcome, and the approval page's address) and ``ListWritable`` (the sandbox team's
rooms as the executor reads them: the names a notice shows), through
`shared.wire.approval.ApprovalClient`. Both are read-only and open to the assistant's uid. A
refusal or a socket failure raises `shared.wire.client.CallError` with its code. ``RecordSilence``
has approval_web write the audit row of a silence (the assistant holds no store).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from services.assistant.watch.compose import RoomName
from services.assistant.watch.times import utc_text
from shared.errors import FleetwatchError
from shared.wire.approval import (
    ApprovalClient,
    ApproverReport,
    GetApproverReport,
    ListProposalHistory,
    ProposalHistory,
    RecordSilence,
)
from shared.wire.executor import ListWritable, WritableDevices

log = logging.getLogger(__name__)


class ProposalSource(Protocol):
    """Proposals and the names of the rooms they target (approval.sock in production)."""

    async def history(self, since: str) -> ProposalHistory:
        """Proposals made at or after `since` (UTC text), newest first.

        Raises:
            FleetwatchError: approval.sock refused or did not answer.
        """
        ...

    async def rooms(self) -> dict[str, RoomName]:
        """``{device ID: its name and channel names}`` of the rooms a change may target.

        Raises:
            FleetwatchError: approval.sock (or the executor behind it) refused or did not answer.
        """
        ...

    async def decisions(self, days: int) -> ApproverReport:
        """How each person decided over the last `days` days (``GetApproverReport``).

        Raises:
            FleetwatchError: approval.sock refused or did not answer.
        """
        ...

    async def record(self, record: RecordSilence) -> None:
        """Have approval_web write the audit row of a silence set or lifted.

        Raises:
            FleetwatchError: approval.sock refused or did not answer (nothing was written).
        """
        ...


class ApprovalSocketProposals:
    """A `ProposalSource` over approval.sock (one connection per request)."""

    def __init__(
        self, path: Path, *, timeout_seconds: float = 10.0, rooms_timeout_seconds: float = 30.0
    ) -> None:
        self._client = ApprovalClient(path, timeout_seconds=timeout_seconds)
        self._rooms_timeout = rooms_timeout_seconds

    async def history(self, since: str) -> ProposalHistory:
        return await self._client.call(ListProposalHistory(since=since))

    async def writable(self) -> WritableDevices:
        """The rooms a change may target, read afresh by the executor (``ListWritable``).

        Raises:
            FleetwatchError: approval.sock (or the executor behind it) refused or did not answer.
        """
        return await self._client.call(ListWritable(), timeout_seconds=self._rooms_timeout)

    async def rooms(self) -> dict[str, RoomName]:
        reply = await self.writable()
        return {
            d.device_id: RoomName(d.name, {c.channel_id: c.name for c in d.channels if c.name})
            for d in reply.devices
        }

    async def decisions(self, days: int) -> ApproverReport:
        return await self._client.call(GetApproverReport(days=days))

    async def record(self, record: RecordSilence) -> None:
        await self._client.call(record)


async def approval_page_url(socket: Path) -> str | None:
    """The approval page's address as approval.sock names it (``ListProposalHistory``), or None
    when approval_web does not answer or serves no page (the ask page then says how to find it)."""
    try:
        history = await ApprovalClient(socket).call(ListProposalHistory(since=utc_text(datetime.now(UTC))))
    except FleetwatchError as exc:
        log.info("the approval page's address could not be read (%s)", exc.code)
        return None
    return history.page_url
