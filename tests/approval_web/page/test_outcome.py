"""The outcome of a proposal, from what the store holds, in the operator's words: the change
and the room, who decided and when, the outcome, the verification with its time, the next
step; never "failed" when it may have run."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any
from zoneinfo import ZoneInfo

from services.approval_web.page.outcome import from_decision, refused_click, who_words
from shared.store.approvals import ApprovalRow, Decision, ExecutionRow
from tests.approval_web.page.helpers import text_of
from tests.approval_web.page.test_card import DEVICE, row

RECORDING = {"action": "start", "device_ids": [f"{DEVICE}-1"]}
SHOWN = {f"device {DEVICE} name": "Sandbox Classroom", f"device {DEVICE} channel 1 name": "Lecture"}
VIEWER = "s-viewer"


def approval(**fields: Any) -> ApprovalRow:
    values: dict[str, Any] = {
        "id": "a-1",
        "proposal_id": "p-000000000001",
        "session_id": VIEWER,
        "card_hash": "0" * 64,
        "created_at": "2026-03-02T10:00:01.000Z",
        "expires_at": "2026-03-02T10:05:00.000Z",
        "used": True,
        "used_at": "2026-03-02T10:00:01.000Z",
        "claimed": True,
        "claimed_at": "2026-03-02T10:00:01.100Z",
        "shown_at": "2026-03-02T10:00:00.000Z",
        "facts_hash": "f" * 64,
        "facts": SHOWN,
        "ended_code": None,
    }
    values.update(fields)
    return ApprovalRow(**values)


def execution(**fields: Any) -> ExecutionRow:
    values: dict[str, Any] = {
        "id": "x-1",
        "approval_id": "a-1",
        "proposal_id": "p-000000000001",
        "started_at": "2026-03-02T10:00:01.100Z",
        "finished_at": "2026-03-02T10:00:01.900Z",
        "outcome": "ok",
        "refusal_code": None,
        "detail": None,
        "verification": "verified",
        "verified_at": "2026-03-02T10:00:05.000Z",
        "verification_detail": None,
    }
    values.update(fields)
    return ExecutionRow(**values)


def decided(
    status: str = "executed",
    *,
    kind: str | None = "approval",
    actor: str = "approval_web",
    approved: ApprovalRow | None = None,
    ran: ExecutionRow | None = None,
    detail: dict[str, Any] | None = None,
    status_code: str | None = None,
    decided_from: str | None = "page",
    uids: tuple[int, ...] = (0,),
    session: str | None = VIEWER,
    names: dict[str, str] | None = None,
) -> Decision:
    return Decision(
        proposal=row(
            "batch_recording",
            RECORDING,
            status=status,
            status_code=status_code,
            decided_at="2026-03-02T10:00:01.000Z",
            names=names,
        ),
        approval=approved,
        execution=ran,
        decided_by=actor,
        decided_kind=kind,
        decided_detail=detail or {},
        decided_from=decided_from,
        decided_uids=uids,
        decided_session=session,
    )


def test_done_names_the_change_the_room_who_when_and_the_verification_with_its_time() -> None:
    shown = from_decision(decided(approved=approval(), ran=execution()), viewer_session=VIEWER)
    assert shown.kind == "done" and shown.final
    assert text_of(shown.title) == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
    assert text_of(shown.headline) == "Done: Epiphan accepted the change."
    assert (
        text_of(shown.verification) == "Checked afterwards (10:00, in 5 seconds): Epiphan shows the change."
    )
    assert text_of(shown.decided) == (
        "Approved on the approval page by you (root), in this browser, 10:00, in 1 second."
    )
    assert text_of(shown.decided, "es").startswith(
        "Aprobado en la página de aprobación por usted (root), en este navegador, 10:00"
    )
    assert text_of(shown.next_step).startswith("Nothing more to do")
    assert text_of(shown.title, "es") == "Iniciar grabación: «Sandbox Classroom», canal 1 («Lecture»)"
    assert text_of(shown.headline, "es") == "Hecho: Epiphan aceptó el cambio."


def test_times_are_in_the_operators_zone_across_the_date_line() -> None:
    shown = from_decision(decided(approved=approval(), ran=execution()), viewer_session=VIEWER)
    kiritimati = ZoneInfo("Pacific/Kiritimati")  # UTC+14: 10:00 UTC on 2 March is 00:00 on 3 March
    later = datetime.datetime(2026, 3, 4, 9, 0, tzinfo=datetime.UTC)
    assert text_of(shown.verification, zone=kiritimati, now=later) == (
        "Checked afterwards (Tue 3 Mar, 00:00): Epiphan shows the change."
    )
    assert text_of(shown.verification, "es", zone=kiritimati, now=later) == (
        "Comprobado después (mar 3 mar, 00:00): Epiphan muestra el cambio."
    )


def test_an_error_is_a_problem_epiphan_reported_with_each_device_message_made_visible() -> None:
    ran = execution(outcome="error", detail={DEVICE: "busy\u202e"}, verification="not_observed")
    shown = from_decision(decided(approved=approval(), ran=ran), viewer_session=VIEWER)
    assert shown.kind == "problem"
    assert shown.problems == ((DEVICE, "busy⟦U+202E⟧"),)
    assert text_of(shown.next_step).startswith("Check the room")


def test_unknown_and_a_running_row_may_or_may_not_have_run_and_say_check_the_room() -> None:
    for outcome in ("unknown", "running"):
        ran = execution(outcome=outcome, verification=None, verified_at=None)
        shown = from_decision(decided(approved=approval(), ran=ran), viewer_session=VIEWER)
        assert shown.kind == "unknown"
        assert text_of(shown.headline) == "May or may not have run."
        assert "Check the room before trying again" in text_of(shown.next_step)
        assert shown.final is (outcome == "unknown")


def test_a_refusal_and_not_run_are_nothing_ran_with_the_reason_in_words() -> None:
    ran = execution(outcome="refused", refusal_code="fingerprint_changed", verification=None)
    refused = from_decision(decided("not_run", approved=approval(), ran=ran), viewer_session=VIEWER)
    assert refused.kind == "nothing_ran"
    assert text_of(refused.headline).startswith("Nothing ran: the room changed since the proposal")
    ended = from_decision(
        decided("not_run", approved=approval(claimed=False), status_code="executor_restarted"),
        viewer_session=VIEWER,
    )
    assert text_of(ended.headline) == "Nothing ran: the executor stopped before it took the approval."


def test_a_write_refused_for_the_plan_says_so_in_both_languages_not_a_generic_error() -> None:
    ran = execution(outcome="refused", refusal_code="plan_required", verification=None)
    shown = from_decision(decided("not_run", approved=approval(), ran=ran), viewer_session=VIEWER)
    assert shown.kind == "nothing_ran"
    english, spanish = text_of(shown.headline), text_of(shown.headline, "es")
    assert english.startswith("Nothing ran: Epiphan refused the change because this team's plan")
    assert "Epiphan Edge Premium" in english and "Epiphan Edge Premium" in spanish
    assert spanish.startswith("No se ejecutó nada: Epiphan rechazó el cambio porque el plan de este grupo")
    generic = execution(outcome="refused", refusal_code="epiphan_tool_error", verification=None)
    other = from_decision(decided("not_run", approved=approval(), ran=generic), viewer_session=VIEWER)
    assert text_of(other.headline) != english and "plan_required" not in english + spanish


def test_a_denial_names_the_room_the_card_showed_and_who_denied_it_by_account() -> None:
    by_page = decided(
        "denied", kind="denial", actor="page s-other", detail={"shown": SHOWN}, session="s-other"
    )
    shown = from_decision(by_page, viewer_session=VIEWER)
    assert shown.kind == "denied"
    assert text_of(shown.title) == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
    assert text_of(shown.who) == "root, on the approval page"
    assert text_of(shown.decided).startswith("Denied on the approval page by root, 10:00")
    assert text_of(shown.decided, "es").startswith("Rechazado en la página de aprobación por root, 10:00")
    by_cli = from_decision(
        decided("denied", kind="denial", actor="operator:0", decided_from="command", session=None),
        viewer_session=VIEWER,
    )
    assert text_of(by_cli.title) == f"Start recording: device {DEVICE}, channel 1"
    assert text_of(by_cli.who) == "root, from the command line"
    assert text_of(by_cli.who, "es") == "root, desde la línea de comandos"
    assert text_of(by_cli.decided).startswith("Denied from the command line by root, 10:00")


def test_the_names_recorded_with_the_proposal_name_the_room_whatever_ended_it() -> None:
    for ended in (
        decided("denied", kind="denial", actor="operator:0", decided_from="command", session=None),
        decided("expired", kind="expiry", decided_from=None, uids=(), session=None),
        decided("not_run", approved=approval(facts=None, claimed=False), status_code="executor_restarted"),
    ):
        shown = from_decision(dataclasses.replace(ended, proposal=_named(ended)), viewer_session=VIEWER)
        assert text_of(shown.title) == "Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)"
        assert text_of(shown.title, "es") == "Iniciar grabación: «Sandbox Classroom», canal 1 («Lecture»)"


def _named(ended: Decision) -> Any:
    from msgspec import structs

    return structs.replace(ended.proposal, names=SHOWN)


def test_two_approvers_are_both_named_and_a_service_never_is() -> None:
    two = decided(approved=approval(), ran=execution(), uids=(0, 0), session="s-second", actor="approval_web")
    shown = from_decision(two, viewer_session=VIEWER)
    assert text_of(shown.who) == "root and root, on the approval page"
    assert "approval_web" not in text_of(shown.decided)
    unknown = decided(approved=approval(), ran=execution(), uids=(), session="s-x", actor="approval_web")
    assert text_of(from_decision(unknown, viewer_session=VIEWER).who) == "someone, on the approval page"


def test_an_expired_proposal_was_decided_by_nobody() -> None:
    shown = from_decision(decided("expired", kind="expiry"), viewer_session=VIEWER)
    assert (shown.kind, text_of(shown.who)) == ("expired", "nobody (it expired)")


def test_a_lookalike_room_name_is_marked_with_its_device_id() -> None:
    facts = {f"device {DEVICE} name": "Sandbox Сlassroom"}  # a Cyrillic С
    shown = from_decision(decided(approved=approval(facts=facts), ran=execution()), viewer_session=VIEWER)
    assert text_of(shown.title) == (
        f"Start recording: “Sandbox Сlassroom” (look-alike letters: device {DEVICE}), channel 1"
    )


def test_a_refused_click_says_nothing_ran_for_that_click() -> None:
    shown = refused_click(None, "approval_already_used")
    assert (
        text_of(shown.headline)
        == "Nothing ran: this card was already approved once. A card runs at most once."
    )
    assert text_of(who_words(decided(uids=()), VIEWER)) == "you, in this browser"
