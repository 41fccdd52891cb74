"""What a person reads after a decision: the outcome page and "Recent decisions". Pure.

Both are built from what the store holds about a proposal (`shared.store.approvals.Decision`:
the proposal, its consumed approval, its execution, the audit row that decided it), so the
outcome page at ``/outcome/<proposal ID>`` reads the same on every reload and a GET runs
nothing. Each names the change and the room (`shared.text.changes`: the names
the approved card showed, from the approval's binding facts; a denied card's names from its
denial row), who decided and when, and the outcome in words:

- ``done``: Epiphan accepted the write (``ok``);
- ``problem``: "Epiphan reported a problem" (``error``), with each device's message;
- ``unknown``: "May or may not have run": the write may have reached Epiphan (``unknown``), or
  the executor has not reported (a ``running`` row: running now, or stopped without an
  answer). Never called "failed", never retried: check the room;
- ``nothing_ran``: the approval could not be consumed, or the executor refused before writing
  (``refused``, ``not_run``): the reason in words;
- ``denied``, ``expired``, ``waiting``: nobody approved it (yet).

The verification (the executor's independent re-read after the write, with its time) is kept
apart from the outcome, and every outcome says what to do next. `refused_click` is the answer
to an Approve that could not be consumed (that click ran nothing; the proposal's own outcome
page says what happened to it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from services.approval_web.page.words import N_, Moment, Words, refusal_words
from shared.store.approvals import Decision, ProposalRow
from shared.text.catalogue import keyed
from shared.text.changes import NAME_CAP, rooms_from_facts, title_words
from shared.text.deciders import decided_words, decider_words
from shared.text.display import visible

DETAIL_CAP = 200
"""Longest per-device message shown."""


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """One proposal's outcome as a person reads it.

    `kind` (see the module doc) and `short` (its few words); `title`: change and room;
    `headline`: the outcome in a sentence; `why`: the reason nothing ran or why it is unknown;
    `problems`: (device, message) pairs; `verification`: the re-read after the write with its
    time (None: no write); `next_step`: what to do now; `decided`: who decided and when, as a
    sentence (None while waiting), and apart: `who` and `decided_at` (UTC text); `final`: False while the executor has not reported (the page looks again).
    """

    proposal_id: str
    kind: str
    short: Words
    title: Words
    headline: Words
    next_step: Words
    why: Words | None = None
    problems: tuple[tuple[str, str], ...] = ()
    verification: Words | None = None
    decided: Words | None = None
    who: Words | None = None
    decided_at: str | None = None
    final: bool = True


def verification_words(verification: str | None, verified_at: str | None) -> Words:
    """The independent check after the write, in plain words, with its time."""
    at = Moment(verified_at) if verified_at else "—"
    if verification == "verified":
        return Words.of(N_("Checked afterwards (%(at)s): Epiphan shows the change."), at=at)
    if verification == "not_observed":
        return Words.of(N_("Checked afterwards (%(at)s): the change was not seen yet."), at=at)
    if verification == "contradicted":
        return Words.of(N_("Checked afterwards (%(at)s): Epiphan shows the opposite."), at=at)
    return Words.of(N_("Not checked afterwards."))


def _viewer(decision: Decision, viewer_session: str) -> bool:
    return decision.decided_session is not None and decision.decided_session == viewer_session


def who_words(decision: Decision, viewer_session: str) -> Words | None:
    """Who decided and where, in words (the "Who decided" column, `shared.text.deciders`):
    "root, from the command line", "you (root), in this browser", "ana and root, on the
    approval page", "nobody (it expired)"; None while nobody decided."""
    if decision.decided_kind is None:
        return None
    if decision.decided_kind == "expiry":
        return Words.of(N_("nobody (it expired)"))
    return decider_words(
        decision.decided_from, decision.decided_uids, viewer=_viewer(decision, viewer_session)
    )


def _decided(decision: Decision, viewer_session: str) -> Words | None:
    return decided_words(
        decision.decided_kind,
        decision.decided_from,
        decision.decided_uids,
        decision.proposal.decided_at,
        viewer=_viewer(decision, viewer_session),
    )


def _title(decision: Decision) -> Words:
    proposal = decision.proposal
    rooms = rooms_from_facts(proposal.tool, proposal.arguments, proposal.targets, decision.names())
    return title_words(proposal.tool, proposal.arguments, rooms)


def _view(
    decision: Decision, kind: str, headline: Words, next_step: Words, viewer: str, **more: Any
) -> Outcome:
    return Outcome(
        proposal_id=decision.proposal.id,
        kind=kind,
        short=Words.in_context("outcome short", kind),
        title=_title(decision),
        headline=headline,
        next_step=next_step,
        decided=_decided(decision, viewer),
        who=who_words(decision, viewer),
        decided_at=decision.proposal.decided_at,
        **more,
    )


def from_decision(decision: Decision, *, viewer_session: str) -> Outcome:
    """The outcome of one proposal from the store's record of it (see the module doc);
    `viewer_session` is the reading browser's session ID (to say "you")."""
    proposal, execution = decision.proposal, decision.execution
    if execution is not None and execution.outcome != "refused":
        verification = verification_words(execution.verification, execution.verified_at)
        if execution.outcome == "ok":
            return _view(
                decision,
                "done",
                Words.of(N_("Done: Epiphan accepted the change.")),
                keyed("next after check", execution.verification or "")
                or Words.of(N_("Look at the room to see whether it changed.")),
                viewer_session,
                verification=verification,
            )
        if execution.outcome == "error":
            detail = execution.detail or {}
            problems = tuple(
                (visible(str(device), NAME_CAP), visible(str(message), DETAIL_CAP))
                for device, message in sorted(detail.items())
            )
            return _view(
                decision,
                "problem",
                Words.of(N_("Epiphan reported a problem: the change may not have happened.")),
                Words.of(N_("Check the room, then decide whether the change is still needed.")),
                viewer_session,
                problems=problems,
                verification=verification,
            )
        running = execution.outcome == "running"
        return _view(
            decision,
            "unknown",
            Words.of(N_("May or may not have run.")),
            Words.of(N_("Check the room before trying again. Fleetwatch never retries a change by itself.")),
            viewer_session,
            why=Words.of(
                N_(
                    "The executor has not reported an outcome yet (running now, or stopped without an answer)."
                )
                if running
                else N_("The write was sent, and whether it reached Epiphan cannot be known.")
            ),
            verification=None if running else verification,
            final=not running,
        )
    code = execution.refusal_code if execution is not None else proposal.status_code
    if execution is not None or proposal.status == "not_run":
        return _nothing_ran(decision, code or "internal_error", viewer_session)
    if proposal.status in NOT_RUN_STATUSES:
        kind, headline, next_step = NOT_RUN_STATUSES[proposal.status]
        return _view(decision, kind, Words.of(headline), Words.of(next_step), viewer_session)
    return _view(  # approved, not yet claimed by the executor
        decision,
        "unknown",
        Words.of(N_("Approved: the executor has not taken it yet.")),
        Words.of(N_("This page looks again in a few seconds.")),
        viewer_session,
        final=False,
    )


NOT_RUN_STATUSES: dict[str, tuple[str, str, str]] = {
    "denied": ("denied", N_("Denied: nothing ran."), N_("Nothing changed in the room.")),
    "expired": (
        "expired",
        N_("Expired: nothing ran."),
        N_("Nothing changed in the room. If the change is still needed, ask for it again."),
    ),
    "pending": ("waiting", N_("Waiting for a decision."), N_("Its card is in the queue.")),
}
"""A proposal nobody approved (yet), by status: (kind, headline, next step)."""


def _nothing_ran(decision: Decision, code: str, viewer: str) -> Outcome:
    return _view(
        decision,
        "nothing_ran",
        Words.of(N_("Nothing ran: %(why)s"), why=refusal_words(code)),
        Words.of(N_("Nothing changed in the room. The change can be proposed again if it is still needed.")),
        viewer,
    )


def refused_click(proposal: ProposalRow | None, code: str, title: Words | None = None) -> Outcome:
    """The answer to an Approve that could not be consumed (`code`): this click ran nothing.
    `proposal` None: the proposal no longer exists."""
    return Outcome(
        proposal_id=proposal.id if proposal else "",
        kind="nothing_ran",
        short=Words.in_context("outcome short", "nothing_ran"),
        title=title or Words.of(N_("This change")),
        headline=Words.of(N_("Nothing ran: %(why)s"), why=refusal_words(code)),
        next_step=Words.of(N_("See what happened to this change, or go back to the queue.")),
    )
