"""assistant.sock's history straight from the watch's store, for ``fleetwatch history`` while
the services are stopped (issue 28).

``python -m services.assistant.readout`` reads one `GetHistory` (a frame body) on stdin and
writes its `History`, or an `ErrorReply`, on stdout: the very answer the running watch gives
(`services.assistant.watch.answers.history`), over the watch store opened read-only as the user
who runs it (`shared.sqlite.open_read_only`: nothing written), with the proposals from
approval_web's own readout (``python -m services.approval_web.readout``: the assistant never
holds the approval store) and no room read afresh (each proposal names its rooms as recorded).

Refusals: ``unknown_message`` for any other operation, ``invalid_message``, and
``service_unavailable`` when the watch store cannot be read.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from services.assistant.watch import answers
from services.assistant.watch.compose import RoomName
from services.assistant.watch.store import WatchStore
from shared.config import Settings, load_settings
from shared.errors import Code, FleetwatchError
from shared.sqlite import open_read_only
from shared.wire.approval import ListProposalHistory, ProposalHistory
from shared.wire.assistant import GetHistory
from shared.wire.client import call_readout
from shared.wire.protocol import Codec, ErrorReply, Message, ProtocolError

APPROVAL_READOUT: Final = "services.approval_web.readout"
"""approval_web's readout (run, never imported: the services are independent)."""
CODEC: Final = Codec((GetHistory,))


class StoppedProposals:
    """The proposals while approval_web is stopped: its readout's `ListProposalHistory`; no
    room is read afresh (`rooms` is empty: each proposal names its rooms as recorded)."""

    async def history(self, since: str) -> ProposalHistory:
        """Raises `CallError` (a `FleetwatchError`): the readout refused or could not run."""
        return await call_readout(APPROVAL_READOUT, ListProposalHistory(since=since))

    async def rooms(self) -> dict[str, RoomName]:
        return {}


class StoppedWatch:
    """What `answers.history` reads of a watch: its store, its proposals, its clock (UTC)."""

    def __init__(self, store: WatchStore) -> None:
        self.store = store
        self.proposals = StoppedProposals()

    def now(self) -> datetime:
        return datetime.now(UTC)


async def answer(data: bytes, settings: Callable[[], Settings] = load_settings) -> Message:
    """The reply to the `GetHistory` in `data`; an `ErrorReply` for a refusal."""
    try:
        request = CODEC.decode(data)
        assert isinstance(request, GetHistory)
        path = settings().watch_db
        try:
            conn = await open_read_only(path)
        except sqlite3.Error as exc:
            raise FleetwatchError(
                Code.SERVICE_UNAVAILABLE, f"the watch store at {path} cannot be read: {exc}"
            ) from exc
        try:
            watch = StoppedWatch(WatchStore(conn))
            return await answers.history(watch, request.days, request.language)
        finally:
            await conn.close()
    except (FleetwatchError, ProtocolError) as exc:
        return ErrorReply.of(exc)


def main() -> int:
    """One request on stdin, its reply on stdout; exit 0 (a refusal is a reply too)."""
    reply = asyncio.run(answer(sys.stdin.buffer.read()))
    sys.stdout.buffer.write(CODEC.encode(reply))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
