"""What the watch learns of proposals, through approval.sock (the assistant holds no store).

`ApprovalSocketProposals` asks ``ListProposalHistory`` (proposals made since a time, with their
state and outcome, and the approval page's address) and ``ListWritable`` (the sandbox team's
rooms as the executor reads them: the names a notice shows). Both are read-only and open to the
assistant's uid. A refusal or a socket failure raises one `FleetwatchError` with its code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TypeVar

from services.assistant.watch.compose import RoomName
from shared.display import visible
from shared.errors import Code, FleetwatchError
from shared.messages import ListWritable, WritableDevices
from shared.protocol import ErrorReply, Message, request
from shared.watch_messages import ListProposalHistory, ProposalHistory

R = TypeVar("R", bound=Message)


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


class ApprovalSocketProposals:
    """A `ProposalSource` over approval.sock (one connection per request)."""

    def __init__(
        self, path: Path, *, timeout_seconds: float = 10.0, rooms_timeout_seconds: float = 30.0
    ) -> None:
        self._path = path
        self._timeout = timeout_seconds
        self._rooms_timeout = rooms_timeout_seconds

    async def _call(self, message: Message, reply_type: type[R], seconds: float) -> R:
        reply = await request(self._path, message, reply_type, timeout_seconds=seconds)
        if isinstance(reply, ErrorReply):
            try:
                code = Code(reply.code)
            except ValueError:
                code = Code.INTERNAL_ERROR
            raise FleetwatchError(code, visible(reply.message, 300))
        return reply

    async def history(self, since: str) -> ProposalHistory:
        return await self._call(ListProposalHistory(since=since), ProposalHistory, self._timeout)

    async def rooms(self) -> dict[str, RoomName]:
        reply = await self._call(ListWritable(), WritableDevices, self._rooms_timeout)
        return {
            d.device_id: RoomName(d.name, {c.channel_id: c.name for c in d.channels if c.name})
            for d in reply.devices
        }
