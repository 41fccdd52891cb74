"""The slow-down for wrong secrets, per uid: the uid the kernel lists for the browser's
loopback connection (`shared.web.loopback_peer`), never the address (every local user is
127.0.0.1 or ::1, so a per-address wait let one user lock every operator out: issue 24).

Per uid: three wrong entries are free; after the third, the next entry must wait 1 s, and each
further wrong entry doubles the wait (2, 4, 8, 16, 32 s), up to 60 s. An entry made during a
wait is refused without being checked and without counting, so it never extends the wait. A
right entry clears the uid. A uid idle for 15 minutes is forgotten. There is no ceiling over
all uids: another user's wrong entries never slow this one, and only root can make uids, so
one person cannot spread guesses over many of them. Connections whose uid cannot be read share
one key (None).

Refusal rows are capped per uid too (`refusal_row`): at most `ROWS_PER_WINDOW` rows in each
`ROW_WINDOW_SECONDS`; the rest are counted, and the uid's first row of a later window carries
that count, so a loop of wrong entries costs a few rows a minute, not ~16 a second.

Pure: `Strikes` and the functions over it take ``now`` (monotonic seconds) and return new
values; `WrongSecretThrottle` only holds them for one app (no module state).
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """`free` wrong entries, then waits of `first_wait` seconds doubling up to `max_wait`;
    forgotten after `forget_after` idle seconds."""

    free: int
    first_wait: float = 1.0
    max_wait: float = 60.0
    forget_after: float = 900.0


PER_UID = Rule(free=3)
ROWS_PER_WINDOW = 10
"""Refusal rows one uid may add in one window; the rest are counted."""
ROW_WINDOW_SECONDS = 60.0

Key = int | None
"""Whose strikes: the browser connection's uid (None: it could not be read)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Strikes:
    """Wrong entries counted so far, when the next entry may be made, and the last one's time."""

    failures: int = 0
    blocked_until: float = 0.0
    last: float = 0.0


def wait_left(strikes: Strikes, now: float) -> float:
    """Seconds before an entry may be made (0.0 when it may be made now)."""
    return max(0.0, strikes.blocked_until - now)


def after_failure(strikes: Strikes, rule: Rule, now: float) -> Strikes:
    """The strikes after a wrong entry made at `now` (only call it when `wait_left` was 0)."""
    if strikes.failures and now - strikes.last >= rule.forget_after:
        strikes = Strikes()
    failures = strikes.failures + 1
    wait = 0.0
    if failures >= rule.free:
        wait = min(rule.max_wait, rule.first_wait * 2 ** (failures - rule.free))
    return Strikes(failures=failures, blocked_until=now + wait, last=now)


def forgotten(strikes: Strikes, rule: Rule, now: float) -> bool:
    """True when the strikes may be dropped: idle past `rule.forget_after` and not waiting."""
    return wait_left(strikes, now) == 0.0 and now - strikes.last >= rule.forget_after


@dataclasses.dataclass(frozen=True, slots=True)
class Rows:
    """Refusal rows of one uid in the current window: when it began, how many were written,
    and how many were only counted since the last one written."""

    began: float
    written: int = 0
    unwritten: int = 0


class WrongSecretThrottle:
    """The strikes of one page, per uid (at most `max_addresses` uids, oldest dropped), and
    the refusal rows each uid has had written in the current window."""

    def __init__(self, *, per_uid: Rule = PER_UID, max_addresses: int = 4096) -> None:
        self.per_uid = per_uid
        self.max_addresses = max_addresses
        self._by_uid: OrderedDict[Key, Strikes] = OrderedDict()
        self._rows: OrderedDict[Key, Rows] = OrderedDict()

    def wait_left(self, uid: Key, now: float) -> float:
        """Seconds `uid` must still wait (0.0: it may try now)."""
        return wait_left(self._by_uid.get(uid, Strikes()), now)

    def failed(self, uid: Key, now: float) -> float:
        """Count a wrong entry from `uid` at `now`; the wait it now faces, in seconds."""
        own = after_failure(self._by_uid.pop(uid, Strikes()), self.per_uid, now)
        self._by_uid[uid] = own
        self._prune(now)
        return self.wait_left(uid, now)

    def succeeded(self, uid: Key) -> None:
        """A right entry clears `uid`."""
        self._by_uid.pop(uid, None)

    def refusal_row(self, uid: Key, now: float) -> int | None:
        """Whether a refusal of a sign-in from `uid` at `now` gets an audit row: None (only
        counted: the uid had `ROWS_PER_WINDOW` rows in this window), else how many of its
        refusals were counted without a row since its last row (0 usually)."""
        rows = self._rows.pop(uid, None)
        if rows is None or now - rows.began >= ROW_WINDOW_SECONDS:
            rows = Rows(began=now, unwritten=rows.unwritten if rows else 0)
        if rows.written >= ROWS_PER_WINDOW:
            self._rows[uid] = dataclasses.replace(rows, unwritten=rows.unwritten + 1)
            return None
        self._rows[uid] = Rows(began=rows.began, written=rows.written + 1)
        while len(self._rows) > self.max_addresses:
            self._rows.popitem(last=False)
        return rows.unwritten

    def addresses_remembered(self) -> int:
        """How many uids have strikes on record."""
        return len(self._by_uid)

    def _prune(self, now: float) -> None:
        for uid in [u for u, s in self._by_uid.items() if forgotten(s, self.per_uid, now)]:
            del self._by_uid[uid]
        while len(self._by_uid) > self.max_addresses:
            self._by_uid.popitem(last=False)
