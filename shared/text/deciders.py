"""Who decided, in words: one source for the approval page's outcome, "Recent decisions" and
``fleetwatch audit tail``. Pure.

A person is named by their local account (`shared.text.display.account_name`), never by a
service's name, a role or a bare uid; where they decided is said in words: on the approval page
(or "in this browser" for the reader's own session), or from the command line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from shared.text.catalogue import N_, Moment, Words
from shared.text.display import account_name

PAGE: Final = "page"
"""Decided on the approval page."""
COMMAND: Final = "command"
"""Decided with the ``fleetwatch`` command (over approval.sock)."""
PEER_ACTOR: Final = re.compile(r":(\d{1,10})$")
"""The uid at the end of an audit actor of approval.sock (``operator:1001``)."""


def command_uid(actor: str) -> int | None:
    """The uid of an audit actor written for a ``fleetwatch`` command (``<name>:<uid>``), or
    None for any other actor."""
    found = PEER_ACTOR.search(actor)
    return int(found.group(1)) if found else None


def person_words(uids: Sequence[int], *, viewer: bool = False) -> Words:
    """The person or people who decided (the first of two approvers first): "you (root), in
    this browser" when `viewer` (the reader's own session), "ana and root", "root", "someone"."""
    names = [account_name(uid) for uid in uids]
    if viewer:
        if len(names) == 1:
            return Words.of(N_("you (%(name)s), in this browser"), name=names[0])
        return Words.of(N_("you, in this browser"))
    if not names:
        return Words.of(N_("someone"))
    if len(names) == 1:
        return Words.of(N_("%(who)s"), who=names[0])
    return Words.of(N_("%(first)s and %(second)s"), first=names[0], second=names[-1])


def decider_words(where: str | None, uids: Sequence[int], *, viewer: bool = False) -> Words:
    """Who decided and where (`PAGE`, `COMMAND`, None: not said): "root, from the command
    line", "ana and root, on the approval page", "you (root), in this browser"."""
    person = person_words(uids, viewer=viewer)
    if where == COMMAND:
        return Words.of(N_("%(who)s, from the command line"), who=person)
    if where == PAGE and not viewer:
        return Words.of(N_("%(who)s, on the approval page"), who=person)
    return person


DECIDED: Final[dict[tuple[str, str | None], str]] = {
    ("approval", PAGE): N_("Approved on the approval page by %(who)s, %(at)s."),
    ("denial", PAGE): N_("Denied on the approval page by %(who)s, %(at)s."),
    ("denial", COMMAND): N_("Denied from the command line by %(who)s, %(at)s."),
}
"""Who decided and when as a sentence, by (audit kind, where it was decided)."""


def decided_words(
    kind: str | None, where: str | None, uids: Sequence[int], at: str | None, *, viewer: bool = False
) -> Words | None:
    """Who decided and when as a sentence (the page's outcome, ``fleetwatch pending show``):
    "Denied on the approval page by root, 12:04.", "Expired, 12:09: nobody approved or denied
    it in time."; None while nobody decided (`kind` None) or without a time `at` (UTC text)."""
    if kind is None or at is None:
        return None
    when = Moment(at)
    if kind == "expiry":
        return Words.of(N_("Expired, %(at)s: nobody approved or denied it in time."), at=when)
    sentence = DECIDED.get((kind, where))
    if sentence is None:  # an approval or denial whose rows do not say where
        sentence = {"approval": N_("Approved by %(who)s, %(at)s.")}.get(
            kind, N_("Denied by %(who)s, %(at)s.")
        )
    return Words.of(sentence, who=person_words(uids, viewer=viewer), at=when)
