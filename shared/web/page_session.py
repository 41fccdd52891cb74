"""Whose page session it is: a session belongs to the uid that signed in, and to no other.

Both local pages (the approval page, the ask page) start a session when the person types the
page's secret, and remember the uid the kernel lists for that browser connection
(`shared.web.loopback_peer`; `request_uid`). Every later request with the session's cookie is
checked against it (`SessionOwners.check`): a request from another uid (another local user, or
a compromised service that was sent the cookie) is refused ``session_not_yours``, the page
audits both uids, and the session is ended, for its own uid too (the person signs in again).
A uid that cannot be read never matches: the check fails closed; nor does the overflow uid 65534
(`shared.web.loopback_peer.OVERFLOW_ID`), which any unmapped uid reads as.

The owners live in the page's memory only, as its session keys do: a restart forgets both.
The uid of each browser connection is read once and kept while the connection is open
(`request_uid`): a socket's owner never changes while it is open, and the kernel's tables take
milliseconds to read and scan on a busy machine, on the page's event loop.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import weakref
from typing import Final

from aiohttp import web

from shared.web.loopback_peer import OVERFLOW_ID, peer_uid

MAX_SESSIONS: Final = 4096
"""Owners kept at once; the oldest session is forgotten (and so ended) first."""


_CONNECTION_UIDS: weakref.WeakKeyDictionary[asyncio.BaseTransport, int] = weakref.WeakKeyDictionary()
"""Each open browser connection's uid, as the kernel listed it for its client socket the first
time it was asked (an entry leaves with its connection; a uid that could not be read is not
kept)."""


def request_uid(request: web.Request) -> int | None:
    """The uid the kernel lists for the browser's connection of `request`; None when it cannot
    be read. Read from the kernel's tables once per connection (the owner of the client's
    socket is fixed while it is open), then kept for the connection's later requests and uses."""
    transport = request.transport
    if transport is None:
        return None
    known = _CONNECTION_UIDS.get(transport)
    if known is not None:
        return known
    uid = peer_uid(transport.get_extra_info("peername"), transport.get_extra_info("sockname"))
    if uid is not None:
        _CONNECTION_UIDS[transport] = uid
    return uid


@dataclasses.dataclass(frozen=True, slots=True)
class NotYours:
    """A session used from a uid that did not sign in: its ID, the uid that signed in and the
    uid of this request (None: not known)."""

    session: str
    signed_in_uid: int | None
    peer_uid: int | None


class SessionOwners:
    """The uid that started each live session of one page (at most `MAX_SESSIONS`)."""

    def __init__(self) -> None:
        self._owners: collections.OrderedDict[str, int | None] = collections.OrderedDict()

    def bind(self, session: str, uid: int | None) -> None:
        """Record that `uid` signed in and started `session`."""
        self._owners[session] = uid
        while len(self._owners) > MAX_SESSIONS:
            self._owners.popitem(last=False)

    def live(self, session: str) -> bool:
        """True while `session` is bound and not ended (an ended or unknown one is no session:
        the page asks for the secret)."""
        return session in self._owners

    def check(self, session: str, uid: int | None) -> NotYours | None:
        """None when `uid` is the one that started the live `session`; otherwise the session is
        ended and `NotYours` says who started it and who asked (a uid unknown at sign-in or now
        never matches, nor does the overflow uid `OVERFLOW_ID`, which names no one). A session
        that is not `live` is no one's: `NotYours` with no owner."""
        owner = self._owners.pop(session, None)
        if owner is not None and owner != OVERFLOW_ID and owner == uid:
            self._owners[session] = owner
            return None
        return NotYours(session=session, signed_in_uid=owner, peer_uid=uid)

    def end(self, session: str) -> None:
        """Forget `session` (it can no longer be used)."""
        self._owners.pop(session, None)
