"""Whose page session it is: bound to the uid that signed in, ended when another uid uses it,
and a uid that cannot be read never matches (the check fails closed)."""

from __future__ import annotations

from shared.web.loopback_peer import OVERFLOW_ID
from shared.web.page_session import MAX_SESSIONS, NotYours, SessionOwners

OPERATOR, OTHER = 1000, 1001


def test_the_uid_that_signed_in_passes_and_any_other_ends_the_session() -> None:
    owners = SessionOwners()
    owners.bind("s-1", OPERATOR)
    assert owners.check("s-1", OPERATOR) is None
    assert owners.check("s-1", OPERATOR) is None  # asking again changes nothing
    assert owners.check("s-1", OTHER) == NotYours(session="s-1", signed_in_uid=OPERATOR, peer_uid=OTHER)
    assert not owners.live("s-1")  # ended, for its own uid too


def test_an_unknown_uid_never_matches() -> None:
    owners = SessionOwners()
    owners.bind("s-1", OPERATOR)
    assert owners.check("s-1", None) == NotYours(session="s-1", signed_in_uid=OPERATOR, peer_uid=None)
    owners.bind("s-2", None)
    assert owners.check("s-2", None) == NotYours(session="s-2", signed_in_uid=None, peer_uid=None)


def test_the_overflow_uid_never_matches_not_even_itself() -> None:
    """65534 is what any uid not mapped into this namespace reads as: it names no one."""
    owners = SessionOwners()
    owners.bind("s-1", OVERFLOW_ID)
    assert owners.check("s-1", OVERFLOW_ID) == NotYours(
        session="s-1", signed_in_uid=OVERFLOW_ID, peer_uid=OVERFLOW_ID
    )
    assert not owners.live("s-1")


def test_sessions_are_other_sessions_and_the_oldest_is_forgotten_past_the_bound() -> None:
    owners = SessionOwners()
    owners.bind("s-1", OPERATOR)
    owners.bind("s-2", OTHER)
    assert owners.check("s-2", OTHER) is None and owners.check("s-1", OPERATOR) is None
    for n in range(MAX_SESSIONS):
        owners.bind(f"s-new-{n}", OPERATOR)
    assert not owners.live("s-1") and not owners.live("s-2") and owners.live("s-new-0")
    owners.end("s-new-0")
    assert not owners.live("s-new-0")
