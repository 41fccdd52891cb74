"""The slow-down for wrong secrets: per client address, and a much higher ceiling for all.

Per address: three wrong entries are free; after the third, the next entry must wait 1 s,
and each further wrong entry doubles the wait (2, 4, 8, 16, 32 s), up to 60 s. An entry made
during a wait is refused without being checked and without counting, so it never extends the
wait. A right entry clears the address. An address idle for 15 minutes is forgotten.

Across all addresses (an attacker on the machine can use 127.0.0.2, 127.0.0.3...): the same
rule with 30 free wrong entries. Either wait refuses the entry.

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


PER_ADDRESS = Rule(free=3)
ALL_ADDRESSES = Rule(free=30)


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


class WrongSecretThrottle:
    """The strikes of one page: per address (at most `max_addresses`, oldest dropped) and overall."""

    def __init__(
        self,
        *,
        per_address: Rule = PER_ADDRESS,
        overall: Rule = ALL_ADDRESSES,
        max_addresses: int = 4096,
    ) -> None:
        self.per_address = per_address
        self.overall = overall
        self.max_addresses = max_addresses
        self._by_address: OrderedDict[str, Strikes] = OrderedDict()
        self._all = Strikes()

    def wait_left(self, address: str, now: float) -> float:
        """Seconds `address` must still wait (the longer of its own wait and the overall one)."""
        own = self._by_address.get(address, Strikes())
        return max(wait_left(own, now), wait_left(self._all, now))

    def failed(self, address: str, now: float) -> float:
        """Count a wrong entry from `address` at `now`; the wait it now faces, in seconds."""
        own = after_failure(self._by_address.pop(address, Strikes()), self.per_address, now)
        self._by_address[address] = own
        self._all = after_failure(self._all, self.overall, now)
        self._prune(now)
        return self.wait_left(address, now)

    def succeeded(self, address: str) -> None:
        """A right entry clears `address` (the overall count is left to time)."""
        self._by_address.pop(address, None)

    def addresses_remembered(self) -> int:
        """How many addresses have strikes on record."""
        return len(self._by_address)

    def _prune(self, now: float) -> None:
        for address in [a for a, s in self._by_address.items() if forgotten(s, self.per_address, now)]:
            del self._by_address[address]
        while len(self._by_address) > self.max_addresses:
            self._by_address.popitem(last=False)
