"""The outcome after Approve, in the operator's words; never "failed" when it may have run."""

from __future__ import annotations

from services.approval_web.page.outcome import after_transport_error, from_report, nothing_ran
from services.approval_web.page.words import Words, refusal_words
from shared.wire.executor import ExecutionReport


def report(**fields: object) -> ExecutionReport:
    values: dict[str, object] = {"execution_id": "x-1", "proposal_id": "p-1", "outcome": "ok"}
    values.update(fields)
    return ExecutionReport(**values)


def test_ok_is_done_with_the_verification_kept_apart() -> None:
    shown = from_report(report(verification="verified", verified_at="2026-03-02T10:00:05.000Z"))
    assert (shown.kind, shown.headline) == ("done", Words.of("Done"))
    assert shown.verification == Words.of(
        "Checked afterwards (%(at)s): Epiphan shows the change.", at="2026-03-02 10:00 UTC"
    )
    assert from_report(report(verification="contradicted")).kind == "done"
    assert from_report(report()).verification == Words.of("Not checked afterwards.")


def test_an_error_is_a_problem_epiphan_reported_with_each_device_message_made_visible() -> None:
    shown = from_report(report(outcome="error", detail={"29088800001": "busy\u202e"}))
    assert (shown.kind, shown.headline) == ("problem", Words.of("Epiphan reported a problem"))
    assert shown.problems == (("29088800001", "busy⟦U+202E⟧"),)


def test_unknown_may_or_may_not_have_run() -> None:
    shown = from_report(report(outcome="unknown"))
    assert shown.kind == "unknown"
    assert shown.headline == Words.of("May or may not have run — check the room before trying again")


def test_a_refusal_is_nothing_ran_with_the_reason() -> None:
    shown = from_report(report(outcome="refused", refusal_code="fingerprint_changed", execution_id=None))
    assert shown == nothing_ran("fingerprint_changed", "p-1")
    assert shown.headline == Words.of("Nothing ran: %(why)s", why=refusal_words("fingerprint_changed"))


def test_after_execute_was_sent_a_lost_answer_is_never_called_nothing_ran() -> None:
    for code in ("service_no_answer", "internal_error", "something_new"):
        assert after_transport_error(code).kind == "unknown"
    for code in ("service_unavailable", "invalid_message", "peer_not_allowed"):
        assert after_transport_error(code).kind == "nothing_ran"
