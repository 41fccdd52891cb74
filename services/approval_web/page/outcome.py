"""What the person reads after pressing Approve: the outcome and the verification. Pure.

Four outcomes, in the words the operator needs:

- ``done``: Epiphan accepted the write (``ok``).
- ``problem``: "Epiphan reported a problem" (``error``), with each device's message.
- ``unknown``: "May or may not have run — check the room before trying again": the write
  may have reached Epiphan (``unknown``), or Execute was sent and no answer came back. It is
  never called "failed", and it is never retried.
- ``nothing_ran``: "Nothing ran: <why>": the approval could not be consumed, the executor
  refused before writing (``refused``), or Execute never reached the executor.

The verification (the executor's independent re-read after the write) is kept apart:
verified, not observed, contradicted, or not checked.
"""

from __future__ import annotations

import dataclasses

from services.approval_web.page.card import NAME_CAP, show_time
from services.approval_web.page.words import N_, Words, refusal_words
from shared.text.display import visible
from shared.wire.executor import ExecutionReport

DETAIL_CAP = 200
"""Longest per-device message shown."""

TRANSPORT_NOTHING_RAN = frozenset(
    {
        "service_unavailable",
        "bad_frame",
        "frame_too_large",
        "unknown_message",
        "invalid_message",
        "peer_not_allowed",
    }
)
"""Codes that prove the executor never acted on Execute (it was not reached, or refused the
frame before any handler ran). Any other error after sending Execute means "may or may not"."""


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """The outcome view: `kind` ∈ done | problem | unknown | nothing_ran, its headline, why
    (nothing ran), per-device problems, and the verification line (None: not applicable)."""

    kind: str
    headline: Words
    why: Words | None = None
    problems: tuple[tuple[str, str], ...] = ()
    verification: Words | None = None
    proposal_id: str | None = None


def nothing_ran(code: str, proposal_id: str | None = None) -> Outcome:
    """Nothing ran, because of `code`."""
    return Outcome(
        kind="nothing_ran",
        headline=Words.of(N_("Nothing ran: %(why)s"), why=refusal_words(code)),
        proposal_id=proposal_id,
    )


def maybe_ran(code: str, proposal_id: str | None = None) -> Outcome:
    """Execute was sent but its outcome cannot be known (`code` says what went wrong)."""
    return Outcome(
        kind="unknown",
        headline=Words.of(N_("May or may not have run — check the room before trying again")),
        why=refusal_words(code),
        proposal_id=proposal_id,
    )


def after_transport_error(code: str, proposal_id: str | None = None) -> Outcome:
    """The outcome when Execute answered with an error `code` instead of a report."""
    return nothing_ran(code, proposal_id) if code in TRANSPORT_NOTHING_RAN else maybe_ran(code, proposal_id)


def verification_words(verification: str | None, verified_at: str | None) -> Words:
    """The independent check after the write, in plain words."""
    at = show_time(verified_at) or "—"
    if verification == "verified":
        return Words.of(N_("Checked afterwards (%(at)s): Epiphan shows the change."), at=at)
    if verification == "not_observed":
        return Words.of(
            N_("Checked afterwards (%(at)s): the change was not seen yet. Look at the room."), at=at
        )
    if verification == "contradicted":
        return Words.of(N_("Checked afterwards (%(at)s): Epiphan shows the opposite. Check the room."), at=at)
    return Words.of(N_("Not checked afterwards."))


def from_report(report: ExecutionReport) -> Outcome:
    """The outcome view of the executor's report."""
    if report.outcome == "refused":
        return nothing_ran(report.refusal_code or "internal_error", report.proposal_id)
    verification = verification_words(report.verification, report.verified_at)
    if report.outcome == "ok":
        return Outcome(
            kind="done",
            headline=Words.of(N_("Done")),
            verification=verification,
            proposal_id=report.proposal_id,
        )
    if report.outcome == "error":
        problems = tuple(
            (visible(device, NAME_CAP), visible(message, DETAIL_CAP))
            for device, message in sorted(report.detail.items())
        )
        return Outcome(
            kind="problem",
            headline=Words.of(N_("Epiphan reported a problem")),
            problems=problems,
            verification=verification,
            proposal_id=report.proposal_id,
        )
    return dataclasses.replace(
        maybe_ran("service_no_answer", report.proposal_id),
        why=Words.of(N_("The write was sent, and whether it reached Epiphan cannot be known.")),
        verification=verification,
    )
